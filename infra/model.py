"""The stack's model: the frozen types a validated stack configuration is made of.

Plain data with no imports from the rest of infra/, so the reading (infra.config), the rules
(infra.config_rules), the placement and the resources can all use it without importing each other.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

PROJECT = "kafkakit"


class ConfigError(ValueError):
    """The stack configuration breaks one or more rules; `messages` holds one line each."""

    def __init__(self, messages: Sequence[str]) -> None:
        self.messages = list(messages)
        lines = "\n".join(f"  - {m}" for m in self.messages)
        super().__init__(f"invalid kafkakit stack configuration ({len(self.messages)}):\n{lines}")


@dataclass(frozen=True)
class VolumeSpec:
    """A gp3 data volume."""

    size_gib: int
    iops: int = 3000
    throughput_mibps: int = 125


@dataclass(frozen=True)
class InstanceTypes:
    zookeeper: str = "t3.medium"
    controller: str = "t3.medium"  # dedicated KRaft controllers: small heaps, little disk I/O
    kafka: str = "m6i.large"
    mirrormaker: str = "t3.medium"
    connect: str = "t3.medium"  # Kafka Connect workers: a 1 GiB heap, like MM2 (itself a Connect runtime)
    spark_master: str = "t3.medium"
    spark_worker: str = "m6i.large"
    monitoring: str = "t3.medium"

    def by_group(self) -> dict[str, str]:
        return {
            "zookeeper": self.zookeeper,
            "kafka_controller": self.controller,
            "kafka_broker": self.kafka,
            "mirrormaker": self.mirrormaker,
            "kafka_connect": self.connect,
            "spark_master": self.spark_master,
            "spark_worker": self.spark_worker,
            "monitoring": self.monitoring,
        }


@dataclass(frozen=True)
class DataCentreConfig:
    """One data centre: an AWS region, a VPC, a Kafka cluster and what holds its metadata: a
    ZooKeeper ensemble (metadata_mode "zookeeper") or dedicated KRaft controllers ("kraft").

    The field defaults are a ZooKeeper DC's; the stack config reader gives a KRaft DC
    0 ZooKeeper servers and 3 controllers unless the stack sets them. `connect` Kafka Connect workers
    form the DC's one Connect cluster (0: none)."""

    name: str
    region: str
    vpc_cidr: str
    zone_count: int = 3
    availability_zones: tuple[str, ...] = ()
    zookeepers: int = 3
    brokers: int = 3
    metadata_mode: str = "zookeeper"
    controllers: int = 0
    connect: int = 0
    client_security_group_ids: tuple[str, ...] = ()
    ami: str | None = None


@dataclass(frozen=True)
class SparkConfig:
    enabled: bool = True
    data_centre: str = ""
    workers: int = 1
    client_cidrs: tuple[str, ...] = ()


@dataclass(frozen=True)
class MonitoringConfig:
    """A Prometheus host per data centre; each scrapes the whole deployment, as the role does."""

    enabled: bool = True


@dataclass(frozen=True)
class MirrorMakerConfig:
    """MM2 pulls `source` into `target` and runs on `hosts` machines in the target DC."""

    source: str = ""
    target: str = ""
    hosts: int = 0


@dataclass(frozen=True)
class SshConfig:
    """SSH is off unless both a key pair and the admin networks are declared."""

    key_name: str | None = None
    cidrs: tuple[str, ...] = ()

    @property
    def enabled(self) -> bool:
        return bool(self.cidrs)


@dataclass(frozen=True)
class StackConfig:
    stack: str
    data_centres: tuple[DataCentreConfig, ...]
    instance_types: InstanceTypes = field(default_factory=InstanceTypes)
    kafka_volume: VolumeSpec = VolumeSpec(size_gib=100)
    zookeeper_volume: VolumeSpec = VolumeSpec(size_gib=20)
    controller_volume: VolumeSpec = VolumeSpec(size_gib=20)
    root_volume_gib: int = 20
    replication_factor: int = 3
    min_insync_replicas: int = 2
    client_cidrs: tuple[str, ...] = ()
    spark: SparkConfig = SparkConfig()
    mirrormaker: MirrorMakerConfig = MirrorMakerConfig()
    monitoring: MonitoringConfig = MonitoringConfig()
    nat_gateway: bool = True
    ssm_endpoints: bool = False
    ssh: SshConfig = SshConfig()
    protect_data_volumes: bool = True
    architecture: str = "x86_64"
    tags: Mapping[str, str] = field(default_factory=dict)

    def data_centre(self, name: str) -> DataCentreConfig:
        for dc in self.data_centres:
            if dc.name == name:
                return dc
        raise KeyError(name)
