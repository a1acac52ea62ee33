"""KRaft filters: the quorum's health from kafka-metadata-quorum's output (kafkakit.kraft)."""

from __future__ import annotations

from typing import Any

from kafkakit.kraft import initial_voters, quorum_health


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


class FilterModule:
    def filters(self) -> dict:
        return {"kafkakit_quorum_health": kafkakit_quorum_health, "kafkakit_initial_voters": kafkakit_initial_voters}
