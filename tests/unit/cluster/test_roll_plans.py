"""kafkakit.cluster.roll: each service's health gate and restart order, on outputs recorded from the lab's
real tools (tests/unit/fixtures/roll: ZooKeeper's `srvr` through zookeeper-4lw, `kafka-metadata-quorum
describe --replication`), and the filters of ansible/plugins/filter/roll.py fed what the roles register."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkakit.cluster.roll import (
    broker_plan,
    connect_plan,
    controller_plan,
    ran_since_boot,
    spark_plan,
    zookeeper_mode,
    zookeeper_plan,
)
from tests.unit.support import plugin_files

FIXTURES = Path(__file__).parents[1] / "fixtures" / "roll"
LEADER = (FIXTURES / "srvr-leader.txt").read_text()
FOLLOWER = (FIXTURES / "srvr-follower.txt").read_text()
# What ZooKeeper answers `srvr` while it is not part of a quorum.
NOT_SERVING = "This ZooKeeper instance is not currently serving requests\n"
REPLICATION = (FIXTURES / "quorum-replication.txt").read_text()
ZK_HOSTS = ["dc1-kafka1", "dc1-kafka2", "dc1-kafka3"]


def test_zookeeper_mode_from_recorded_srvr_answers() -> None:
    assert zookeeper_mode(LEADER) == "leader"
    assert zookeeper_mode(FOLLOWER) == "follower"
    assert zookeeper_mode(NOT_SERVING) == ""
    assert zookeeper_mode("") == ""


@pytest.mark.parametrize("leader", ZK_HOSTS)
def test_the_zookeeper_leader_restarts_last_and_only_once(leader: str) -> None:
    answers = {h: LEADER if h == leader else FOLLOWER for h in ZK_HOSTS}
    plan = zookeeper_plan("dc1", ZK_HOSTS, answers)
    assert plan.problems == []
    assert plan.order == [h for h in ZK_HOSTS if h != leader] + [leader]
    assert plan.leaders == [leader]


def test_a_zookeeper_roll_of_some_servers_keeps_the_leader_last() -> None:
    answers = {"dc1-kafka1": LEADER, "dc1-kafka2": FOLLOWER, "dc1-kafka3": FOLLOWER}
    plan = zookeeper_plan("dc1", ["dc1-kafka1", "dc1-kafka3"], answers)
    assert plan.order == ["dc1-kafka3", "dc1-kafka1"]
    # The healthy control for the refusals below: the same ensemble, all serving, one leader.
    assert plan.problems == []


def test_a_zookeeper_server_not_serving_or_a_second_leader_refuses_the_roll() -> None:
    down = zookeeper_plan("dc1", ZK_HOSTS, {"dc1-kafka1": LEADER, "dc1-kafka2": NOT_SERVING, "dc1-kafka3": ""})
    assert down.problems == ["dc1: ZooKeeper servers not serving ['dc1-kafka2', 'dc1-kafka3']"]
    two = zookeeper_plan("dc1", ZK_HOSTS, {"dc1-kafka1": LEADER, "dc1-kafka2": LEADER, "dc1-kafka3": FOLLOWER})
    assert two.problems == ["dc1: 2 ZooKeeper leaders"]
    none = zookeeper_plan("dc1", ZK_HOSTS, dict.fromkeys(ZK_HOSTS, FOLLOWER))
    assert none.problems == ["dc1: 0 ZooKeeper leaders"]


BROKERS = ["dc1-kafka1", "dc1-kafka2", "dc1-kafka3"]
BROKER_IDS = {"dc1-kafka1": 1, "dc1-kafka2": 2, "dc1-kafka3": 3}


def health(**changes: object) -> dict:
    """kafka_cluster_health's answer (its RETURN), healthy unless changed."""
    answer: dict = {"changed": False, "brokers": [1, 2, 3], "controller": 2, "under_replicated": [], "offline": []}
    answer.update(changes)
    return answer


@pytest.mark.parametrize("controller", [1, 2, 3])
def test_the_zookeeper_mode_controller_restarts_last(controller: int) -> None:
    plan = broker_plan("dc1", BROKERS, "zookeeper", health(controller=controller), [1, 2, 3], BROKER_IDS)
    last = f"dc1-kafka{controller}"
    assert plan.problems == []
    assert plan.order == [h for h in BROKERS if h != last] + [last]
    assert plan.leaders == [last]


def test_kraft_brokers_keep_the_inventory_order() -> None:
    # In KRaft no broker is the controller (the quorum rolled first): nothing is put last.
    plan = broker_plan("dc2", BROKERS, "kraft", health(controller=-1), [1, 2, 3], BROKER_IDS)
    assert (plan.problems, plan.order, plan.leaders) == ([], BROKERS, [])


def test_an_unhealthy_data_centre_refuses_the_broker_roll() -> None:
    assert broker_plan("dc1", BROKERS, "zookeeper", health(), [1, 2, 3], BROKER_IDS).problems == []
    cases = {
        "missing": (health(brokers=[1, 3]), ["dc1: missing brokers [2]"]),
        "under-replicated": (health(under_replicated=["t-0", "t-1"]), ["dc1: 2 under-replicated partitions"]),
        "offline": (health(offline=["t-2"]), ["dc1: 1 offline partitions"]),
        "no controller": (health(controller=-1), ["dc1: no active controller"]),
        "error": (health(error="timed out"), ["dc1: timed out"]),
    }
    for name, (answer, problems) in cases.items():
        assert broker_plan("dc1", BROKERS, "zookeeper", answer, [1, 2, 3], BROKER_IDS).problems == problems, name


def test_a_broker_that_never_ran_is_not_expected() -> None:
    # Scale-out: broker 3 is in the inventory but has not started since its host booted.
    plan = broker_plan("dc1", BROKERS, "kraft", health(brokers=[1, 2], controller=-1), [1, 2], BROKER_IDS)
    assert plan.problems == []
    assert ran_since_boot({"InactiveExitTimestampMonotonic": "0"}) is False
    assert ran_since_boot({"InactiveExitTimestampMonotonic": "72214123"}) is True


CONTROLLERS = ["dc2-controller1", "dc2-controller2", "dc2-controller3"]


def controller_ids() -> dict[str, int]:
    ids = sorted(int(line.split()[0]) for line in REPLICATION.splitlines()[1:] if "Observer" not in line)
    return dict(zip(CONTROLLERS, ids, strict=True))


def recorded_leader() -> int:
    return next(int(line.split()[0]) for line in REPLICATION.splitlines() if line.rstrip().endswith("Leader"))


def test_the_quorum_leader_restarts_last_from_a_recorded_describe() -> None:
    ids = controller_ids()
    plan = controller_plan("dc2", CONTROLLERS, 0, REPLICATION, "", list(ids.values()), 20, [], ids)
    leader = next(h for h, i in ids.items() if i == recorded_leader())
    assert plan.problems == []
    assert plan.order == [h for h in CONTROLLERS if h != leader] + [leader]
    assert plan.leaders == [leader]


def test_a_quorum_that_does_not_answer_or_lacks_a_voter_refuses_the_roll() -> None:
    ids = controller_ids()
    failed = controller_plan("dc2", CONTROLLERS, 1, "", "Error:\n  timed out  ", list(ids.values()), 20, [], ids)
    assert failed.problems == ["dc2: the quorum does not answer: Error: timed out"]
    more = controller_plan("dc2", CONTROLLERS, 0, REPLICATION, "", [*ids.values(), 9999], 20, [], ids)
    assert more.problems == [f"dc2: controllers [9999] are not voters (voters: {sorted(ids.values())})"]


def test_connect_workers_keep_their_order_and_report_the_answer_problems() -> None:
    plan = connect_plan("dc1", ["w1", "w2"], [])
    assert (plan.problems, plan.order) == ([], ["w1", "w2"])
    assert connect_plan("dc1", ["w1"], ["connector orders-cdc task 0 FAILED"]).problems == [
        "dc1: connector orders-cdc task 0 FAILED"
    ]


def test_the_spark_master_restarts_first() -> None:
    hosts = ["dc1-spark-worker-1", "dc1-spark-master", "dc1-spark-worker-2"]
    assert spark_plan(hosts, ["dc1-spark-master"]).order == [
        "dc1-spark-master",
        "dc1-spark-worker-1",
        "dc1-spark-worker-2",
    ]


def test_the_filters_read_what_the_roles_register() -> None:
    filters = plugin_files.load("filter/roll.py", "kafkakit_roll_filters")
    srvr = [
        {"zookeeper_roll_server": "dc1-kafka1", "stdout": FOLLOWER, "rc": 0},
        {"zookeeper_roll_server": "dc1-kafka2", "stdout": LEADER, "rc": 0},
        {"zookeeper_roll_server": "dc1-kafka3", "stdout": FOLLOWER, "rc": 0},
    ]
    zk = filters.kafkakit_zookeeper_roll_plan(srvr, "dc1", ZK_HOSTS, "zookeeper_roll_server")
    assert zk == {"problems": [], "order": ["dc1-kafka1", "dc1-kafka3", "dc1-kafka2"], "leaders": ["dc1-kafka2"]}

    hostvars = {h: {"broker_id": i} for h, i in BROKER_IDS.items()}
    units = [
        {"kafka_roll_broker": "dc1-kafka1", "status": {"InactiveExitTimestampMonotonic": "5"}},
        {"kafka_roll_broker": "dc1-kafka2", "status": {"InactiveExitTimestampMonotonic": "5"}},
        {"kafka_roll_broker": "dc1-kafka3", "status": {"InactiveExitTimestampMonotonic": "0"}},
    ]
    answer = health(brokers=[1, 2], controller=1)
    args = ("dc1", BROKERS, "zookeeper", units, "kafka_roll_broker", hostvars)
    brokers = filters.kafkakit_broker_roll_plan(answer, *args)
    assert brokers == {"problems": [], "order": ["dc1-kafka2", "dc1-kafka3", "dc1-kafka1"], "leaders": ["dc1-kafka1"]}
    units[2]["status"]["InactiveExitTimestampMonotonic"] = "7"
    brokers = filters.kafkakit_broker_roll_plan(answer, *args)
    assert brokers["problems"] == ["dc1: missing brokers [3]"]

    ids = controller_ids()
    hostvars = {h: {"controller_id": i} for h, i in ids.items()}
    quorum = {"rc": 0, "stdout": REPLICATION, "stderr": ""}
    plan = filters.kafkakit_controller_roll_plan(quorum, "dc2", CONTROLLERS, hostvars, list(ids.values()), 20, [])
    assert plan["problems"] == [] and plan["order"][-1] == plan["leaders"][0]
