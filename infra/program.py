"""The whole stack, built from a validated StackConfig; `__main__` and the tests both call it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pulumi
import pulumi_aws as aws
from pulumi.runtime import config as runtime_config

from infra import lookups
from infra.access import InstanceAccess, SsmTransferBucket
from infra.config import parse_stack_config
from infra.connect import ConnectWorkers
from infra.controller import ControllerQuorum
from infra.encryption import DataEncryptionKey
from infra.hosts import HostEnvironment, HostGroup
from infra.kafka import KafkaCluster
from infra.mirrormaker import MirrorMakerGroup
from infra.model import PROJECT, ConfigError, StackConfig
from infra.monitoring import MonitoringHosts
from infra.network import DataCentreNetwork
from infra.outputs import inventory_output
from infra.peering import DataCentrePeering
from infra.placement import plan_stack, topology_of
from infra.security_groups import ClusterSecurityGroups
from infra.spark import SparkMaster, SparkWorkers
from infra.tagging import Tagger
from infra.zookeeper import ZooKeeperEnsemble
from kafkakit.rules.topology import validate as validate_topology


def load_stack_config() -> StackConfig:
    """The running stack's `kafkakit:*` settings, parsed and validated."""
    config = pulumi.Config(PROJECT)
    keys = set(runtime_config.CONFIG.get()) | set(runtime_config.get_config_env())
    raw: dict[str, Any] = {}
    for full in sorted(keys):
        ns, _, key = full.partition(":")
        if ns != PROJECT:
            continue
        try:
            raw[key] = config.get_object(key)
        except pulumi.ConfigTypeError:  # a plain string such as a region name is not JSON
            raw[key] = config.get(key)
    return parse_stack_config(raw, stack=pulumi.get_stack())


def build_stack(cfg: StackConfig) -> dict[str, Any]:
    """Register every resource of the stack; returns the values to export."""
    tagger = Tagger(cfg.stack, cfg.tags)
    providers = {
        dc.name: aws.Provider(f"aws-{dc.name}", region=dc.region, default_tags={"tags": tagger.base()})
        for dc in cfg.data_centres
    }
    # Real AZ names replace the stand-ins the config validation planned with.
    zones = {dc.name: lookups.availability_zones(dc, providers[dc.name]) for dc in cfg.data_centres}
    plans = plan_stack(cfg, zones)
    problems = validate_topology(topology_of(cfg, plans))
    if problems:
        raise ConfigError(problems)

    first = cfg.data_centres[0].name
    access = InstanceAccess(partition=lookups.partition(providers[first]), tagger=tagger, provider=providers[first])
    mm = cfg.mirrormaker
    networks: dict[str, DataCentreNetwork] = {}
    sgs: dict[str, ClusterSecurityGroups] = {}
    keys: dict[str, DataEncryptionKey] = {}
    buckets: dict[str, SsmTransferBucket] = {}
    for dc in cfg.data_centres:
        p = providers[dc.name]
        keys[dc.name] = DataEncryptionKey(dc.name, tagger=tagger, provider=p)
        buckets[dc.name] = SsmTransferBucket(dc.name, tagger=tagger, provider=p)
        networks[dc.name] = DataCentreNetwork(
            dc,
            zones[dc.name],
            nat_gateway=cfg.nat_gateway,
            ssm_endpoints=cfg.ssm_endpoints,
            tagger=tagger,
            provider=p,
        )
        sgs[dc.name] = ClusterSecurityGroups(
            dc,
            networks[dc.name].vpc.id,
            cfg=cfg,
            peer_cidrs=[o.vpc_cidr for o in cfg.data_centres if o.name != dc.name],
            with_spark=cfg.spark.enabled and cfg.spark.data_centre == dc.name,
            with_mirrormaker=mm.hosts > 0 and mm.target == dc.name,
            with_connect=dc.connect > 0,
            with_monitoring=cfg.monitoring.enabled,
            tagger=tagger,
            provider=p,
        )

    peerings = [
        DataCentrePeering(
            networks[a.name],
            networks[b.name],
            requester_provider=providers[a.name],
            accepter_provider=providers[b.name],
            tagger=tagger,
        )
        for i, a in enumerate(cfg.data_centres)
        for b in cfg.data_centres[i + 1 :]
    ]

    groups: list[tuple[HostGroup, pulumi.Output[str]]] = []
    for dc in cfg.data_centres:
        env = HostEnvironment(
            region=dc.region,
            provider=providers[dc.name],
            subnets=networks[dc.name].private_subnets,
            ami=lookups.debian_ami(dc, cfg.architecture, providers[dc.name]),
            architecture=cfg.architecture,
            instance_profile=access.profile.name,
            key=keys[dc.name],
            root_volume_gib=cfg.root_volume_gib,
            protect_data=cfg.protect_data_volumes,
            ssh_key_name=cfg.ssh.key_name,
            tagger=tagger,
        )
        sg = sgs[dc.name].groups
        bucket = buckets[dc.name].bucket.bucket
        if "zookeeper" in sg:
            groups.append((ZooKeeperEnsemble(dc.name, plans, env, sg["zookeeper"]), bucket))
        if "controller" in sg:
            groups.append((ControllerQuorum(dc.name, plans, env, sg["controller"]), bucket))
        groups.append((KafkaCluster(dc.name, plans, env, sg["kafka"], cfg), bucket))
        if "spark" in sg:
            groups.append((SparkMaster(dc.name, plans, env, sg["spark"]), bucket))
            groups.append((SparkWorkers(dc.name, plans, env, sg["spark"]), bucket))
        if "mirrormaker" in sg:
            mm2 = MirrorMakerGroup(dc.name, plans, env, sg["mirrormaker"])
            mm2.allow_into(sgs[mm.source])
            groups.append((mm2, bucket))
        if "connect" in sg:
            groups.append((ConnectWorkers(dc.name, plans, env, sg["connect"]), bucket))
        if "monitoring" in sg:
            monitor = MonitoringHosts(dc.name, plans, env, sg["monitoring"])
            # The role scrapes every host of the inventory, the other regions' included.
            monitor.allow_into(other for name, other in sgs.items() if name != dc.name)
            groups.append((monitor, bucket))

    return {
        "inventory": inventory_output(groups, cfg),
        "dataCentres": _summary(cfg, zones, networks, keys, buckets),
        "peeringConnectionIds": [p.connection.id for p in peerings],
    }


def _summary(
    cfg: StackConfig,
    zones: Mapping[str, list[str]],
    networks: Mapping[str, DataCentreNetwork],
    keys: Mapping[str, DataEncryptionKey],
    buckets: Mapping[str, SsmTransferBucket],
) -> dict[str, Any]:
    return {
        dc.name: {
            "region": dc.region,
            "availabilityZones": zones[dc.name],
            "vpcId": networks[dc.name].vpc.id,
            "vpcCidr": dc.vpc_cidr,
            "kmsKeyArn": keys[dc.name].arn,
            "ssmTransferBucket": buckets[dc.name].bucket.bucket,
        }
        for dc in cfg.data_centres
    }
