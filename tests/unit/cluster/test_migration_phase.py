"""The migration phase read from the cluster (kafkakit.cluster.migration), as both playbooks act on it."""

from __future__ import annotations

import pytest

from kafkakit.cluster.migration import PHASES, phase


@pytest.mark.parametrize(
    ("kraft_brokers", "states", "expected"),
    [
        (0, [-1, -1, -1], "zookeeper"),  # no controller runs: nothing started, or all rolled back
        (0, [], "zookeeper"),
        (0, [2, 2, 2], "controllers"),  # waiting for every ZooKeeper broker, then copying
        (0, [2, -1, 2], "controllers"),  # one controller down does not hide the others
        (0, [1, 1, 2], "controllers"),  # not every controller has replayed the copy yet
        (0, [1, 1, 1], "migrated"),
        (1, [1, 1, 1], "brokers-to-kraft"),  # a phase-4 roll that stopped half-way
        (3, [1, 1, 1], "dual-write"),
        (3, [1, 3, 1], "finalized"),  # one controller out of migration mode is enough: no way back
        (3, [3, 3, 3], "finalized"),
    ],
)
def test_the_phase_follows_the_brokers_and_the_controllers(
    kraft_brokers: int, states: list[int], expected: str
) -> None:
    assert phase(kraft_brokers, 3, states) == expected
    assert expected in PHASES


def test_a_dc_without_brokers_is_never_dual_write() -> None:
    assert phase(0, 0, [1, 1, 1]) == "migrated"
