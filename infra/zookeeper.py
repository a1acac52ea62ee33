"""The ZooKeeper ensemble of a data centre: an odd number of servers, one per AZ.

The placement (infra.placement) puts server i in AZ i and the config validation keeps the
ensemble odd, at least 3 and no larger than the AZ count; this group builds those hosts.
"""

from __future__ import annotations

from infra.hosts import HostGroup


class ZooKeeperEnsemble(HostGroup):
    component_type = "kafkakit:zookeeper:ZooKeeperEnsemble"
    group = "zookeeper"
