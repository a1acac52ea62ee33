"""The Kafka archives assembled from Maven Central (ansible/artifacts): 3.x and 4.x are different jar
sets, each pinned by its lock file; build.sh picks the pom by the major version."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "ansible" / "artifacts"
POM_NS = {"m": "http://maven.apache.org/POM/4.0.0"}
KAFKA4 = ["4.3.1", "4.4.0"]  # the KRaft upgrade test goes 4.3.1 -> 4.4.0
# Maven Central serves no connect-mirror 4.4.0: that archive has no MirrorMaker 2 (build.sh).
WITHOUT_MIRROR = {"4.4.0"}


def jars(version: str) -> list[str]:
    lines = (ARTIFACTS / f"kafka-{version}.sha256").read_text().splitlines()
    return [line.split()[1] for line in lines]


@pytest.mark.parametrize("version", KAFKA4)
def test_a_kafka_4_archive_holds_the_kraft_server_and_its_tools(version: str) -> None:
    names = jars(version)
    for artifact in (
        "kafka_2.13",
        "kafka-clients",
        "kafka-server",
        "kafka-server-common",
        "kafka-storage",
        "kafka-metadata",
        "kafka-raft",
        "kafka-tools",
        "kafka-share-coordinator",
        "connect-runtime",
    ):
        assert f"{artifact}-{version}.jar" in names, artifact
    mirror = {f"connect-mirror-{version}.jar", f"connect-mirror-client-{version}.jar"} & set(names)
    assert len(mirror) == (0 if version in WITHOUT_MIRROR else 2), mirror
    # 4.x: Scala 2.13 only, no ZooKeeper, no reload4j.
    assert not [n for n in names if "_2.12" in n or n.startswith(("zookeeper", "reload4j", "slf4j-reload4j"))]


@pytest.mark.parametrize("version", KAFKA4)
def test_a_kafka_4_archive_logs_through_one_log4j2_release(version: str) -> None:
    names = jars(version)
    log4j = {m.group(1): m.group(2) for n in names if (m := re.fullmatch(r"(log4j-[a-z0-9.-]+?)-(2\.[\d.]+)\.jar", n))}
    # slf4j 1.7 (Kafka's logging API) -> log4j2, and the log4j 1.2 bridge for old-style configs.
    assert set(log4j) == {"log4j-api", "log4j-core", "log4j-slf4j-impl", "log4j-1.2-api"}
    assert len(set(log4j.values())) == 1, log4j
    assert [n for n in names if n.startswith("slf4j-api-1.7.")], "log4j-slf4j-impl binds slf4j 1.x only"
    # log4j2 reads Kafka 4's YAML configuration through Jackson.
    assert [n for n in names if n.startswith("jackson-dataformat-yaml-")]


@pytest.mark.parametrize("version", ["3.9.1", "3.9.2"])
def test_the_zookeeper_mode_archives_keep_their_jar_set(version: str) -> None:
    names = jars(version)
    assert f"kafka_2.13-{version}.jar" in names and "reload4j-1.2.25.jar" in names
    assert not [n for n in names if n.startswith("log4j-")]


def run_build(tmp_path: Path, version: str) -> tuple[subprocess.CompletedProcess[str], str]:
    """build.sh in a copy of the tree with a fake mvn that records the pom it was given."""
    here = tmp_path / "ansible" / "artifacts"
    shutil.copytree(ARTIFACTS, here)
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "mvn").write_text(
        '#!/bin/sh\necho "$@" > "$FAKE_POM.args"\n'
        'while [ $# -gt 0 ]; do case $1 in -f) echo "$2" > "$FAKE_POM";; '
        '-DoutputDirectory=*) mkdir -p "${1#-DoutputDirectory=}" && touch "${1#-DoutputDirectory=}/x.jar";; esac; '
        "shift; done\n"
    )
    (fake / "mvn").chmod(0o755)
    record = tmp_path / "pom-used"
    done = subprocess.run(
        [str(here / "build.sh"), "kafka", version],
        env={**os.environ, "PATH": f"{fake}:{os.environ['PATH']}", "FAKE_POM": str(record)},
        capture_output=True,
        text=True,
        check=False,
    )
    return done, record.read_text().strip() if record.exists() else ""


@pytest.mark.parametrize("version, pom", [("3.9.2", "kafka-pom.xml"), ("4.3.1", "kafka4-pom.xml")])
def test_build_picks_the_pom_by_major_version(tmp_path: Path, version: str, pom: str) -> None:
    done, used = run_build(tmp_path, version)
    assert Path(used).name == pom, done.stderr
    # The fake jar is not in the lock file: the build refuses it.
    assert done.returncode == 1 and "does not match the pinned" in done.stderr


@pytest.mark.parametrize("version", KAFKA4)
def test_build_passes_the_log4j2_release_of_the_lock_and_leaves_out_what_is_not_served(
    tmp_path: Path, version: str
) -> None:
    run_build(tmp_path, version)
    args = (tmp_path / "pom-used.args").read_text().split()
    (log4j,) = {n.rsplit("-", 1)[1].removesuffix(".jar") for n in jars(version) if n.startswith("log4j-core-")}
    pom = ET.parse(ARTIFACTS / "kafka4-pom.xml").getroot()
    default = pom.find("m:properties/m:log4j2.version", POM_NS).text
    assert (f"-Dlog4j2.version={log4j}" in args) == (log4j != default), args
    assert ("-Dkafka.without.mirror" in args) == (version in WITHOUT_MIRROR), args


def test_the_kafka4_pom_names_mirrormaker_only_in_its_profile() -> None:
    pom = ET.parse(ARTIFACTS / "kafka4-pom.xml").getroot()
    top = [d.find("m:artifactId", POM_NS).text for d in pom.findall("m:dependencies/m:dependency", POM_NS)]
    (profile,) = pom.findall("m:profiles/m:profile", POM_NS)
    assert "connect-mirror" not in top and "connect-runtime" in top
    assert [d.find("m:artifactId", POM_NS).text for d in profile.findall("m:dependencies/m:dependency", POM_NS)] == [
        "connect-mirror"
    ]
    assert profile.find("m:activation/m:property/m:name", POM_NS).text == "!kafka.without.mirror"


def test_build_refuses_a_kafka_major_it_has_no_pom_for(tmp_path: Path) -> None:
    done, used = run_build(tmp_path, "5.0.0")
    assert done.returncode == 2 and used == ""
    assert "unsupported Kafka version: 5.0.0 (3.x or 4.x)" in done.stderr


def test_the_labs_mirrormaker_runs_a_release_whose_archive_carries_it() -> None:
    """dc2 runs 4.4.0, whose Maven-assembled archive has no MirrorMaker 2: its MM2 hosts run another."""
    import yaml

    dc2 = yaml.safe_load((ROOT / "inventories/local/group_vars/dc2.yml").read_text())
    release = str(dc2.get("mirrormaker_kafka_version", dc2["kafka_version"]))
    assert f"connect-mirror-{release}.jar" in jars(release), f"the lab's MirrorMaker 2 runs {release}, no MM2 in it"
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(rf"^KAFKA_PREVIOUS\s*\?=\s*{re.escape(release)}$", makefile, re.M), "make artifacts builds it"


def test_the_labs_connect_workers_run_a_release_that_carries_their_connectors() -> None:
    """A connector of connect-mirror's (the heartbeat) needs a release whose archive has the jar."""
    import yaml

    dc1 = yaml.safe_load((ROOT / "inventories/local/group_vars/dc1.yml").read_text())
    kafka_common = yaml.safe_load((ROOT / "roles/kafka_common/defaults/main.yml").read_text())
    release = str(dc1.get("kafka_connect_version", kafka_common["kafka_kraft_version"]))
    mirror = [c["name"] for c in dc1["kafka_connectors"] if c["class"].startswith("org.apache.kafka.connect.mirror.")]
    assert mirror, "the lab declares a connect-mirror connector (the heartbeat)"
    assert f"connect-mirror-{release}.jar" in jars(release), f"{mirror} on Connect {release}: no connect-mirror"
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(rf"^KAFKA_PREVIOUS\s*\?=\s*{re.escape(release)}$", makefile, re.M), "make artifacts builds it"
