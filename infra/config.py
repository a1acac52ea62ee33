"""Reading the stack configuration: the `kafkakit:*` keys into a validated `StackConfig`.

Validation runs before any resource is created and reports every problem at once in one
`ConfigError`:
  1. here, the shape of each key (types, unknown keys);
  2. in infra.config_rules, the cloud-only rules (regions, CIDRs, AZs, instance types, gp3
     limits, reachability) and the topology rules the Ansible preflight also applies
     (`kafkakit.rules.topology.validate`) on the topology the stack would build.
The types themselves live in infra.model.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from infra.config_rules import breaks_planning, cloud_errors, placeholder_zones, topology_errors
from infra.model import (
    PROJECT,
    ConfigError,
    DataCentreConfig,
    InstanceTypes,
    MirrorMakerConfig,
    MonitoringConfig,
    SparkConfig,
    SshConfig,
    StackConfig,
    VolumeSpec,
)


class _Reader:
    """Reads typed values out of one mapping, recording a message per bad or unknown key."""

    def __init__(self, raw: Any, where: str, errors: list[str]) -> None:
        self.where = where
        self.errors = errors
        self.seen: set[str] = set()
        if raw is None:
            raw = {}
        if not isinstance(raw, Mapping):
            errors.append(f"{where}: expected a mapping, got {type(raw).__name__}")
            raw = {}
        self.raw: Mapping[str, Any] = raw

    def _key(self, key: str) -> str:
        return f"{PROJECT}:{key}" if self.where == PROJECT else f"{self.where}.{key}"

    def _get(self, key: str) -> Any:
        self.seen.add(key)
        return self.raw.get(key)

    def int(self, key: str, default: int) -> int:
        value = self._get(key)
        if value is None:
            return default
        if isinstance(value, str) and re.fullmatch(r"-?\d+", value.strip()):
            return int(value)
        # bool is an int subclass; `true` is never a count
        if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
            self.errors.append(f"{self._key(key)}: expected a whole number, got {value!r}")
            return default
        return int(value)

    def bool(self, key: str, default: bool) -> bool:
        value = self._get(key)
        if value is None:
            return default
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
        if not isinstance(value, bool):
            self.errors.append(f"{self._key(key)}: expected true or false, got {value!r}")
            return default
        return value

    def str(self, key: str, default: str | None = None) -> str | None:
        value = self._get(key)
        if value is None:
            return default
        if not isinstance(value, str) or not value.strip():
            self.errors.append(f"{self._key(key)}: expected a non-empty string, got {value!r}")
            return default
        return value.strip()

    def str_list(self, key: str) -> tuple[str, ...]:
        value = self._get(key)
        if value is None:
            return ()
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.errors.append(f"{self._key(key)}: expected a list of strings, got {value!r}")
            return ()
        return tuple(v.strip() for v in value)

    def str_map(self, key: str) -> dict[str, str]:
        value = self._get(key)
        if value is None:
            return {}
        if not isinstance(value, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in value.items()
        ):
            self.errors.append(f"{self._key(key)}: expected a mapping of strings, got {value!r}")
            return {}
        return dict(value)

    def section(self, key: str) -> _Reader:
        return _Reader(self._get(key), self._key(key), self.errors)

    def sections(self, key: str) -> list[_Reader]:
        value = self._get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            self.errors.append(f"{self._key(key)}: expected a list, got {type(value).__name__}")
            return []
        return [_Reader(v, f"{self._key(key)}[{i}]", self.errors) for i, v in enumerate(value)]

    def finish(self) -> None:
        for key in sorted(set(self.raw) - self.seen):
            self.errors.append(f"{self._key(key)}: unknown setting")


def _read_volume(r: _Reader, default: VolumeSpec) -> VolumeSpec:
    spec = VolumeSpec(
        size_gib=r.int("sizeGib", default.size_gib),
        iops=r.int("iops", default.iops),
        throughput_mibps=r.int("throughputMibps", default.throughput_mibps),
    )
    r.finish()
    return spec


def _read_data_centre(r: _Reader) -> DataCentreConfig:
    azs = r.str_list("availabilityZones")
    # An unknown mode is kafkakit.rules.topology's to refuse (the preflight says it the same way).
    mode = r.str("metadataMode", "zookeeper") or "zookeeper"
    kraft = mode == "kraft"
    dc = DataCentreConfig(
        name=r.str("name") or "",
        region=r.str("region") or "",
        vpc_cidr=r.str("vpcCidr") or "",
        zone_count=r.int("zoneCount", len(azs) or 3),
        availability_zones=azs,
        metadata_mode=mode,
        zookeepers=r.int("zookeepers", 0 if kraft else 3),
        controllers=r.int("controllers", 3 if kraft else 0),
        brokers=r.int("brokers", 3),
        connect=r.int("connect", 0),
        client_security_group_ids=r.str_list("clientSecurityGroupIds"),
        ami=r.str("ami"),
    )
    for key, value in (("name", dc.name), ("region", dc.region), ("vpcCidr", dc.vpc_cidr)):
        if not value and key not in r.raw:
            r.errors.append(f"{r.where}.{key}: required")
    r.finish()
    return dc


def parse_stack_config(raw: Mapping[str, Any], stack: str) -> StackConfig:
    """A validated StackConfig from the `kafkakit:*` settings (keys without the namespace)."""
    errors: list[str] = []
    top = _Reader(raw, PROJECT, errors)
    dcs = tuple(_read_data_centre(r) for r in top.sections("dataCentres"))
    names = [dc.name for dc in dcs]

    types_r = top.section("instanceTypes")
    d = InstanceTypes()
    types = InstanceTypes(
        zookeeper=types_r.str("zookeeper", d.zookeeper) or d.zookeeper,
        controller=types_r.str("controller", d.controller) or d.controller,
        kafka=types_r.str("kafka", d.kafka) or d.kafka,
        mirrormaker=types_r.str("mirrormaker", d.mirrormaker) or d.mirrormaker,
        connect=types_r.str("connect", d.connect) or d.connect,
        spark_master=types_r.str("sparkMaster", d.spark_master) or d.spark_master,
        spark_worker=types_r.str("sparkWorker", d.spark_worker) or d.spark_worker,
        monitoring=types_r.str("monitoring", d.monitoring) or d.monitoring,
    )
    types_r.finish()

    spark_r = top.section("spark")
    spark = SparkConfig(
        enabled=spark_r.bool("enabled", True),
        data_centre=spark_r.str("dataCentre", names[0] if names else "") or "",
        workers=spark_r.int("workers", 1),
        client_cidrs=spark_r.str_list("clientCidrs"),
    )
    spark_r.finish()

    mm_r = top.section("mirrormaker")
    two = len(names) >= 2
    mirrormaker = MirrorMakerConfig(
        source=mm_r.str("source", names[0] if two else "") or "",
        target=mm_r.str("target", names[1] if two else "") or "",
        hosts=mm_r.int("hosts", 1 if two else 0),
    )
    mm_r.finish()

    monitoring_r = top.section("monitoring")
    monitoring = MonitoringConfig(enabled=monitoring_r.bool("enabled", True))
    monitoring_r.finish()

    ssh_r = top.section("ssh")
    ssh = SshConfig(key_name=ssh_r.str("keyName"), cidrs=ssh_r.str_list("cidrs"))
    ssh_r.finish()

    base = StackConfig(stack=stack, data_centres=())
    cfg = StackConfig(
        stack=stack,
        data_centres=dcs,
        instance_types=types,
        kafka_volume=_read_volume(top.section("kafkaVolume"), base.kafka_volume),
        zookeeper_volume=_read_volume(top.section("zookeeperVolume"), base.zookeeper_volume),
        controller_volume=_read_volume(top.section("controllerVolume"), base.controller_volume),
        root_volume_gib=top.int("rootVolumeGib", base.root_volume_gib),
        replication_factor=top.int("replicationFactor", base.replication_factor),
        min_insync_replicas=top.int("minInsyncReplicas", base.min_insync_replicas),
        client_cidrs=top.str_list("clientCidrs"),
        spark=spark,
        mirrormaker=mirrormaker,
        monitoring=monitoring,
        nat_gateway=top.bool("natGateway", base.nat_gateway),
        ssm_endpoints=top.bool("ssmEndpoints", base.ssm_endpoints),
        ssh=ssh,
        protect_data_volumes=top.bool("protectDataVolumes", base.protect_data_volumes),
        architecture=top.str("architecture", base.architecture) or base.architecture,
        tags=top.str_map("tags"),
    )
    top.finish()
    if errors:
        raise ConfigError(errors)
    errors = cloud_errors(cfg)
    if not any(breaks_planning(dc) for dc in cfg.data_centres):
        errors += topology_errors(cfg, placeholder_zones(cfg))
    if errors:
        raise ConfigError(errors)
    return cfg
