"""Each port the services listen on is defined once, in one role's defaults. Pulumi (infra/ports.py,
which opens the security groups) and kafkakit.monitoring.prometheus (the lab tests) cannot read role defaults
at run time, so they hold copies; this test ties every copy to its definition, and fails when a
role gains a port that no copy follows."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from stack_harness import ROOT

from infra import ports
from kafkakit.monitoring import prometheus as monitoring

# (role, variable in its defaults) -> the Python copy of its value.
ROLE_PORTS: dict[tuple[str, str], int] = {
    ("kafka_common", "zookeeper_secure_client_port"): ports.ZOOKEEPER_CLIENT_TLS,
    ("zookeeper", "zookeeper_peer_port"): ports.ZOOKEEPER_PEER,
    ("zookeeper", "zookeeper_election_port"): ports.ZOOKEEPER_ELECTION,
    ("kafka_common", "kafka_internal_port"): ports.KAFKA_INTER_BROKER,
    ("kafka_common", "kafka_client_port"): ports.KAFKA_CLIENT,
    ("kafka_common", "kafka_controller_port"): ports.KAFKA_CONTROLLER,
    ("mirrormaker2", "mirrormaker_rest_port"): ports.MIRRORMAKER_REST,
    ("kafka_connect", "kafka_connect_rest_port"): ports.KAFKA_CONNECT_REST,
    ("spark", "spark_master_port"): ports.SPARK_MASTER,
    ("spark", "spark_master_webui_port"): ports.SPARK_MASTER_UI,
    ("spark", "spark_worker_webui_port"): ports.SPARK_WORKER_UI,
    ("spark", "spark_driver_port"): ports.SPARK_DRIVER,
    ("spark", "spark_block_manager_port"): ports.SPARK_BLOCK_MANAGER,
    ("monitoring", "monitoring_prometheus_port"): ports.PROMETHEUS,
    ("monitoring", "monitoring_node_exporter_port"): ports.NODE_EXPORTER,
    # Scraped by the Prometheus on the same host: no security group rule, only the lab tests use it.
    ("monitoring", "monitoring_lag_exporter_port"): monitoring.LAG_EXPORTER_PORT,
    # The same: the source databases' exporters (the first one's port; each next one's is + 1).
    ("monitoring", "monitoring_postgres_exporter_port"): monitoring.POSTGRES_EXPORTER_PORT,
}
# Port variables with no Python copy, and why (the bench's PLAINTEXT port is no role variable:
# ansible/lab/bench-listener.yml sets it as a dynamic overlay).
UNTIED: dict[tuple[str, str], str] = {
    ("postgresql", "postgresql_port"): "the lab's stand-in database; on AWS the database is the user's",
}
# Ports infra/ports.py names that no role listens on: the security groups keep them closed.
NEVER_OPENED = {ports.ZOOKEEPER_CLIENT_PLAIN, ports.KAFKA_PLAINTEXT}


def role_defaults(role: str) -> dict[str, Any]:
    return yaml.safe_load((ROOT / "roles" / role / "defaults" / "main.yml").read_text()) or {}


def port_variables() -> set[tuple[str, str]]:
    """Every (role, variable) of the roles' defaults named *_port."""
    found = set()
    for path in sorted((ROOT / "roles").glob("*/defaults/main.yml")):
        role = path.parent.parent.name
        found |= {(role, name) for name in role_defaults(role) if name.endswith("_port")}
    return found


@pytest.mark.parametrize(("role", "variable"), sorted(ROLE_PORTS))
def test_the_python_copy_equals_the_role_default(role: str, variable: str) -> None:
    assert role_defaults(role)[variable] == ROLE_PORTS[role, variable]


def test_the_jmx_exporter_ports_are_the_monitoring_roles() -> None:
    assert role_defaults("monitoring")["monitoring_jmx_ports"] == monitoring.JMX_PORTS
    assert monitoring.JMX_PORTS == {
        "kafka_broker": ports.JMX_KAFKA_BROKER,
        "zookeeper": ports.JMX_ZOOKEEPER,
        "mirrormaker": ports.JMX_MIRRORMAKER,
        "kafka_controller": ports.JMX_KAFKA_CONTROLLER,
        "kafka_connect": ports.JMX_KAFKA_CONNECT,
    }
    assert (monitoring.PROMETHEUS_PORT, monitoring.NODE_EXPORTER_PORT) == (ports.PROMETHEUS, ports.NODE_EXPORTER)


def test_every_port_of_the_roles_has_its_copy_or_a_reason() -> None:
    assert port_variables() == set(ROLE_PORTS) | set(UNTIED)


def test_every_data_port_of_the_security_groups_is_a_role_default() -> None:
    from_roles = set(ROLE_PORTS.values()) | set(monitoring.JMX_PORTS.values())
    assert ports.DATA_PORTS - NEVER_OPENED <= from_roles
    assert not NEVER_OPENED & from_roles
