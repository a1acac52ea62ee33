"""ops/scale-in.yml stops a broker only when it holds no replica (issue 16): the assignment is
re-read after the drain and right before each stop, and the drain can be run again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

from kafkakit.cluster.reassignment import drain_candidates, drained_refusal, partitions_on, plan_drain
from tests.unit.support.ansible_run import REPO, run_playbook

MODULE = REPO / "ansible/plugins/modules/kafka_reassignment.py"
SCALE_IN = REPO / "ansible/ops/scale-in.yml"

RACKS = {1: "az1", 2: "az2", 3: "az3", 4: "az1"}
DRAINED = {("orders", p): [1 + p % 3, 1 + (p + 1) % 3, 1 + (p + 2) % 3] for p in range(6)}
# Created during the drain: Kafka placed it on the leaving broker 4.
LATE = {**DRAINED, ("late", 0): [4, 2, 3], ("late", 1): [2, 3, 4], ("late", 10): [3, 4, 2]}


def test_a_drained_broker_may_stop() -> None:
    assert partitions_on(DRAINED, [4]) == {}
    assert drained_refusal(DRAINED, [4]) == ""


def test_a_partition_created_during_the_drain_keeps_its_broker_running() -> None:
    assert partitions_on(LATE, [4, 1]) == {1: [f"orders-{p}" for p in range(6)], 4: ["late-0", "late-1", "late-10"]}
    refusal = drained_refusal(LATE, [4])
    assert refusal.startswith("refusing to stop brokers that still hold replicas")
    assert "broker 4 holds 3: late-0, late-1, late-10." in refusal
    assert refusal.endswith("Run ops/scale-in.yml again to drain them")
    assert "\n" not in refusal


def test_a_long_list_is_cut_short() -> None:
    many = {("t", p): [4, 2, 3] for p in range(30)}
    assert "broker 4 holds 30: t-0, t-1," in drained_refusal(many, [4])
    assert "t-19 and 10 more" in drained_refusal(many, [4])


def test_a_re_run_drains_only_what_is_left_and_skips_brokers_already_stopped() -> None:
    # Broker 5 was drained and stopped by the first run: no longer registered, holds nothing.
    assert drain_candidates(LATE, RACKS, [4, 5]) == [4]
    plan, moves = plan_drain(LATE, RACKS, drain_candidates(LATE, RACKS, [4, 5]))
    assert sorted(m.partition for m in moves) == [("late", 0), ("late", 1), ("late", 10)]
    assert partitions_on(plan, [4]) == {}
    # A stopped broker that still holds replicas is not "gone": the plan has to see it.
    stopped = {**LATE, ("late", 2): [5, 2, 3]}
    assert drain_candidates(stopped, RACKS, [4, 5]) == [4, 5]
    assert drain_candidates(DRAINED, RACKS, [5]) == []


# --- the module, with the cluster read replaced by a fixed assignment --------------------------

RUNNER = """\
import json, runpy, sys
import kafkakit.cluster.admin, kafkakit.cluster.reassignment
cluster = json.load(open(sys.argv[2]))
assignment = {(t, int(p)): r for t, p, r in cluster["assignment"]}
racks = {int(b): rack for b, rack in cluster["racks"].items()}
kafkakit.cluster.admin.admin_client = lambda *a, **k: None
kafkakit.cluster.reassignment.read_cluster = lambda admin, timeout=15.0: (assignment, racks)
sys.argv = [sys.argv[1], sys.argv[3]]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def run_module(tmp_path: Path, cluster: dict, args: dict) -> dict:
    (tmp_path / "runner.py").write_text(RUNNER)
    (tmp_path / "cluster.json").write_text(
        json.dumps({"assignment": [[t, p, r] for (t, p), r in cluster.items()], "racks": RACKS})
    )
    (tmp_path / "args.json").write_text(json.dumps({"ANSIBLE_MODULE_ARGS": {"bootstrap_servers": "x:1", **args}}))
    done = subprocess.run(
        [
            sys.executable,
            str(tmp_path / "runner.py"),
            str(MODULE),
            str(tmp_path / "cluster.json"),
            str(tmp_path / "args.json"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "PYTHONPATH": str(REPO / "src")},
    )
    return json.loads(done.stdout)


def test_the_module_refuses_a_broker_that_holds_replicas(tmp_path: Path) -> None:
    result = run_module(tmp_path, LATE, {"state": "drained", "brokers": [4]})
    assert result.get("failed") and "broker 4 holds 3: late-0, late-1, late-10" in result["msg"], result
    assert result["holding"] == {"4": ["late-0", "late-1", "late-10"]}


def test_the_module_passes_a_drained_broker(tmp_path: Path) -> None:
    result = run_module(tmp_path, DRAINED, {"state": "drained", "brokers": [4]})
    assert not result.get("failed") and result["holding"] == {} and not result["changed"], result


def test_the_module_drain_plan_on_a_re_run(tmp_path: Path) -> None:
    # 4 still has the late partitions, 5 is gone: only 4's partitions move.
    result = run_module(tmp_path, LATE, {"state": "drain", "brokers": [4, 5]})
    assert not result.get("failed"), result
    assert result["brokers"] == [4] and result["moves"] == 3
    # Everything already drained and stopped: an empty plan, not an error.
    result = run_module(tmp_path, DRAINED, {"state": "drain", "brokers": [5]})
    assert not result.get("failed") and result["moves"] == 0, result


# --- the playbook: the check sits right before the stop --------------------------------------


def test_every_stop_comes_right_after_a_drained_check_of_the_same_broker() -> None:
    plays = yaml.safe_load(SCALE_IN.read_text())
    names = [p["name"] for p in plays]
    stop_plays = [p for p in plays if any("ansible.builtin.systemd_service" in t for t in p.get("tasks", []))]
    assert len(stop_plays) == 1
    stop = stop_plays[0]
    assert stop["serial"] == 1 and stop["any_errors_fatal"] is True
    tasks = stop["tasks"]
    i = next(i for i, t in enumerate(tasks) if "ansible.builtin.systemd_service" in t)
    check = tasks[i - 1]["kafka_reassignment"]
    assert check["state"] == "drained" and check["brokers"] == ["{{ broker_id }}"]
    assert not any(k in tasks[i - 1] for k in ("ignore_errors", "failed_when", "when"))
    # ...and every leaving broker was checked, all together, before any stops.
    before = plays[names.index(stop["name"]) - 1]
    assert before["any_errors_fatal"] is True and "serial" not in before
    assert before["tasks"][0]["kafka_reassignment"]["state"] == "drained"
    assert before["hosts"] == stop["hosts"]


# --- the playbook end to end: the real kafka_reassignment on a scripted cluster ----------------
# The cluster-facing modules are replaced through ANSIBLE_LIBRARY: kafka_cluster_health reports
# healthy, kafka_reassignment is the real module reading `views` (one assignment per call, the
# last repeated) instead of a cluster. Hosts sit at a closed port on loopback, so the only task
# that contacts one, the stop, shows up as unreachable: proof it was attempted.

FAKE_HEALTH = """\
from ansible.module_utils.basic import AnsibleModule
names = (
    "bootstrap_servers", "client_config", "expect_brokers", "metadata_mode", "timeout", "wait_for_ports", "restarted"
)
AnsibleModule(argument_spec={n: {"type": "raw"} for n in names}).exit_json(changed=False)
"""

FAKE_REASSIGNMENT = """\
import json, runpy
from pathlib import Path
from ansible.module_utils.basic import AnsibleModule  # noqa: F401 (marks a new-style module)
import kafkakit.cluster.admin, kafkakit.cluster.reassignment
calls = Path(CALLS)
n = int(calls.read_text()) if calls.exists() else 0
calls.write_text(str(n + 1))
views = json.loads(Path(VIEWS).read_text())
view = views[min(n, len(views) - 1)]
assignment = {(t, int(p)): r for t, p, r in view}
racks = {1: "az1", 2: "az2", 3: "az3", 4: "az1"}
kafkakit.cluster.admin.admin_client = lambda *a, **k: None
kafkakit.cluster.reassignment.read_cluster = lambda admin, timeout=15.0: (assignment, racks)
runpy.run_path(MODULE, run_name="__main__")
"""


def run_scale_in(tmp_path: Path, views: list[dict]) -> subprocess.CompletedProcess[str]:
    lib = tmp_path / "library"
    lib.mkdir()
    (lib / "kafka_cluster_health.py").write_text(FAKE_HEALTH)
    (tmp_path / "views.json").write_text(json.dumps([[[t, p, r] for (t, p), r in v.items()] for v in views]))
    (lib / "kafka_reassignment.py").write_text(
        f"CALLS = {str(tmp_path / 'calls')!r}\nVIEWS = {str(tmp_path / 'views.json')!r}\nMODULE = {str(MODULE)!r}\n"
        + FAKE_REASSIGNMENT
    )
    hosts = {
        f"dc1-kafka{i}": {"dc": "dc1", "broker_id": i, "private_ip": f"10.99.0.1{i}", "kafka_rack": f"dc1-az{i % 3}"}
        for i in (1, 2, 3, 4)
    }
    inv = {
        "all": {
            "vars": {
                "kafka_admin_password": "placeholder",
                "kafka_pki_ca_dir": str(tmp_path / "pki"),
                "ansible_host": "127.0.0.1",
                "ansible_port": 1,
                "ansible_connection": "ssh",
            },
            "children": {"dc1": {"hosts": hosts}, "kafka_broker": {"hosts": dict.fromkeys(hosts, {})}},
        }
    }
    (tmp_path / "hosts.yml").write_text(yaml.safe_dump(inv))
    return run_playbook(
        tmp_path / "hosts.yml",
        "ops/scale-in.yml",
        "-e",
        json.dumps({"scale_in_hosts": ["dc1-kafka4"]}),
        tmp_path=tmp_path,
        timeout=180,
        env={"ANSIBLE_LIBRARY": f"{lib}:{MODULE.parent}"},
    )


def stop_attempted(stdout: str) -> bool:
    after = stdout.split("TASK [Stop and disable the broker", 1)
    return len(after) == 2 and "dc1-kafka4" in after[1].split("PLAY RECAP", 1)[0]


def test_a_partition_created_during_the_drain_stops_the_playbook_before_any_stop(tmp_path: Path) -> None:
    # The plan saw broker 4 empty; the re-read after the drain finds the new topic on it.
    done = run_scale_in(tmp_path, [DRAINED, LATE])
    assert done.returncode != 0, done.stdout
    assert "broker 4 holds 3: late-0, late-1, late-10" in done.stdout, done.stdout
    assert "PLAY [Stop the drained brokers]" not in done.stdout
    assert not stop_attempted(done.stdout)


def test_a_partition_created_after_the_check_is_caught_right_before_the_stop(tmp_path: Path) -> None:
    done = run_scale_in(tmp_path, [DRAINED, DRAINED, LATE])
    assert done.returncode != 0, done.stdout
    assert "PLAY [Stop the drained brokers]" in done.stdout
    assert "broker 4 holds 3: late-0, late-1, late-10" in done.stdout, done.stdout
    assert not stop_attempted(done.stdout)


def test_a_drained_broker_is_stopped(tmp_path: Path) -> None:
    # Positive control: the same run on a cluster that stays drained reaches the stop.
    done = run_scale_in(tmp_path, [DRAINED])
    assert stop_attempted(done.stdout), done.stdout
    assert int((tmp_path / "calls").read_text()) == 3  # plan, check after the drain, check before the stop
