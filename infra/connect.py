"""Kafka Connect workers: the one distributed Connect cluster of each data centre that declares
workers, a client of that data centre's brokers."""

from __future__ import annotations

from infra.hosts import HostGroup


class ConnectWorkers(HostGroup):
    component_type = "kafkakit:connect:ConnectWorkers"
    group = "kafka_connect"
