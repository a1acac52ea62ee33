"""ops/migrate-to-kraft.yml and ops/rollback-to-zookeeper.yml refuse a bad request on localhost,
with one message naming every problem, before any host is contacted; a good request gets past that
check (the positive control: the fixture's hosts do not exist, so the run fails later, elsewhere)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from tests.unit.support.ansible_run import failure_msg, run_playbook

GOOD = Path(__file__).parent / "fixtures" / "preflight_good.yml"
MIGRATE = "ops/migrate-to-kraft.yml"
ROLLBACK = "ops/rollback-to-zookeeper.yml"


@pytest.fixture(scope="module")
def inventory() -> dict:
    """The preflight fixture with three target controllers in dc1, as the lab's dc3 has."""
    inv = yaml.safe_load(GOOD.read_text())
    children = inv["all"]["children"]
    controllers = {
        f"dc1-controller{i}": {
            "dc": "dc1",
            "kafka_rack": f"dc1-az{i}",
            "private_ip": f"10.99.0.7{i}",
            "node_id": 100 + i,
        }
        for i in (1, 2, 3)
    }
    children["dc1"]["hosts"].update(copy.deepcopy(controllers))
    children["kafka_controller"] = {"hosts": {name: {} for name in controllers}}
    return inv


def run(inv: dict, tmp_path: Path, playbook: str, *extra: str) -> tuple[str, str]:
    path = tmp_path / "hosts.yml"
    path.write_text(yaml.safe_dump(inv, sort_keys=False))
    done = run_playbook(path, playbook, *extra, tmp_path=tmp_path)
    out = done.stdout + done.stderr
    assert done.returncode != 0, out  # a bad request is refused; a good one fails on the absent hosts
    return done.stdout, out


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        ((), ["no data centre given"]),
        (("-e", "kraft_migrate_dc=dc9"), ["'dc9' is no data centre of the inventory"]),
        (("-e", "kraft_migrate_dc=dc2"), ["'dc2' lists no kafka_controller hosts"]),
        (
            ("-e", "kraft_migrate_dc=dc1", "-e", "kraft_migrate_to=finalized", "-e", "kraft_finalize=true"),
            ["kraft_migrate_to=finalized is none of", "finalizing goes through dual-write"],
        ),
    ],
    ids=["no-dc", "unknown-dc", "no-controllers", "bad-stop-and-finalize"],
)
def test_a_bad_migration_request_is_refused_before_any_host(inventory, tmp_path, extra, says):
    stdout, out = run(inventory, tmp_path, MIGRATE, *extra)
    msg = str(failure_msg(stdout))
    assert all(s in msg for s in says) and "Usage: -e kraft_migrate_dc=<dc>" in msg, msg
    assert "PLAY [Preflight checks]" not in stdout, out[-2000:]


def test_a_kraft_dc_is_refused(inventory, tmp_path):
    inv = copy.deepcopy(inventory)
    inv["all"]["children"]["dc1"]["vars"]["kafka_metadata_mode"] = "kraft"
    stdout, _ = run(inv, tmp_path, MIGRATE, "-e", "kraft_migrate_dc=dc1")
    assert "'dc1' already says kafka_metadata_mode: kraft" in str(failure_msg(stdout))


def test_a_good_migration_request_gets_past_the_check(inventory, tmp_path):
    stdout, out = run(inventory, tmp_path, MIGRATE, "-e", "kraft_migrate_dc=dc1", "-e", "kraft_migrate_to=controllers")
    assert "PLAY [Preflight checks]" in stdout, out[-2000:]
    assert "Usage:" not in out


def test_an_unconfirmed_rollback_is_refused_and_a_confirmed_one_gets_past_the_check(inventory, tmp_path):
    stdout, out = run(inventory, tmp_path, ROLLBACK, "-e", "kraft_rollback_dc=dc1", "-e", "kraft_rollback_confirm=dc2")
    msg = str(failure_msg(stdout))
    assert "kraft_rollback_confirm=dc2 does not confirm kraft_rollback_dc=dc1" in msg, msg
    assert "PLAY [Preflight checks]" not in stdout
    stdout, out = run(inventory, tmp_path, ROLLBACK, "-e", "kraft_rollback_dc=dc1", "-e", "kraft_rollback_confirm=dc1")
    assert "PLAY [Preflight checks]" in stdout and "Usage:" not in out, out[-2000:]
