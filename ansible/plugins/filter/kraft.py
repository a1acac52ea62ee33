"""KRaft filters: the quorum's health from kafka-metadata-quorum's output (kafkakit.cluster.kraft)."""

from __future__ import annotations

from typing import Any


def kafkakit_quorum_health(
    status: str, replication: str, expected_voters: Any, max_lag: int = 0, ignore: Any = None
) -> dict:
    """{leader, voters, observers, lagging, problems} of a quorum; problems empty: healthy."""
    from kafkakit.cluster.kraft import quorum_health

    return quorum_health(
        str(status),
        str(replication),
        [int(v) for v in expected_voters or []],
        int(max_lag),
        [int(v) for v in ignore or []],
    ).as_dict()


def kafkakit_initial_voters(controllers: Any, hostvars: Any, port: int, directory_ids: Any) -> list[str]:
    """--initial-controllers entries, id@ip:port:directory-id, one per controller (same order)."""
    from kafkakit.cluster.kraft import initial_voters

    return initial_voters(
        [(int(hostvars[h]["controller_id"]), str(hostvars[h]["private_ip"])) for h in controllers],
        int(port),
        list(directory_ids),
    )


def kafkakit_lost_quorum(formed: Any, dc: str, state_file: str, stats: Any) -> str:
    """kafkakit.cluster.kraft.lost_quorum from the registered stat of each controller's meta.properties."""
    from kafkakit.cluster.kraft import lost_quorum

    formatted = [bool(r["stat"].get("exists")) for r in stats or [] if "stat" in r]
    return lost_quorum(str(dc), str(state_file), bool(formed), formatted)


def kafkakit_quorum_membership(status: str, directories: Any) -> dict:
    """{join, stale, extra}: which controllers (id -> directory id) the voter set lacks or holds stale."""
    from kafkakit.cluster.kraft import membership

    return membership(str(status), {int(k): str(v) for k, v in dict(directories).items()}).as_dict()


def kafkakit_observer_lag(replication: str, node_id: int, directory_id: str) -> int:
    """How far the observer (id, directory id) is behind the leader; -1 when it does not fetch."""
    from kafkakit.cluster.kraft import observer_lag

    return observer_lag(str(replication), int(node_id), str(directory_id))


def kafkakit_controller_directories(hosts: Any, hostvars: Any) -> dict[int, str]:
    """controller_id -> directory id of its metadata log (the format step's kafka_controller_format);
    a controller whose directory id is unknown (check mode, a format without one) is left out."""
    found = {}
    for host in hosts:
        directory = str((hostvars[host].get("kafka_controller_format") or {}).get("directory_id") or "")
        if directory:
            found[int(hostvars[host]["controller_id"])] = directory
    return found


def kafkakit_controllers_with_ids(hosts: Any, hostvars: Any, ids: Any) -> list[str]:
    """The hosts whose controller_id is among ids (the voter set speaks in ids, the plays in hosts)."""
    wanted = {int(i) for i in ids or []}
    return [h for h in hosts if int(hostvars[h]["controller_id"]) in wanted]


def kafkakit_voter_directory(status: str, node_id: Any) -> str:
    """The directory id of node_id's voter in `describe --status` output ('' if not a voter)."""
    from kafkakit.cluster.kraft import voter_directory

    return voter_directory(str(status), int(node_id))


def kafkakit_migration_phase(kraft_brokers: int, brokers: int, controller_states: Any) -> str:
    """Where a ZooKeeper DC's migration to KRaft is (kafkakit.cluster.migration.phase)."""
    from kafkakit.cluster.migration import phase as migration_phase

    return migration_phase(int(kraft_brokers), int(brokers), [int(s) for s in controller_states])


def kafkakit_features_behind(describe: str, mapping: str) -> list[str]:
    """The features an upgrade to the release would move (kafkakit.cluster.kraft.features_behind)."""
    from kafkakit.cluster.kraft import features_behind

    return features_behind(str(describe), str(mapping))


class FilterModule:
    def filters(self) -> dict:
        return {
            "kafkakit_quorum_health": kafkakit_quorum_health,
            "kafkakit_initial_voters": kafkakit_initial_voters,
            "kafkakit_quorum_membership": kafkakit_quorum_membership,
            "kafkakit_observer_lag": kafkakit_observer_lag,
            "kafkakit_controller_directories": kafkakit_controller_directories,
            "kafkakit_controllers_with_ids": kafkakit_controllers_with_ids,
            "kafkakit_voter_directory": kafkakit_voter_directory,
            "kafkakit_migration_phase": kafkakit_migration_phase,
            "kafkakit_features_behind": kafkakit_features_behind,
            "kafkakit_lost_quorum": kafkakit_lost_quorum,
        }
