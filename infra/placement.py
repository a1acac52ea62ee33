"""Where every host goes: its name, group, availability zone (= rack) and ids.

Pure functions, no Pulumi: the config validation plans with stand-in AZ names, the program
plans again with the region's real AZs, and both get the same spread.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from infra.model import DataCentreConfig, StackConfig, VolumeSpec
from kafkakit.rules.inventory import COMPONENT_GROUPS
from kafkakit.rules.topology import FIRST_CONTROLLER_ID, Cluster, Node, Topology


@dataclass(frozen=True)
class HostPlan:
    name: str  # the inventory hostname
    dc: str
    group: str  # one of kafkakit.rules.inventory.COMPONENT_GROUPS
    zone: str
    instance_type: str
    broker_id: int | None = None
    zookeeper_id: int | None = None
    controller_id: int | None = None
    data_volume: VolumeSpec | None = None


def round_robin(count: int, zones: Sequence[str]) -> list[str]:
    """The AZ of each of `count` hosts, dealt in turn so the per-AZ counts differ by at most 1."""
    return [zones[i % len(zones)] for i in range(count)]


def plan_data_centre(cfg: StackConfig, dc: DataCentreConfig, zones: Sequence[str]) -> list[HostPlan]:
    types = cfg.instance_types
    hosts = [
        # Server i in AZ i: the config check keeps the ensemble no larger than the AZ count.
        HostPlan(
            name=f"{dc.name}-zk-{i + 1}",
            dc=dc.name,
            group="zookeeper",
            zone=zone,
            instance_type=types.zookeeper,
            zookeeper_id=i + 1,
            data_volume=cfg.zookeeper_volume,
        )
        for i, zone in enumerate(round_robin(dc.zookeepers, zones))
    ]
    hosts += [
        # KRaft: controller i in AZ i, as the ZooKeeper servers; node ids 101, 102, ... never meet
        # a broker_id. The config check keeps the quorum no larger than the AZ count.
        HostPlan(
            name=f"{dc.name}-controller-{i + 1}",
            dc=dc.name,
            group="kafka_controller",
            zone=zone,
            instance_type=types.controller,
            controller_id=FIRST_CONTROLLER_ID + i,
            data_volume=cfg.controller_volume,
        )
        for i, zone in enumerate(round_robin(dc.controllers, zones))
    ]
    hosts += [
        HostPlan(
            name=f"{dc.name}-kafka-{i + 1}",
            dc=dc.name,
            group="kafka_broker",
            zone=zone,
            instance_type=types.kafka,
            broker_id=i + 1,
            data_volume=cfg.kafka_volume,
        )
        for i, zone in enumerate(round_robin(dc.brokers, zones))
    ]
    mm = cfg.mirrormaker
    if mm.hosts > 0 and mm.target == dc.name:
        hosts += [
            HostPlan(f"{dc.name}-mm2-{i + 1}", dc.name, "mirrormaker", zone, types.mirrormaker)
            for i, zone in enumerate(round_robin(mm.hosts, zones))
        ]
    hosts += [
        # Dealt over the AZs like the brokers, so an AZ outage leaves workers to take over its tasks.
        HostPlan(f"{dc.name}-connect-{i + 1}", dc.name, "kafka_connect", zone, types.connect)
        for i, zone in enumerate(round_robin(dc.connect, zones))
    ]
    if cfg.spark.enabled and cfg.spark.data_centre == dc.name:
        hosts.append(HostPlan(f"{dc.name}-spark-master", dc.name, "spark_master", zones[0], types.spark_master))
        hosts += [
            HostPlan(f"{dc.name}-spark-worker-{i + 1}", dc.name, "spark_worker", zone, types.spark_worker)
            for i, zone in enumerate(round_robin(cfg.spark.workers, zones))
        ]
    if cfg.monitoring.enabled:
        # One per DC, so the loss of a region is still seen (and alerted on) from the others.
        hosts.append(HostPlan(f"{dc.name}-monitor-1", dc.name, "monitoring", zones[0], types.monitoring))
    return hosts


def plan_stack(cfg: StackConfig, zones: Mapping[str, Sequence[str]]) -> list[HostPlan]:
    """Every host of the stack, data centre by data centre, given each DC's AZ names."""
    return [h for dc in cfg.data_centres for h in plan_data_centre(cfg, dc, zones[dc.name])]


def topology_of(cfg: StackConfig, hosts: Sequence[HostPlan]) -> Topology:
    """The Topology these hosts form, in the shape the Ansible preflight validates."""
    clusters = []
    for dc in cfg.data_centres:
        mine = [h for h in hosts if h.dc == dc.name]
        clusters.append(
            Cluster(
                name=dc.name,
                zookeepers=[Node(h.name, h.zookeeper_id or 0, h.zone) for h in mine if h.group == "zookeeper"],
                controllers=[
                    Node(h.name, h.controller_id if h.controller_id is not None else -1, h.zone)
                    for h in mine
                    if h.group == "kafka_controller"
                ],
                brokers=[
                    Node(h.name, h.broker_id if h.broker_id is not None else -1, h.zone)
                    for h in mine
                    if h.group == "kafka_broker"
                ],
                replication_factor=cfg.replication_factor,
                min_insync_replicas=cfg.min_insync_replicas,
                metadata_mode=dc.metadata_mode,
            )
        )
    return Topology(clusters=clusters)


def instance_count(hosts: Sequence[HostPlan]) -> dict[str, int]:
    """Instances per component group; the cost section of docs/cloud.md is built from it."""
    counts = dict.fromkeys(COMPONENT_GROUPS, 0)
    for h in hosts:
        counts[h.group] += 1
    return counts
