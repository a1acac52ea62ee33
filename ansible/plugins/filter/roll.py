"""The roll's plan of each service (kafkakit.cluster.roll) from what its roll-plan.yml registered: the
results of the read tasks go in as Ansible returns them, {problems, order, leaders} comes out."""

from __future__ import annotations

from typing import Any


def kafkakit_zookeeper_roll_plan(srvr_results: Any, dc: str, hosts: Any, server_var: str) -> dict:
    """srvr_results: the looped `zookeeper-4lw srvr` results, each naming its server in server_var."""
    from kafkakit.cluster.roll import zookeeper_plan

    answers = {str(r[server_var]): str(r.get("stdout") or "") for r in srvr_results}
    return zookeeper_plan(str(dc), list(hosts), answers).as_dict()


def kafkakit_broker_roll_plan(
    health: Any, dc: str, hosts: Any, metadata_mode: str, unit_results: Any, host_var: str, hostvars: Any
) -> dict:
    """health: kafka_cluster_health's answer; unit_results: the looped systemd_service reads of
    each broker of the DC (host in host_var), so only brokers that have run are expected."""
    from kafkakit.cluster.roll import broker_plan, ran_since_boot

    expected = [int(hostvars[r[host_var]]["broker_id"]) for r in unit_results if ran_since_boot(r.get("status") or {})]
    hosts = list(hosts)
    ids = {h: int(hostvars[h].get("broker_id", -2)) for h in hosts}
    return broker_plan(str(dc), hosts, str(metadata_mode), dict(health), expected, ids).as_dict()


def kafkakit_controller_roll_plan(
    quorum: Any, dc: str, hosts: Any, hostvars: Any, expected_voters: Any, max_lag: Any, joining: Any
) -> dict:
    """quorum: the registered `kafka-metadata-quorum describe --replication` run."""
    from kafkakit.cluster.roll import controller_plan

    hosts = list(hosts)
    return controller_plan(
        str(dc),
        hosts,
        int(quorum.get("rc", 1)),
        str(quorum.get("stdout") or ""),
        str(quorum.get("stderr") or quorum.get("msg") or ""),
        [int(v) for v in expected_voters or []],
        int(max_lag),
        [int(v) for v in joining or []],
        {h: int(hostvars[h]["controller_id"]) for h in hosts},
    ).as_dict()


def kafkakit_connect_roll_plan(problems: Any, dc: str, hosts: Any) -> dict:
    """problems: the Connect cluster's answer's problems (kafka_connect_cluster)."""
    from kafkakit.cluster.roll import connect_plan

    return connect_plan(str(dc), list(hosts), [str(p) for p in problems or []]).as_dict()


def kafkakit_spark_roll_plan(hosts: Any, masters: Any) -> dict:
    from kafkakit.cluster.roll import spark_plan

    return spark_plan(list(hosts), list(masters or [])).as_dict()


class FilterModule:
    def filters(self) -> dict[str, Any]:
        return {
            "kafkakit_zookeeper_roll_plan": kafkakit_zookeeper_roll_plan,
            "kafkakit_broker_roll_plan": kafkakit_broker_roll_plan,
            "kafkakit_controller_roll_plan": kafkakit_controller_roll_plan,
            "kafkakit_connect_roll_plan": kafkakit_connect_roll_plan,
            "kafkakit_spark_roll_plan": kafkakit_spark_roll_plan,
        }
