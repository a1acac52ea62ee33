"""Inventory rules of Kafka Connect (the preflight): what a data centre's Connect cluster needs
before any worker is configured."""

from __future__ import annotations

from typing import Any

from kafkakit.inventory_values import whole_number


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
    return errors
