"""Kafka's own definitions, read from the archives in build/artifacts (`make artifacts`): a small
Java program run with java's single-file source launcher against the jars it needs, so a table the
kit keeps can be compared with what the broker of each release itself says."""

from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
ARCHIVES = sorted((ROOT / "build" / "artifacts").glob("kafka_2.13-*.tgz"))
MISSING = "no Kafka archive in build/artifacts, or no java"

needs_archives = pytest.mark.skipif(not ARCHIVES or not shutil.which("java"), reason=MISSING)
each_archive = pytest.mark.parametrize("archive", ARCHIVES, ids=[a.name for a in ARCHIVES])
# The KRaft-only releases' archives (4.x): their tools are the ones the comparisons need.
ARCHIVES_4X = [a for a in ARCHIVES if a.name.startswith("kafka_2.13-4.")]
each_4x_archive = pytest.mark.parametrize("archive", ARCHIVES_4X, ids=[a.name for a in ARCHIVES_4X])


def assert_ci_has_archives() -> None:
    """`make test` fetches the archives first (make lab): there, the comparisons must run."""
    if os.environ.get("CI"):
        assert ARCHIVES and shutil.which("java"), MISSING


def run_java(archive: Path, jars: tuple[str, ...], name: str, source: str, tmp_path: Path, stdin: str = "") -> str:
    """The stdout of class `name` (its code in `source`) run against the archive's libs/ jars whose
    names start with one of `jars` (Kafka's own and what they load: the rest is 100 MB more)."""
    with tarfile.open(archive) as tar:
        members = [m for m in tar.getmembers() if "/libs/" in m.name and m.name.rsplit("/", 1)[1].startswith(jars)]
        tar.extractall(tmp_path, members=members, filter="data")
    program = tmp_path / f"{name}.java"
    program.write_text(source)
    libs = next(tmp_path.glob("*/libs"))
    done = subprocess.run(
        ["java", "-cp", f"{libs}/*", str(program)], input=stdin, capture_output=True, text=True, timeout=120, check=True
    )
    return done.stdout
