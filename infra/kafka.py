"""The Kafka brokers of a data centre, dealt round-robin over its AZs (the racks)."""

from __future__ import annotations

from collections.abc import Sequence

import pulumi_aws as aws

from infra.hosts import ClusterHost, HostEnvironment, HostGroup
from infra.model import StackConfig
from infra.placement import HostPlan


class KafkaCluster(HostGroup):
    component_type = "kafkakit:kafka:KafkaCluster"
    group = "kafka_broker"

    def __init__(
        self,
        dc_name: str,
        plans: Sequence[HostPlan],
        env: HostEnvironment,
        security_group: aws.ec2.SecurityGroup,
        cfg: StackConfig,
    ) -> None:
        self.cfg = cfg
        super().__init__(dc_name, plans, env, security_group)

    def extra_hostvars(self, host: ClusterHost) -> dict[str, object]:
        # The preflight reads these from a broker, so it checks what this stack validated.
        return {
            "kafka_default_replication_factor": self.cfg.replication_factor,
            "kafka_min_insync_replicas": self.cfg.min_insync_replicas,
        }
