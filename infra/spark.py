"""The Spark standalone cluster: a master and its workers, beside the Kafka cluster they read."""

from __future__ import annotations

from infra.hosts import HostGroup


class SparkMaster(HostGroup):
    component_type = "kafkakit:spark:SparkMaster"
    group = "spark_master"


class SparkWorkers(HostGroup):
    component_type = "kafkakit:spark:SparkWorkers"
    group = "spark_worker"
