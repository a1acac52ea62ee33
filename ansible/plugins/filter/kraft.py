"""KRaft filters: the quorum's health from kafka-metadata-quorum's output (kafkakit.kraft)."""

from __future__ import annotations

from typing import Any

from kafkakit.kraft import controller_roll_order, initial_voters, quorum_health


def kafkakit_quorum_health(status: str, replication: str, expected_voters: Any, max_lag: int = 0) -> dict:
    """{leader, voters, observers, lagging, problems} of a quorum; problems empty: healthy."""
    return quorum_health(str(status), str(replication), [int(v) for v in expected_voters or []], int(max_lag)).as_dict()


def kafkakit_initial_voters(controllers: Any, hostvars: Any, port: int, directory_ids: Any) -> list[str]:
    """--initial-controllers entries, id@ip:port:directory-id, one per controller (same order)."""
    return initial_voters(
        [(int(hostvars[h]["controller_id"]), str(hostvars[h]["private_ip"])) for h in controllers],
        int(port),
        list(directory_ids),
    )


def kafkakit_controller_roll_order(hosts: Any, hostvars: Any, leader: int) -> list[str]:
    """A DC's controllers in restart order: the followers, then the quorum leader."""
    hosts = list(hosts)
    return controller_roll_order(hosts, {h: int(hostvars[h]["controller_id"]) for h in hosts}, int(leader))


class FilterModule:
    def filters(self) -> dict:
        return {
            "kafkakit_quorum_health": kafkakit_quorum_health,
            "kafkakit_initial_voters": kafkakit_initial_voters,
            "kafkakit_controller_roll_order": kafkakit_controller_roll_order,
        }
