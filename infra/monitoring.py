"""The monitoring host of each data centre: Prometheus, scraping the whole deployment."""

from __future__ import annotations

from collections.abc import Iterable

from infra.hosts import HostGroup
from infra.security_groups import ClusterSecurityGroups, Source


class MonitoringHosts(HostGroup):
    component_type = "kafkakit:monitoring:MonitoringHosts"
    group = "monitoring"

    def allow_into(self, remote: Iterable[ClusterSecurityGroups]) -> None:
        """Let these hosts scrape (and read the Connect REST API of) the other data centres' hosts.
        Security groups cannot be referenced across regions, so each host is allowed by its own /32."""
        for host in self.hosts:
            cidr = host.instance.private_ip.apply(lambda ip: f"{ip}/32")
            source = Source(host.plan.name, cidr=cidr)
            for sgs in remote:
                sgs.allow_monitoring([source])
