"""ops/scale-in.yml stops a broker only when it holds no replica (issue 16): the assignment is
re-read after the drain and right before each stop, and the drain can be run again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

from kafkakit.reassignment import drain_candidates, drained_refusal, partitions_on, plan_drain

REPO = Path(__file__).resolve().parents[2]
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
import kafkakit.admin, kafkakit.reassignment
cluster = json.load(open(sys.argv[2]))
assignment = {(t, int(p)): r for t, p, r in cluster["assignment"]}
racks = {int(b): rack for b, rack in cluster["racks"].items()}
kafkakit.admin.admin_client = lambda *a, **k: None
kafkakit.reassignment.read_cluster = lambda admin, timeout=15.0: (assignment, racks)
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
