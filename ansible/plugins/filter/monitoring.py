"""Filters for the monitoring role: one copy of the logic, in kafkakit.monitoring."""

from __future__ import annotations

from typing import Any

from kafkakit import monitoring


def kafkakit_scrape_configs(
    groups: Any, hostvars: Any, jmx_ports: dict[str, int], node_exporter_port: int | None, prometheus_port: int
) -> list[dict[str, Any]]:
    """Prometheus scrape_configs for every zookeeper, kafka_broker and mirrormaker host."""
    plain_groups = {k: list(v) for k, v in dict(groups).items()}
    return monitoring.scrape_configs(plain_groups, hostvars, jmx_ports, node_exporter_port, prometheus_port)


def kafkakit_alert_rules(text: str, thresholds: dict[str, Any]) -> str:
    """alerts.yml with the monitoring_alert_* thresholds in place."""
    return monitoring.render_alert_rules(text, thresholds)


class FilterModule:
    def filters(self) -> dict[str, Any]:
        return {
            "kafkakit_scrape_configs": kafkakit_scrape_configs,
            "kafkakit_alert_rules": kafkakit_alert_rules,
        }
