"""The TCP ports the kit's services listen on, shared by the security groups and the policy pack.

Each is defined in a role's defaults (roles/*/defaults/main.yml), which is what the hosts listen
on; Pulumi does not read those, so these are copies, tied to the roles' values by
tests/unit/infra/test_infra_ports.py.
"""

from __future__ import annotations

from kafkakit.monitoring import prometheus as monitoring

ZOOKEEPER_CLIENT_PLAIN = 2181  # never opened: the ensemble only serves TLS clients
ZOOKEEPER_CLIENT_TLS = 2182
ZOOKEEPER_PEER = 2888
ZOOKEEPER_ELECTION = 3888

KAFKA_INTER_BROKER = 9091
KAFKA_PLAINTEXT = 9092  # never opened: there is no PLAINTEXT listener
KAFKA_CLIENT = 9093
# KRaft: the dedicated controllers' listener (mutual TLS); brokers and the other controllers of
# the same data centre connect to it (Raft, broker registration and heartbeats, metadata fetches).
KAFKA_CONTROLLER = 9094

SPARK_MASTER = 7077
SPARK_MASTER_UI = 8080
SPARK_WORKER_UI = 8081
SPARK_DRIVER = 7078  # spark_driver_port of the spark role
SPARK_BLOCK_MANAGER = 7079  # spark_block_manager_port; Spark tries the next ports when it is taken
# The worker daemon's RPC port is ephemeral (the role does not pin it) and the master connects
# back to it, so the Spark group talks to itself over the unprivileged range.
SPARK_INTERNAL = (1024, 65535)

MIRRORMAKER_REST = 8083  # dedicated MM2 nodes forward task configs to each other over REST
# Kafka Connect workers' REST API (HTTPS, mutual TLS); followers forward writes to the leader on it.
KAFKA_CONNECT_REST = 8083

# The Ansible side's constants, so Prometheus scrapes the ports the security groups open.
PROMETHEUS = monitoring.PROMETHEUS_PORT
NODE_EXPORTER = monitoring.NODE_EXPORTER_PORT
JMX_KAFKA_BROKER = monitoring.JMX_PORTS["kafka_broker"]
JMX_ZOOKEEPER = monitoring.JMX_PORTS["zookeeper"]
JMX_MIRRORMAKER = monitoring.JMX_PORTS["mirrormaker"]
# The controllers' JMX exporter agent. kafkakit.monitoring.prometheus names no port for them yet; once it
# does ("kafka_controller"), that one is used here, so the two cannot drift apart.
JMX_KAFKA_CONTROLLER = monitoring.JMX_PORTS["kafka_controller"]
JMX_KAFKA_CONNECT = monitoring.JMX_PORTS["kafka_connect"]

SSH = 22
HTTPS = 443
HTTP = 80

# Every port that carries cluster data or controls it; none may be open to the internet.
DATA_PORTS: frozenset[int] = frozenset(
    {
        ZOOKEEPER_CLIENT_PLAIN,
        ZOOKEEPER_CLIENT_TLS,
        ZOOKEEPER_PEER,
        ZOOKEEPER_ELECTION,
        KAFKA_INTER_BROKER,
        KAFKA_PLAINTEXT,
        KAFKA_CLIENT,
        KAFKA_CONTROLLER,
        SPARK_MASTER,
        SPARK_MASTER_UI,
        SPARK_WORKER_UI,
        SPARK_DRIVER,
        SPARK_BLOCK_MANAGER,
        MIRRORMAKER_REST,
        KAFKA_CONNECT_REST,
        # Metrics endpoints answer without authentication.
        PROMETHEUS,
        NODE_EXPORTER,
        JMX_KAFKA_BROKER,
        JMX_ZOOKEEPER,
        JMX_MIRRORMAKER,
        JMX_KAFKA_CONTROLLER,
        JMX_KAFKA_CONNECT,
    }
)


def range_holds_data_port(from_port: int, to_port: int) -> bool:
    """True when the port range [from_port, to_port] includes a data port."""
    return any(from_port <= p <= to_port for p in DATA_PORTS)
