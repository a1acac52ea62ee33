"""Inventory rules of Kafka Connect (the preflight): what a data centre's Connect cluster needs
before any worker is configured."""

from __future__ import annotations

import tarfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from kafkakit.rules.values import whole_number

# What a restarted worker needs beyond the rebalance delay to start its connectors again.
READY_MARGIN_MS = 60_000
# Connect's rebalance.timeout.ms (the kit keeps the default): a worker reading the config topic
# longer than this inside a rebalance is dropped from the group.
REBALANCE_TIMEOUT_MS = 60_000


def connect_errors(dc: str, workers: list[str], brokers: list[str], settings: dict[str, Any]) -> list[str]:
    """One message per broken rule of `dc`'s Connect cluster (`settings`: its kafka_connect_*
    values, defaults filled in; numbers known to be whole by then)."""
    if not workers:
        return []
    if not brokers:
        return [f"{dc}: kafka_connect hosts {workers} in a data centre with no Kafka brokers to connect to"]
    errors = []
    version = str(settings.get("kafka_connect_version") or "")
    major = version.split(".")[0]
    if version and (not major.isdigit() or int(major) < 4):
        errors.append(f"{dc}: kafka_connect_version={version}: the workers run a Kafka 4.x release")
    least = whole_number(settings.get("kafka_connect_min_workers"))
    if least is not None and len(workers) < least:
        errors.append(
            f"{dc}: {len(workers)} Kafka Connect worker(s) {workers}; at least {least} so that the Connect cluster "
            "outlives one (kafka_connect_min_workers)"
        )
    rf = whole_number(settings.get("kafka_connect_replication_factor"))
    isr = whole_number(settings.get("kafka_connect_min_insync_replicas"))
    if rf is not None and rf > len(brokers):
        errors.append(
            f"{dc}: Connect's internal topics want replication factor {rf} (kafka_connect_replication_factor) "
            f"but the data centre has {len(brokers)} broker(s)"
        )
    if rf is not None and isr is not None and isr > rf:
        errors.append(
            f"{dc}: kafka_connect_min_insync_replicas={isr} is above kafka_connect_replication_factor={rf}: "
            "no write to Connect's internal topics could succeed"
        )
    delay = whole_number(settings.get("kafka_connect_rebalance_delay_ms"))
    ready = whole_number(settings.get("kafka_connect_ready_timeout"))
    if delay is not None and ready is not None and ready * 1000 < delay + READY_MARGIN_MS:
        errors.append(
            f"{dc}: kafka_connect_ready_timeout={ready} s is too short for kafka_connect_rebalance_delay_ms={delay}: "
            f"a restarted worker gets its connectors back only after the delay, so the roll would give up on it; "
            f"give it at least {(delay + READY_MARGIN_MS + 999) // 1000} s"
        )
    sync = whole_number(settings.get("kafka_connect_worker_sync_timeout_ms"))
    if sync is not None and sync >= REBALANCE_TIMEOUT_MS:
        errors.append(
            f"{dc}: kafka_connect_worker_sync_timeout_ms={sync} is not below Connect's rebalance timeout "
            f"({REBALANCE_TIMEOUT_MS} ms): a worker still reading the config topic would be dropped from the group"
        )
    return errors


# Connector classes the worker's own runtime carries (MirrorMaker 2's, the file connectors).
KAFKA_OWN_PACKAGE = "org.apache.kafka."
ANY_CLASS = "*"


def plugin_connectors(plugin_src: str, plugins: Sequence[Mapping[str, Any]]) -> dict[str, set[str] | None]:
    """Each declared plugin (<name>-<version>) -> the connector classes its archive in `plugin_src`
    names (the PLUGIN file ansible/artifacts/build-connect-plugin.sh writes); None: no archive."""
    found: dict[str, set[str] | None] = {}
    for p in plugins:
        key = f"{p['name']}-{p['version']}"
        archive = Path(plugin_src or ".") / f"{key}.tgz"
        found[key] = None
        if not plugin_src or not archive.is_file():
            continue
        with tarfile.open(archive) as tar:
            for member in tar:
                if member.name == f"{key}/PLUGIN":
                    text = tar.extractfile(member).read().decode()  # type: ignore[union-attr]
                    line = next((x for x in text.splitlines() if x.startswith("connectors=")), None)
                    # An archive built before PLUGIN named its classes: any class may be its.
                    found[key] = {ANY_CLASS} if line is None else {c for c in line.split("=", 1)[1].split(",") if c}
                    break
    return found


def connector_reference_errors(
    dc: str,
    connectors: Sequence[Mapping[str, Any]],
    users: Sequence[Mapping[str, Any]],
    provided: Mapping[str, set[str] | None],
) -> list[str]:
    """One message per declared connector whose class no declared plugin provides (Kafka's own
    aside) or whose principal is no user of kafka_users, and per declared plugin with no archive."""
    errors = [
        f"{dc}: Connect plugin {key}: no archive {key}.tgz in kafka_connect_plugin_src"
        for key, c in provided.items()
        if c is None
    ]
    classes = set().union(*(c for c in provided.values() if c))
    names = {str(u.get("name")) for u in users}
    for c in connectors:
        if str(c.get("state", "running")) == "absent":
            continue
        cls, principal = str(c.get("class", "")), str(c.get("principal") or "")
        if cls and not cls.startswith(KAFKA_OWN_PACKAGE) and not classes & {cls, ANY_CLASS}:
            errors.append(
                f"{dc}: connector {c.get('name')}: class {cls} is in no declared plugin "
                f"(kafka_connect_plugins: {sorted(provided) or 'none'})"
            )
        if principal and principal not in names:
            errors.append(f"{dc}: connector {c.get('name')}: principal {principal} is no user of kafka_users")
    return errors
