"""MirrorMaker 2 hosts, in the target data centre (MM2 pulls from the source)."""

from __future__ import annotations

from infra import ports
from infra.hosts import HostGroup
from infra.security_groups import ClusterSecurityGroups, Source


class MirrorMakerGroup(HostGroup):
    component_type = "kafkakit:mirrormaker:MirrorMakerGroup"
    group = "mirrormaker"

    def allow_into(self, source: ClusterSecurityGroups) -> None:
        """Let these hosts reach the source DC's client port. Security groups cannot be
        referenced across regions, so each host is allowed by its own /32."""
        for host in self.hosts:
            cidr = host.instance.private_ip.apply(lambda ip: f"{ip}/32")
            source.allow(
                "kafka",
                ports.KAFKA_CLIENT,
                [Source(host.plan.name, cidr=cidr)],
                "MirrorMaker 2 from the target data centre",
            )
