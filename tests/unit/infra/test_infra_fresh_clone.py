"""`pulumi up` from a fresh clone: the virtualenv Pulumi builds must be enough to run infra/.

With `runtime: python`, `toolchain: pip` and `virtualenv: .venv`, Pulumi creates the venv (beside
Pulumi.yaml) the first time it runs, then runs `python -m pip install -r requirements.txt` in the
*program* directory: `main: infra/` makes that infra/, so the file is infra/requirements.txt (none
there: Pulumi installs nothing more). The program then runs from that directory. A clone has no
`pip install -e .` and no build/, so whatever the program imports must come from that one file
or from the clone itself.

This test does the same: the tracked files copied to a new directory, a new venv, the file Pulumi
would install, then the program under mocks and the policy pack in that venv. Nothing of this
test's own environment reaches it (no system site-packages, no PYTHONPATH). `pip --no-compile`
only skips writing bytecode, which Python does on import anyway; it saves most of the install.
"""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from stack_harness import ROOT

STACK = "small"
POLICY_PACK = Path("infra/policy")  # `--policy-pack infra/policy` in the deploy workflow


@dataclass(frozen=True)
class Clone:
    root: Path
    project: str
    program_dir: Path
    python: Path
    env: dict[str, str]


def copy_tracked_files(dest: Path) -> None:
    """What `git clone` would check out: the tracked files, as they are in the work tree."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, check=True, capture_output=True).stdout
    for rel in filter(None, listed.decode().split("\0")):
        src = ROOT / rel
        if not src.is_symlink() and not src.exists():
            continue  # deleted in the work tree, not yet in the index
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest / rel, follow_symlinks=False)


def program_directory(root: Path, main: str | None) -> Path:
    """Pulumi's working directory for the program: `main` if a directory, else its parent."""
    target = root / (main or ".")
    return target if target.is_dir() else target.parent


def isolated_env(venv: Path) -> dict[str, str]:
    """This process's environment (proxies, pip's cache and index settings) as Pulumi's
    "activated" venv sees it, without anything that would point Python elsewhere."""
    dropped = ("VIRTUAL_ENV", "PULUMI_CONFIG")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON") and k not in dropped}
    env["VIRTUAL_ENV"] = str(venv)
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"
    return env


def pulumi_config(stack_file: Path) -> str:
    """PULUMI_CONFIG as Pulumi passes a stack's config: strings as they are, the rest as JSON."""
    config = yaml.safe_load(stack_file.read_text())["config"]
    return json.dumps({k: v if isinstance(v, str) else json.dumps(v) for k, v in config.items()})


def run(cmd: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600, **kwargs)


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Clone]:
    root = tmp_path_factory.mktemp("clone")
    copy_tracked_files(root)
    project = yaml.safe_load((root / "Pulumi.yaml").read_text())
    venv = root / project["runtime"]["options"]["virtualenv"]
    program_dir = program_directory(root, project.get("main"))
    env = isolated_env(venv)

    made = run([sys.executable, "-m", "venv", str(venv)], env=env)
    assert made.returncode == 0, made.stderr
    python = venv / "bin" / "python"
    if (program_dir / "requirements.txt").exists():
        pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-compile"]
        installed = run([*pip, "-r", "requirements.txt"], cwd=program_dir, env=env)
        assert installed.returncode == 0, installed.stderr
    yield Clone(root, project["name"], program_dir, python, env)
    shutil.rmtree(venv)  # a few hundred MB; pytest keeps its last three temporary directories


def test_the_program_runs_in_the_venv_pulumi_builds(clone: Clone, tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    driver = clone.root / "tests" / "unit" / "infra" / "run_program.py"
    env = {**clone.env, "PULUMI_CONFIG": pulumi_config(clone.root / f"Pulumi.{STACK}.yaml")}
    ran = run(
        [str(clone.python), str(driver), str(clone.program_dir), clone.project, STACK, str(out)],
        cwd=clone.program_dir,
        env=env,
    )
    assert ran.returncode == 0, ran.stderr[-4000:]

    report = json.loads(out.read_text())
    assert report["exported"] == ["inventory", "dataCentres", "peeringConnectionIds"]
    assert report["resources"]["aws:ec2/instance:Instance"] == 19
    # The project came from the clone, Pulumi from the venv built for it, nothing from here.
    for module in ("infra", "kafkakit"):
        assert Path(report["modules"][module]).is_relative_to(clone.root), report["modules"]
    venv = clone.python.parent.parent
    for module in ("pulumi", "pulumi_aws"):
        assert Path(report["modules"][module]).is_relative_to(venv), report["modules"]
    ours = (*site.getsitepackages(), site.getusersitepackages(), str(ROOT))
    leaks = [p for p in report["sys_path"] if p.startswith(ours) and not Path(p).is_relative_to(clone.root)]
    assert not leaks, report["sys_path"]


def test_the_policy_pack_starts_in_the_same_venv(clone: Clone) -> None:
    pack = clone.root / POLICY_PACK
    options = yaml.safe_load((pack / "PulumiPolicy.yaml").read_text())["runtime"]["options"]
    assert (pack / options["virtualenv"]).resolve() == clone.python.parent.parent.resolve()
    # As Pulumi starts an analyzer: `python -u -m pulumi.policy <engine> <pack dir>`, in the pack
    # directory; the pack answers with its gRPC port on the first line.
    proc = subprocess.Popen(
        [str(clone.python), "-u", "-m", "pulumi.policy", "127.0.0.1:0", str(pack)],
        cwd=pack,
        env=clone.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline() if proc.stdout else ""
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert line.strip().isdigit(), proc.stderr.read()[-4000:] if proc.stderr else ""
