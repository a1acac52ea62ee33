"""Monitoring: Prometheus scrape targets from the inventory, alert-rule thresholds, and the
metric names the alert rules may use (JMX exporter rules, node exporter, kafkakit_* metrics).

The roles call this through ansible/plugins/filter/monitoring.py; the unit tests call it directly.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

# Groups whose services carry the JMX exporter agent, and the agent's port per component. The ports
# are the monitoring role's defaults (monitoring_jmx_ports, monitoring_*_port), copied here for Python;
# tests/unit/infra/test_infra_ports.py ties the copies to them.
JMX_PORTS: dict[str, int] = {
    "kafka_broker": 7071,
    "zookeeper": 7072,
    "mirrormaker": 7073,
    "kafka_controller": 7074,
    "kafka_connect": 7075,
}
NODE_EXPORTER_PORT = 9100
PROMETHEUS_PORT = 9090
POSTGRES_EXPORTER_PORT = 9187
LAG_EXPORTER_PORT = 9308

# Metrics that no JMX rules file produces. Each names its producer; alerts.yml may use them
# (tests/unit/monitoring/test_monitoring_rules.py enforces it).
KAFKAKIT_METRICS: dict[str, str] = {
    "kafkakit_consumergroup_lag": (
        "gauge, records a consumer group is behind the log end, labels dc, group, topic, partition; "
        "from the kafkakit lag exporter (kafkakit.monitoring.lag_exporter on the monitoring hosts: committed offsets "
        "vs. log-end offsets)"
    ),
    "kafkakit_certificate_expiry_timestamp_seconds": (
        "gauge, notAfter of a host's certificate as a Unix time, labels path, subject; written by the "
        "kafka_pki role as a node exporter textfile (.prom)"
    ),
    "kafkakit_cdc_lag_seconds": (
        "gauge, of spark-jobs/cdc.py's last micro-batch that had changes: its commit time minus the oldest database "
        "commit time among them, labels topic, output; a node exporter textfile the driver writes (--metrics-file)"
    ),
    "kafkakit_cdc_batch_commit_timestamp_seconds": (
        "gauge, when spark-jobs/cdc.py's last micro-batch committed its output, as a Unix time, labels topic, "
        "output; same file"
    ),
    "kafkakit_cdc_progress_timestamp_seconds": (
        "gauge, last time spark-jobs/cdc.py started, committed a micro-batch or found no change waiting, as a Unix "
        "time, labels topic, output; same file"
    ),
}
EXTERNAL_METRICS: dict[str, str] = {
    "up": "Prometheus: 1 when the last scrape of the target succeeded",
    "pg_up": "prometheus-postgres-exporter (Debian package): 1 when it reached its database",
    "pg_replication_slots_pg_wal_lsn_diff": (
        "prometheus-postgres-exporter's own pg_replication_slots query: bytes from a slot's restart_lsn to now"
    ),
    "pg_replication_slots_active": "prometheus-postgres-exporter's own pg_replication_slots query: 1 while streamed",
    "node_filesystem_avail_bytes": "prometheus-node-exporter (Debian package), tasks/node-exporter.yml",
    "node_filesystem_size_bytes": "prometheus-node-exporter (Debian package), tasks/node-exporter.yml",
}


# --- scrape targets ------------------------------------------------------------------------


def _labels(host: str, hv: Mapping[str, Any], component: str) -> dict[str, str]:
    return {
        "dc": str(hv.get("dc", "")),
        "rack": str(hv.get("kafka_rack", "")),
        "component": component,
        "instance": host,
    }


def scrape_configs(
    groups: Mapping[str, Iterable[str]],
    hostvars: Mapping[str, Mapping[str, Any]],
    jmx_ports: Mapping[str, int] | None = None,
    node_exporter_port: int | None = NODE_EXPORTER_PORT,
    prometheus_port: int = PROMETHEUS_PORT,
    jmx_basic_auth: Mapping[str, str] | None = None,
    lag_exporter_port: int | None = None,
    https_ca_file: str | None = None,
    postgres_sources: Sequence[Mapping[str, Any]] = (),
    postgres_exporter_port: int = POSTGRES_EXPORTER_PORT,
) -> list[dict[str, Any]]:
    """Prometheus `scrape_configs`: one job per component group (its JMX agent, with
    `jmx_basic_auth` when the agents ask for it), a `node` job for every host of those groups
    and the Spark masters (node exporter; None leaves it out), Prometheus itself and the consumer-lag exporter on the
    `monitoring` hosts. Every target is labelled dc, rack, component and instance (inventory name),
    so alerts name the host as the inventory does rather than by address.
    With `https_ca_file`, every job scrapes over HTTPS (verified against that CA bundle) with the
    same basic-auth login. Each of `postgres_sources` (a source database) has its exporter on every
    monitoring host, on `postgres_exporter_port` + its index; its samples are labelled with the
    database's name and dc, not the monitoring host's."""
    ports = dict(JMX_PORTS if jmx_ports is None else jmx_ports)
    jobs: list[dict[str, Any]] = []

    def job(name: str, members: list[tuple[str, int, str]], **extra: Any) -> None:
        if members:
            static = [
                {"targets": [f"{hostvars[h]['private_ip']}:{port}"], "labels": _labels(h, hostvars[h], component)}
                for h, port, component in members
            ]
            jobs.append({"job_name": name, **extra, "static_configs": static})

    seen: list[str] = []
    auth = {"basic_auth": dict(jmx_basic_auth)} if jmx_basic_auth else {}
    web = {"scheme": "https", "tls_config": {"ca_file": https_ca_file}, **auth} if https_ca_file else {}
    for group, port in ports.items():
        hosts = list(groups.get(group, []))
        if group == "kafka_controller":
            # A ZooKeeper DC's controllers run only once it migrates (then its inventory says kraft).
            hosts = [h for h in hosts if hostvars[h].get("kafka_metadata_mode") == "kraft"]
        job(group, [(h, port, group) for h in hosts], **(web or auth))
        seen += [h for h in hosts if h not in seen]
    if node_exporter_port is not None:
        # The Spark master for its node exporter alone: the streaming jobs' drivers write their
        # kafkakit_cdc_* textfile metrics there.
        seen += [h for h in groups.get("spark_master", []) if h not in seen]
        job("node", [(h, node_exporter_port, "node") for h in seen], **web)
    monitors = list(groups.get("monitoring", []))
    job("prometheus", [(h, prometheus_port, "monitoring") for h in monitors], **web)
    if lag_exporter_port is not None:
        # The lag samples carry the dc of the cluster they describe, not the exporter's.
        job("consumer_lag", [(h, lag_exporter_port, "lag_exporter") for h in monitors], honor_labels=True, **web)
    databases = [
        {
            "targets": [f"{hostvars[h]['private_ip']}:{postgres_exporter_port + i}"],
            "labels": {"dc": str(source["dc"]), "component": "postgres", "instance": str(source["name"])},
        }
        for h in monitors
        for i, source in enumerate(postgres_sources)
    ]
    if databases:
        jobs.append({"job_name": "postgres", **web, "static_configs": databases})
    return jobs


# bcrypt's base64 alphabet, in the order of the standard one's: a salt is 22 of its characters.
_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_BCRYPT_B64 = "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


def web_login_hash(password: str, seed: str) -> str:
    """The bcrypt hash of the scrape password for a web.config (Prometheus, node exporter). Its salt
    is derived from the password and `seed` (the host and the file: a different salt each), so a
    second run writes the same hash without reading the file back, and a new password a new salt.
    A derived salt weakens nothing: a guess still costs a bcrypt, and no two hosts or files share
    one. Cost 10: a long random machine password needs no more, and every request that is not
    cached pays it."""
    import bcrypt  # the controller's venv has it; the Pulumi program, which imports this module, does not

    raw = hmac.new(password.encode(), seed.encode(), hashlib.sha256).digest()[:16]
    salt = base64.b64encode(raw).decode()[:22].translate(str.maketrans(_B64, _BCRYPT_B64))
    return bcrypt.hashpw(password.encode(), f"$2b$10${salt}".encode()).decode()


def lag_exporter_clusters(
    bootstrap_by_dc: Mapping[str, str], username: str, password: str, ca_file: str
) -> dict[str, dict[str, str]]:
    """The lag exporter's librdkafka settings per data centre (bootstrap lists from the
    kafkakit_bootstrap_by_dc filter), read over SASL_SSL as the monitoring principal."""
    return {
        dc: {
            "bootstrap.servers": bootstrap,
            "security.protocol": "SASL_SSL",
            "sasl.mechanisms": "SCRAM-SHA-512",
            "sasl.username": username,
            "sasl.password": password,
            "ssl.ca.location": ca_file,
        }
        for dc, bootstrap in sorted(bootstrap_by_dc.items())
    }


# --- alert thresholds ------------------------------------------------------------------------


@dataclass(frozen=True)
class Threshold:
    """A literal in one alert's expression that a role variable may replace."""

    variable: str
    alert: str
    default: str


ALERT_THRESHOLDS: tuple[Threshold, ...] = (
    Threshold("monitoring_alert_isr_shrinks_per_second", "KafkaIsrShrinking", "0"),
    Threshold("monitoring_alert_request_handler_idle_ratio", "KafkaRequestHandlerIdleLow", "0.2"),
    Threshold("monitoring_alert_data_disk_used_ratio", "KafkaDataDiskFull", "0.8"),
    Threshold("monitoring_alert_data_disk_mountpoints", "KafkaDataDiskFull", "/srv/kafkakit.*"),
    Threshold("monitoring_alert_mirror_latency_ms", "MirrorMakerReplicationLagHigh", "60000"),
    Threshold("monitoring_alert_connect_source_behind_ms", "KafkaConnectSourceBehind", "60000"),
    Threshold("monitoring_alert_consumer_lag_records", "KafkaConsumerGroupLagHigh", "10000"),
    Threshold("monitoring_alert_certificate_days", "KafkaCertificateExpiringSoon", "14"),
    Threshold("monitoring_alert_slot_retained_wal_bytes", "PostgresReplicationSlotRetainsWal", "1073741824"),
    Threshold("monitoring_alert_spark_cdc_lag_seconds", "SparkCdcLagHigh", "120"),
    Threshold("monitoring_alert_spark_cdc_stalled_seconds", "SparkCdcStalled", "600"),
)


def _literal(text: str) -> re.Pattern[str]:
    # Whole token only: "0" must not match inside "0.2" or "10000".
    return re.compile(r"(?<![\w.])" + re.escape(text) + r"(?![\w.])")


_DURATION = re.compile(r"\d+[smhd]")


def render_alert_rules(text: str, values: Mapping[str, Any], durations: Mapping[str, str] | None = None) -> str:
    """alerts.yml with the thresholds in `values` (variable -> value) put in place of the defaults.
    Each default must occur exactly once in its alert's expression, so a drifted file fails loudly.
    `durations` (alert -> "30s") replaces alerts' `for:`; the lab shortens them so its tests see
    alerts fire within a minute."""
    doc = yaml.safe_load(text)
    rules = {r["alert"]: r for g in doc["groups"] for r in g["rules"] if "alert" in r}
    for alert, duration in (durations or {}).items():
        if alert not in rules:
            raise ValueError(f"monitoring_alert_for names {alert}, which is not an alert of the rules file")
        if not _DURATION.fullmatch(str(duration)):
            raise ValueError(f"monitoring_alert_for[{alert}]: {duration!r} is not a duration like 30s, 5m or 1h")
        rules[alert]["for"] = str(duration)
    for t in ALERT_THRESHOLDS:
        rule = rules.get(t.alert)
        if rule is None:
            raise ValueError(f"alert {t.alert} (threshold {t.variable}) is not in the rules file")
        found = _literal(t.default).findall(rule["expr"])
        if len(found) != 1:
            raise ValueError(f"{t.alert}: default {t.default!r} of {t.variable} occurs {len(found)} times, not once")
        value = values.get(t.variable, t.default)
        rule["expr"] = _literal(t.default).sub(lambda _m, v=str(value): v, rule["expr"])
    return yaml.safe_dump(doc, sort_keys=False, width=200, allow_unicode=True)


# --- metric names ----------------------------------------------------------------------------

_PROMQL_WORDS = {
    "by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or", "unless", "offset",
    "inf", "nan",
}  # fmt: skip


def promql_metric_names(expr: str) -> set[str]:
    """Metric names an expression selects (a small scanner, enough for our rules: strings, label
    matchers, ranges and by/on lists are dropped; identifiers before "(" are functions)."""
    text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    text = re.sub(r"\{[^}]*\}", " ", text)
    text = re.sub(r"\[[^\]]*\]", " ", text)
    text = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", text)
    names = set()
    for m in re.finditer(r"(?<![\w.])([a-zA-Z_:][\w:]*)(\s*\()?", text):
        if m.group(2) is None and m.group(1).lower() not in _PROMQL_WORDS:
            names.add(m.group(1))
    return names


def alert_rules_metric_names(doc: Mapping[str, Any]) -> dict[str, set[str]]:
    """alert name -> metric names its expression uses."""
    return {r["alert"]: promql_metric_names(r["expr"]) for g in doc["groups"] for r in g["rules"] if "alert" in r}


def _group_choices(pattern: str) -> list[list[str] | None]:
    """For each capturing group of a JMX rule pattern: its literal alternatives if it is a plain
    `(A|B)` list, else None (matches anything)."""
    choices: list[list[str] | None] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c == "(":
            capturing = not pattern.startswith("(?", i)
            depth, j = 1, i + 1
            while depth and j < len(pattern):
                if pattern[j] == "\\":
                    j += 1
                elif pattern[j] == "(":
                    depth += 1
                elif pattern[j] == ")":
                    depth -= 1
                j += 1
            if capturing:
                body = pattern[i + 1 : j - 1]
                literal = re.fullmatch(r"[\w-]+(\|[\w-]+)*", body)
                choices.append(body.split("|") if literal else None)
        i += 1
    return choices


def jmx_metric_patterns(doc: Mapping[str, Any]) -> list[re.Pattern[str]]:
    """The metric names a JMX exporter rules file can produce, one regex per rule. `$N` expands to
    group N's literal alternatives when it has them; names are lowercased and sanitised as the
    exporter does (lowercaseOutputName, non-name characters become `_`)."""
    out = []
    for rule in doc.get("rules", []):
        name = str(rule["name"])
        choices = _group_choices(str(rule.get("pattern", "")))
        parts = []
        for piece in re.split(r"(\$\d+)", name):
            if re.fullmatch(r"\$\d+", piece):
                idx = int(piece[1:]) - 1
                opts = choices[idx] if idx < len(choices) else None
                if opts is None:
                    parts.append(r"[a-z0-9_]*")
                else:
                    parts.append("(?:" + "|".join(re.escape(re.sub(r"\W", "_", o)) for o in opts) + ")?")
            else:
                parts.append(re.escape(piece))
        regex = "".join(parts)
        if doc.get("lowercaseOutputName"):
            regex = regex.lower()
        out.append(re.compile(regex))
    return out


def metric_value(text: str, name: str) -> int:
    """The first sample of metric `name` in a Prometheus text exposition, as an integer; -1 when
    it is absent (an exporter that did not answer, or a bean the process does not have)."""
    for line in text.splitlines():
        if line.startswith(name) and line[len(name) : len(name) + 1] in (" ", "{"):
            try:
                return int(float(line.rsplit(None, 1)[-1]))
            except ValueError:
                return -1
    return -1
