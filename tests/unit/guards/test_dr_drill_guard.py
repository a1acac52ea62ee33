"""ops/dr-drill.yml takes a data centre down only when the operator names it (issue 16): the
guard as a function, then the playbook's first play through ansible-playbook on an inventory
whose hosts can only be reached at a closed port on loopback."""

from __future__ import annotations

import copy
import subprocess
from pathlib import Path

import pytest
import yaml

from kafkakit.guards.operations import dr_drill_refusal, dr_drill_victims
from tests.unit.support.ansible_run import failure_text as failure_msg
from tests.unit.support.ansible_run import run_playbook

GOOD = Path(__file__).parents[1] / "fixtures" / "preflight_good.yml"

GROUPS = {
    "all": ["dc1-kafka1", "dc1-kafka2", "dc1-zk1", "dc2-kafka1", "dc1-spark"],
    "kafka_broker": ["dc1-kafka1", "dc1-kafka2", "dc2-kafka1"],
    "zookeeper": ["dc1-kafka1", "dc1-zk1", "dc2-kafka1"],
    "dc1": ["dc1-kafka1", "dc1-kafka2", "dc1-zk1", "dc1-spark"],
    "dc2": ["dc2-kafka1"],
}
DC1 = "dc1-kafka1, dc1-kafka2, dc1-zk1"


def test_the_victims_are_the_source_brokers_and_zookeeper_servers_once_each() -> None:
    assert dr_drill_victims(GROUPS, "dc1") == ["dc1-kafka1", "dc1-kafka2", "dc1-zk1"]
    assert dr_drill_victims(GROUPS, "dc3") == []


@pytest.mark.parametrize(
    ("source", "target", "confirmation", "message"),
    [
        ("dc1", "dc2", "dc1", ""),
        ("dc1", "dc2", " dc1 ", ""),
        ("dc2", "dc1", "dc2", ""),
        # Not confirmed: refused, naming every host it would stop and the confirmation.
        (
            "dc1",
            "dc2",
            "",
            f"refusing to run the DR drill: it SIGKILLs and stops every broker and ZooKeeper "
            f"server of dc1, 3 host(s) {DC1}, and dc1 serves nothing until the drill brings it back; "
            "to go ahead, name the data centre: -e dr_drill_confirm=dc1",
        ),
        ("dc1", "dc2", None, "-e dr_drill_confirm=dc1"),
        # Another data centre, a truthy value, a prefix: not the source's name.
        (
            "dc1",
            "dc2",
            "dc2",
            f"dr_drill_confirm=dc2 does not name the data centre this drill takes down: dc1 (3 host(s) {DC1})",
        ),
        ("dc1", "dc2", True, "dr_drill_confirm=True does not name"),
        ("dc1", "dc2", "yes", "dr_drill_confirm=yes does not name"),
        ("dc1", "dc2", "dc", "dr_drill_confirm=dc does not name"),
        # Nothing to drill, or nowhere to fail over to.
        ("dc3", "dc2", "dc3", "dr_source=dc3 has no broker or ZooKeeper server in this inventory"),
        ("dc1", "dc1", "dc1", "dr_source and dr_target are both dc1"),
    ],
)
def test_dr_drill_guard(source: str, target: str, confirmation: object, message: str) -> None:
    refusal = dr_drill_refusal(source, target, confirmation, GROUPS)
    if message:
        assert message in refusal
        assert "\n" not in refusal
    else:
        assert refusal == ""


# --- the playbook ------------------------------------------------------------------------------


def run_drill(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    inv = yaml.safe_load(GOOD.read_text())
    # Should any play after the guard reach a host, it finds a closed port on loopback.
    for dc in ("dc1", "dc2"):
        inv["all"]["children"][dc]["vars"].update(ansible_host="127.0.0.1", ansible_port=1, ansible_connection="ssh")
    path = tmp_path / "hosts.yml"
    path.write_text(yaml.safe_dump(copy.deepcopy(inv), sort_keys=False))
    return run_playbook(path, "ops/dr-drill.yml", *args, tmp_path=tmp_path)


def plays(stdout: str) -> list[str]:
    return [line.split("]")[0] + "]" for line in stdout.splitlines() if line.startswith("PLAY [")]


GUARD_PLAY = "PLAY [Drill, step 0 - the operator names the data centre it takes down]"
DC1_HOSTS = "dc1-kafka1, dc1-kafka2, dc1-kafka3"  # the fixture's dc1: brokers that are ZooKeeper servers too


def test_without_confirmation_the_drill_stops_before_any_host(tmp_path: Path) -> None:
    done = run_drill(tmp_path)
    assert done.returncode != 0, done.stdout
    msg = failure_msg(done.stdout)
    assert msg.startswith("refusing to run the DR drill") and DC1_HOSTS in msg, msg
    assert "-e dr_drill_confirm=dc1" in msg
    assert plays(done.stdout) == [GUARD_PLAY], done.stdout
    assert "dc1-kafka1" not in done.stdout.split("PLAY RECAP", 1)[1]


def test_a_confirmation_naming_another_data_centre_is_refused(tmp_path: Path) -> None:
    done = run_drill(tmp_path, "-e", "dr_drill_confirm=dc2")
    assert done.returncode != 0, done.stdout
    assert failure_msg(done.stdout).startswith("dr_drill_confirm=dc2 does not name the data centre"), done.stdout
    assert plays(done.stdout) == [GUARD_PLAY]


def test_the_source_named_by_extra_vars_is_the_one_to_confirm(tmp_path: Path) -> None:
    done = run_drill(tmp_path, "-e", "dr_source=dc2", "-e", "dr_target=dc1", "-e", "dr_drill_confirm=dc1")
    assert done.returncode != 0, done.stdout
    assert "does not name the data centre this drill takes down: dc2 (2 host(s) dc2-kafka1, dc2-kafka2)" in (
        failure_msg(done.stdout)
    )


def test_the_right_confirmation_passes_the_guard(tmp_path: Path) -> None:
    # Positive control: only the guard runs (--tags; it is tagged always), and it passes.
    done = run_drill(tmp_path, "-e", "dr_drill_confirm=dc1", "--tags", "dr_drill_guard")
    assert done.returncode == 0, done.stdout + done.stderr
    flat = " ".join(done.stdout.split())  # the yaml callback wraps long messages
    assert f"confirmed: the drill stops {DC1_HOSTS} and fails over to dc2" in flat, done.stdout
    recap = done.stdout.split("PLAY RECAP", 1)[1]
    assert "localhost" in recap and "failed=0" in recap
