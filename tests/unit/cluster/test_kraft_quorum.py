"""kafkakit.cluster.kraft: the quorum's health from kafka-metadata-quorum's --status and --replication."""
# ruff: noqa: E501 - the tool's output, as it prints it

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from kafkakit.cluster.kraft import (
    features_behind,
    initial_voters,
    lost_quorum,
    membership,
    observer_lag,
    parse_replication,
    parse_status,
    quorum_health,
    voter_directory,
)

ROOT = Path(__file__).resolve().parents[3]
STATUS = """ClusterId:              MkU3OEVBNTcwNTJENDM2Qk
LeaderId:               102
LeaderEpoch:            3
HighWatermark:          420
MaxFollowerLag:         0
MaxFollowerLagTimeMs:   0
CurrentVoters:          [{"id": 101, "directoryId": "a", "endpoints": ["CONTROLLER://127.0.0.11:19094"]}, {"id": 102, "directoryId": "b", "endpoints": ["CONTROLLER://127.0.0.12:19094"]}, {"id": 103, "directoryId": "c", "endpoints": ["CONTROLLER://127.0.0.13:19094"]}]
CurrentObservers:       [{"id": 1, "directoryId": "d"}]
"""
REPLICATION = """NodeId  DirectoryId             LogEndOffset    Lag     LastFetchTimestamp      LastCaughtUpTimestamp   Status
102     bbbbbbbbbbbbbbbbbbbbbb  420             0       1795496691860           1795496691860           Leader
101     aaaaaaaaaaaaaaaaaaaaaa  420             0       1795496691800           1795496691800           Follower
103     cccccccccccccccccccccc  {offset}        {lag}   1795496691800           1795496691800           Follower
1       dddddddddddddddddddddd  420             0       1795496691800           1795496691800           Observer
"""


def replication(lag: int = 0) -> str:
    return REPLICATION.format(offset=420 - lag, lag=lag)


def test_parse_status_and_replication() -> None:
    status = parse_status(STATUS)
    assert status["LeaderId"] == "102" and len(status["CurrentVoters"]) == 3  # type: ignore[arg-type]
    rows = parse_replication(replication())
    assert [(r.node_id, r.status) for r in rows] == [
        (102, "Leader"),
        (101, "Follower"),
        (103, "Follower"),
        (1, "Observer"),
    ]


def test_a_whole_caught_up_quorum_is_healthy() -> None:
    health = quorum_health(STATUS, replication(), [101, 102, 103], max_lag=20)
    assert health.problems == [] and health.leader == 102
    assert health.voters == [101, 102, 103] and health.observers == [1]


def test_a_voter_behind_is_reported() -> None:
    health = quorum_health(STATUS, replication(lag=500), [101, 102, 103], max_lag=20)
    assert health.lagging == [103] and "voters [103]" in health.problems[0]


def test_no_leader_and_a_missing_voter_are_reported() -> None:
    status = STATUS.replace("LeaderId:               102", "LeaderId:               -1")
    health = quorum_health(status, replication(), [101, 102, 103, 104], max_lag=20)
    assert "no quorum leader" in health.problems
    assert any("[104] are not voters" in p for p in health.problems)


def test_the_replication_rows_alone_give_the_same_answers_as_both_outputs() -> None:
    # The roles run `describe --replication` only (one JVM per check instead of two).
    for lag, expected in ((0, []), (500, [103])):
        both = quorum_health(STATUS, replication(lag=lag), [101, 102, 103], max_lag=20)
        alone = quorum_health("", replication(lag=lag), [101, 102, 103], max_lag=20)
        assert alone.as_dict() == both.as_dict() and alone.lagging == expected
    assert alone.leader == 102 and alone.voters == [101, 102, 103] and alone.observers == [1]
    # A voter the leader does not list and a quorum without a leader are reported from it too.
    no_leader = replication().replace("Leader\n", "Follower\n", 1)
    health = quorum_health("", no_leader, [101, 102, 103, 104], max_lag=20)
    assert "no quorum leader" in health.problems
    assert any("[104] are not voters" in p for p in health.problems)


def test_no_output_is_unhealthy() -> None:
    assert quorum_health("", "", [101], 0).problems[0] == "no quorum leader"


def test_initial_voters() -> None:
    assert initial_voters([(101, "10.0.0.1"), (102, "10.0.0.2")], 9094, ["x", "y"]) == [
        "101@10.0.0.1:9094:x",
        "102@10.0.0.2:9094:y",
    ]
    with pytest.raises(ValueError):
        initial_voters([(101, "10.0.0.1")], 9094, [""])


def test_membership_of_a_whole_quorum_is_empty() -> None:
    found = membership(STATUS, {101: "a", 102: "b", 103: "c"})
    assert found.as_dict() == {"join": [], "stale": {}, "extra": []}


def test_a_controller_with_a_new_directory_joins_and_its_old_voter_is_stale() -> None:
    # 101's disk was replaced: the voter set still names its old directory.
    found = membership(STATUS, {101: "z", 102: "b", 103: "c"})
    assert found.join == [101]
    assert found.stale == {101: "a"}
    assert found.extra == []
    assert found.as_dict()["stale"] == {"101": "a"}


def test_a_new_controller_joins_and_a_departed_voter_is_extra() -> None:
    found = membership(STATUS, {102: "b", 103: "c", 104: "e"})
    assert found.join == [104]
    assert found.stale == {}
    assert found.extra == [101]


def test_observer_lag_matches_id_and_directory() -> None:
    text = (
        replication()
        + "101     zzzzzzzzzzzzzzzzzzzzzz  400             20      1795496691800           1795496691800           Observer\n"
    )
    assert observer_lag(text, 101, "zzzzzzzzzzzzzzzzzzzzzz") == 20
    # The voter row of the same id (another directory) is not the observer.
    assert observer_lag(text, 101, "aaaaaaaaaaaaaaaaaaaaaa") == -1
    assert observer_lag(replication(), 104, "e") == -1


def test_an_ignored_voter_may_lag() -> None:
    health = quorum_health(STATUS, replication(lag=500), [101, 102], max_lag=20, ignore=[103])
    assert health.problems == []


def test_voter_directory() -> None:
    assert voter_directory(STATUS, 102) == "b"
    assert voter_directory(STATUS, 1) == ""


def describe(**finalized: str) -> str:
    """kafka-features describe's output, in FeatureCommand's own format, for these finalized levels
    (feature names with "_" for "."; "-": never finalized)."""
    return "\n".join(
        f"Feature: {name.replace('_', '.'):<40}  SupportedMinVersion: {'0':<15}  SupportedMaxVersion: {'1':<15}  "
        f"FinalizedVersionLevel: {level:<15}  Epoch: 42"
        for name, level in finalized.items()
    )


MAPPING_4_3 = "metadata.version=27 (4.3-IV0)\nkraft.version=1\ngroup.version=1\neligible.leader.replicas.version=0\n"


def test_features_at_the_release_need_no_upgrade() -> None:
    at_release = describe(
        metadata_version="4.3-IV0", kraft_version="1", group_version="1", eligible_leader_replicas_version="-"
    )
    assert features_behind(at_release, MAPPING_4_3) == []


def test_features_below_the_release_or_never_finalized_are_behind() -> None:
    behind = describe(
        metadata_version="3.9-IV0", kraft_version="1", group_version="-", eligible_leader_replicas_version="-"
    )
    assert features_behind(behind, MAPPING_4_3) == ["metadata.version", "group.version"]
    # A feature the cluster does not list at all counts as never finalized.
    assert features_behind(describe(metadata_version="4.3-IV0"), MAPPING_4_3) == ["kraft.version", "group.version"]


def test_a_formed_quorum_whose_controllers_all_lost_their_data_is_refused():
    state = "build/lab/pki/kraft/dc2.yml"
    problem = lost_quorum("dc2", state, True, [False, False, False])
    assert problem.startswith(f"dc2: {state} says its controller quorum has formed, but none of its 3 controllers")
    assert f"remove {state} to start a new cluster" in problem
    # Positive controls: one controller replaced (the others hold the quorum), a first deploy, an
    # earlier failed first run (not formed on record, yet formatted), and no controller reached.
    assert lost_quorum("dc2", state, True, [False, True, True]) == ""
    assert lost_quorum("dc2", state, False, [False, False, False]) == ""
    assert lost_quorum("dc2", state, False, [True, False, False]) == ""
    assert lost_quorum("dc2", state, True, []) == ""


def test_the_filter_reads_the_registered_stats():
    spec = importlib.util.spec_from_file_location("kraft_filters", ROOT / "ansible/plugins/filter/kraft.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    lost = module.FilterModule().filters()["kafkakit_lost_quorum"]
    stats = [{"stat": {"exists": False}}, {"stat": {"exists": False}}, {"failed": True, "msg": "unreachable"}]
    assert lost(True, "dc2", "dc2.yml", stats).startswith("dc2: dc2.yml says")
    assert lost(True, "dc2", "dc2.yml", [*stats[:1], {"stat": {"exists": True}}]) == ""
