"""Filters for the monitoring role: one copy of the logic, in kafkakit.monitoring.prometheus."""

from __future__ import annotations

from typing import Any


def kafkakit_scrape_configs(
    groups: Any,
    hostvars: Any,
    jmx_ports: dict[str, int],
    node_exporter_port: int | None,
    prometheus_port: int,
    jmx_basic_auth: dict[str, str] | None = None,
    lag_exporter_port: int | None = None,
    https_ca_file: str | None = None,
    postgres_sources: Any = None,
    postgres_exporter_port: int | None = None,
) -> list[dict[str, Any]]:
    """Prometheus scrape_configs for every zookeeper, kafka_broker and mirrormaker host, and the
    source databases' exporters (postgres_exporter_port: kafkakit.monitoring.prometheus's default when None)."""
    from kafkakit.monitoring import prometheus as monitoring

    plain_groups = {k: list(v) for k, v in dict(groups).items()}
    return monitoring.scrape_configs(
        plain_groups,
        hostvars,
        jmx_ports,
        node_exporter_port,
        prometheus_port,
        jmx_basic_auth,
        lag_exporter_port,
        https_ca_file,
        [dict(s) for s in postgres_sources or []],
        monitoring.POSTGRES_EXPORTER_PORT if postgres_exporter_port is None else int(postgres_exporter_port),
    )


def kafkakit_web_login_hash(password: str, seed: str) -> str:
    """The bcrypt hash for a web.config's basic_auth_users, the same on every run for a password and
    `seed` (the host and the file)."""
    from kafkakit.monitoring import prometheus as monitoring

    return monitoring.web_login_hash(password, seed)


def kafkakit_alert_rules(text: str, thresholds: dict[str, Any], durations: dict[str, str] | None = None) -> str:
    """alerts.yml with the monitoring_alert_* thresholds and monitoring_alert_for durations in place."""
    from kafkakit.monitoring import prometheus as monitoring

    return monitoring.render_alert_rules(text, thresholds, durations)


def kafkakit_lag_exporter_clusters(
    bootstrap_by_dc: dict[str, str], username: str, password: str, ca_file: str
) -> dict[str, dict[str, str]]:
    """The lag exporter's client settings per data centre."""
    from kafkakit.monitoring import prometheus as monitoring

    return monitoring.lag_exporter_clusters(bootstrap_by_dc, username, password, ca_file)


def kafkakit_metric(text: str, name: str) -> int:
    """A metric's first sample in an exporter's /metrics text, -1 when absent."""
    from kafkakit.monitoring import prometheus as monitoring

    return monitoring.metric_value(text or "", name)


class FilterModule:
    def filters(self) -> dict[str, Any]:
        return {
            "kafkakit_scrape_configs": kafkakit_scrape_configs,
            "kafkakit_alert_rules": kafkakit_alert_rules,
            "kafkakit_lag_exporter_clusters": kafkakit_lag_exporter_clusters,
            "kafkakit_web_login_hash": kafkakit_web_login_hash,
            "kafkakit_metric": kafkakit_metric,
        }
