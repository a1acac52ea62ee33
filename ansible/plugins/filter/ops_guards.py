"""Filters for the day-2 operations' guards: one copy of the rules, in kafkakit.guards.operations."""

from __future__ import annotations

import time
from typing import Any


def _plain(groups: Any) -> dict[str, list[str]]:
    return {k: list(v) for k, v in dict(groups).items()}


def kafkakit_dr_drill_refusal(source: Any, target: Any, confirmation: Any, groups: Any) -> str:
    """Why the DR drill must not take `source` down ('' when confirmed by the data centre's name)."""
    from kafkakit.guards import operations as ops_guards

    return ops_guards.dr_drill_refusal(source, target, confirmation, _plain(groups))


def kafkakit_dr_drill_victims(source: Any, groups: Any) -> list[str]:
    """The brokers and ZooKeeper servers the drill kills."""
    from kafkakit.guards import operations as ops_guards

    return ops_guards.dr_drill_victims(_plain(groups), str(source))


def kafkakit_pki_new_ca_refusal(hosts: list[str], hostvars: Any, ca_dir: str, confirmation: Any) -> str:
    """Why kafka_pki must not sign with the CA in `ca_dir` ('' when it may); each host's
    kafka_pki_held.read holds its host.crt (current) and ca.crt (bundle), None when missing."""
    from kafkakit.guards import pki as pki_guard

    def held(host: str) -> pki_guard.Held:
        read = dict((hostvars[host].get("kafka_pki_held") or {}).get("read") or {})
        return pki_guard.Held(read.get("current"), read.get("bundle"))

    ca_dir = str(ca_dir)
    known = pki_guard.controller_cas(ca_dir) if ca_dir.strip() else []
    return pki_guard.new_ca_refusal(ca_dir, known, {h: held(h) for h in hosts}, confirmation)


def kafkakit_ca_retire_refusal(
    hosts: list[str], hostvars: Any, ca_dir: str, confirmation: Any, soak_hours: Any, controller_bundles: Any
) -> str:
    """Why the old CA must not be retired yet ('' when it may): each host's kafkakit_trust_read
    (path -> PEM, None when missing; the roles' trust-read.yml) and the controller's bundles."""
    from kafkakit.guards import pki as pki_guard

    bundles: dict[str, str | None] = {f"localhost:{path}": text for path, text in dict(controller_bundles).items()}
    for host in hosts:
        for path, text in dict(hostvars[host].get("kafkakit_trust_read") or {}).items():
            bundles[f"{host}:{path}"] = text
    ca_dir = str(ca_dir)
    return pki_guard.retire_refusal(
        ca_dir, confirmation, pki_guard.promoted_at(ca_dir), time.time(), float(soak_hours), bundles
    )


def kafkakit_controller_change_refusal(host: Any, operation: str, confirmation: Any, groups: Any, hostvars: Any) -> str:
    """Why a controller replacement/removal must not run ('' when confirmed by the host's name)."""
    from kafkakit.guards import operations as ops_guards

    plain = _plain(groups)
    dc_of = {h: str(hostvars[h].get("dc", "")) for h in plain.get("kafka_controller", [])}
    return ops_guards.controller_change_refusal(str(operation), host, confirmation, plain, dc_of)


def kafkakit_zookeeper_recover_refusal(host: Any, confirmation: Any, groups: Any) -> str:
    """Why a ZooKeeper server must not be recovered ('' when confirmed by the host's name)."""
    from kafkakit.guards import operations as ops_guards

    return ops_guards.zookeeper_recover_refusal(host, confirmation, _plain(groups))


def kafkakit_broker_recover_refusal(host: Any, confirmation: Any, groups: Any) -> str:
    """Why a broker must not be recovered ('' when confirmed by the host's name)."""
    from kafkakit.guards import operations as ops_guards

    return ops_guards.broker_recover_refusal(host, confirmation, _plain(groups))


def kafkakit_broker_reclaim_refusal(host: str, serving: Any, log_dirs: Any, topic_ids: Any, full_share: Any) -> str:
    """Why the recovery must not free `host`'s log dirs ('' when it may); `log_dirs` is
    kafkakit_log_dirs's result, `topic_ids` the cluster's (kafka_cluster_health)."""
    from kafkakit.guards import log_reclaim

    return log_reclaim.recover_refusal(
        str(host), bool(serving), log_dirs["volumes"], log_dirs["entries"], dict(topic_ids), float(full_share)
    )


def kafkakit_broker_reclaimable(log_dirs: Any, topic_ids: Any) -> list[dict[str, Any]]:
    """The entries of kafkakit_log_dirs's result that the cluster no longer holds, largest first."""
    from kafkakit.guards import log_reclaim

    return log_reclaim.reclaimable(log_dirs["entries"], dict(topic_ids))


def _reads(reads: Any) -> dict[str, str]:
    return {str(host): str(text or "") for host, text in dict(reads).items()}


def kafkakit_release_change_refusal(describe: Any, target: Any, reads: Any) -> str:
    """Why a KRaft data centre must not move to Kafka `target` ('' when it may), before any node
    restarts: `describe` is kafka-features describe's output, `reads` each node's read (host ->
    "running: ...\nrecord: ..."; kafkakit.guards.upgrade.parse_node_read)."""
    from kafkakit.guards import upgrade as upgrade_guard

    running, formatted = upgrade_guard.read_nodes(_reads(reads))
    try:
        finalized = upgrade_guard.finalized_metadata(str(describe))
    except ValueError as exc:
        return f"refusing to move the data centre to Kafka {target}: {exc}"
    return upgrade_guard.release_change_refusal(finalized, str(target), formatted, running)


def kafkakit_features_step_refusal(reads: Any, target: Any) -> str:
    """Why the features step to `target`'s line must not run yet ('' when every node runs it)."""
    from kafkakit.guards import upgrade as upgrade_guard

    running, _ = upgrade_guard.read_nodes(_reads(reads))
    return upgrade_guard.features_step_refusal(running, str(target))


def kafkakit_finalized_metadata(describe: Any) -> str:
    """The finalized metadata.version in kafka-features describe's output ('?' when none)."""
    from kafkakit.guards import upgrade as upgrade_guard

    try:
        return upgrade_guard.finalized_metadata(str(describe))
    except ValueError:
        return "?"


class FilterModule:
    def filters(self) -> dict[str, Any]:
        return {
            "kafkakit_release_change_refusal": kafkakit_release_change_refusal,
            "kafkakit_features_step_refusal": kafkakit_features_step_refusal,
            "kafkakit_finalized_metadata": kafkakit_finalized_metadata,
            "kafkakit_dr_drill_refusal": kafkakit_dr_drill_refusal,
            "kafkakit_dr_drill_victims": kafkakit_dr_drill_victims,
            "kafkakit_pki_new_ca_refusal": kafkakit_pki_new_ca_refusal,
            "kafkakit_ca_retire_refusal": kafkakit_ca_retire_refusal,
            "kafkakit_controller_change_refusal": kafkakit_controller_change_refusal,
            "kafkakit_zookeeper_recover_refusal": kafkakit_zookeeper_recover_refusal,
            "kafkakit_broker_recover_refusal": kafkakit_broker_recover_refusal,
            "kafkakit_broker_reclaim_refusal": kafkakit_broker_reclaim_refusal,
            "kafkakit_broker_reclaimable": kafkakit_broker_reclaimable,
        }
