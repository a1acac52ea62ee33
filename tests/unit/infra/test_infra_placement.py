"""Placement: AZ spread, ids and the topology the preflight sees (pure, no Pulumi)."""

from __future__ import annotations

import ipaddress
from collections import Counter

import pytest
from stack_harness import example_config

from infra.network import subnet_cidrs
from infra.placement import instance_count, plan_stack, round_robin, topology_of
from kafkakit.rules.topology import validate

ZONES = {"dc1": ["eu-west-1a", "eu-west-1b", "eu-west-1c"], "dc2": ["x-1a", "x-1b", "x-1c"]}


@pytest.mark.parametrize("count", range(0, 13))
@pytest.mark.parametrize("zones", [1, 2, 3, 4, 6])
def test_round_robin_counts_differ_by_at_most_one(count: int, zones: int) -> None:
    names = [f"z{i}" for i in range(zones)]
    per_zone = Counter(round_robin(count, names))
    assert sum(per_zone.values()) == count
    assert max(per_zone.values(), default=0) - min((per_zone[z] for z in names), default=0) <= 1


def test_production_plan_spreads_and_numbers_every_host() -> None:
    cfg = example_config("production")
    hosts = plan_stack(cfg, ZONES)
    for dc, zones in ZONES.items():
        brokers = [h for h in hosts if h.dc == dc and h.group == "kafka_broker"]
        assert Counter(b.zone for b in brokers) == dict.fromkeys(zones, 2)
        assert sorted(b.broker_id for b in brokers) == [1, 2, 3, 4, 5, 6]
        zks = [h for h in hosts if h.dc == dc and h.group == "zookeeper"]
        assert [z.zone for z in zks] == zones and [z.zookeeper_id for z in zks] == [1, 2, 3]
        assert all(b.data_volume == cfg.kafka_volume for b in brokers)
        assert all(z.data_volume == cfg.zookeeper_volume for z in zks)
    others = [h for h in hosts if h.group not in ("kafka_broker", "zookeeper")]
    assert all(h.data_volume is None and h.broker_id is None for h in others)
    assert len({h.name for h in hosts}) == len(hosts)


def test_the_planned_topology_passes_the_preflight_rules() -> None:
    for stack in ("small", "production"):
        cfg = example_config(stack)
        topology = topology_of(cfg, plan_stack(cfg, ZONES))
        assert validate(topology) == []
        dc1 = topology.clusters[0]
        assert {b.rack for b in dc1.brokers} == set(ZONES["dc1"])
        assert dc1.replication_factor == 3 and dc1.min_insync_replicas == 2


def test_instance_counts_of_the_example_stacks() -> None:
    small = instance_count(plan_stack(example_config("small"), ZONES))
    production = instance_count(plan_stack(example_config("production"), ZONES))
    assert small == {
        "zookeeper": 3,  # dc1, in ZooKeeper mode
        "kafka_controller": 3,  # dc2, in KRaft mode
        "kafka_broker": 6,
        "mirrormaker": 1,
        "kafka_connect": 2,  # dc1, as in the lab
        "spark_master": 1,
        "spark_worker": 1,
        "monitoring": 2,  # one per data centre
        "source_db": 0,  # the user's database is theirs: never provisioned
    }
    assert sum(production.values()) == 29 and production["kafka_broker"] == 12
    assert production["kafka_connect"] == 3
    assert production["kafka_controller"] == 0  # both DCs in ZooKeeper mode


@pytest.mark.parametrize("cidr", ["10.10.0.0/16", "172.16.0.0/20", "192.168.4.0/24"])
def test_subnets_are_disjoint_sixteenths_inside_the_vpc(cidr: str) -> None:
    private, public = subnet_cidrs(cidr, 6)
    nets = [ipaddress.IPv4Network(c) for c in [*private, public]]
    vpc = ipaddress.IPv4Network(cidr)
    assert all(n.subnet_of(vpc) and n.prefixlen == vpc.prefixlen + 4 for n in nets)
    assert len(set(nets)) == 7
