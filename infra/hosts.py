"""One EC2 host per HostPlan, hardened the same way whatever it runs.

Every host: a private subnet in its planned AZ, no public IP, IMDSv2 only, the SSM instance
profile, a root volume encrypted with the DC's key, and (ZooKeeper, KRaft controllers, Kafka
brokers) a separate encrypted gp3 data volume in the same AZ.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from infra.encryption import DataEncryptionKey, encrypted_data_volume
from infra.placement import HostPlan
from infra.tagging import Tagger


@dataclass(frozen=True)
class HostEnvironment:
    """What every host of one data centre is built from."""

    region: str
    provider: aws.Provider
    subnets: Mapping[str, aws.ec2.Subnet]  # by AZ
    ami: str
    architecture: str
    instance_profile: pulumi.Input[str]
    key: DataEncryptionKey
    root_volume_gib: int
    protect_data: bool
    ssh_key_name: str | None
    tagger: Tagger


def bootstrap_user_data(region: str, architecture: str) -> str:
    """First-boot script: Debian AMIs lack the SSM agent, and Ansible connects only through it."""
    arch = "amd64" if architecture == "x86_64" else "arm64"
    url = f"https://s3.{region}.amazonaws.com/amazon-ssm-{region}/latest/debian_{arch}/amazon-ssm-agent.deb"
    return "\n".join(
        [
            "#!/bin/bash",
            "set -euo pipefail",
            "if ! systemctl is-active --quiet amazon-ssm-agent; then",
            f"  curl -fsSL --retry 10 -o /tmp/amazon-ssm-agent.deb {url}",
            "  dpkg -i /tmp/amazon-ssm-agent.deb",
            "  systemctl enable --now amazon-ssm-agent",
            "fi",
            "",
        ]
    )


class ClusterHost(pulumi.ComponentResource):
    instance: aws.ec2.Instance
    volume: aws.ebs.Volume | None
    attachment: aws.ec2.VolumeAttachment | None

    def __init__(
        self,
        plan: HostPlan,
        env: HostEnvironment,
        security_group: aws.ec2.SecurityGroup,
        parent: pulumi.Resource,
    ) -> None:
        super().__init__("kafkakit:host:ClusterHost", plan.name, None, pulumi.ResourceOptions(parent=parent))
        self.plan = plan
        self.region = env.region
        opts = pulumi.ResourceOptions(parent=self, provider=env.provider)
        labels = {"DataCentre": plan.dc, "Role": plan.group, "Rack": plan.zone}
        self.instance = aws.ec2.Instance(
            plan.name,
            ami=env.ami,
            instance_type=plan.instance_type,
            subnet_id=env.subnets[plan.zone].id,
            availability_zone=plan.zone,
            vpc_security_group_ids=[security_group.id],
            associate_public_ip_address=False,
            iam_instance_profile=env.instance_profile,
            key_name=env.ssh_key_name,
            metadata_options={
                "http_endpoint": "enabled",
                "http_tokens": "required",  # IMDSv2 only
                "http_put_response_hop_limit": 1,  # no metadata from containers on the host
            },
            root_block_device={
                "volume_type": "gp3",
                "volume_size": env.root_volume_gib,
                "encrypted": True,
                "kms_key_id": env.key.arn,
                "delete_on_termination": True,  # the root holds no data; data volumes do
                "tags": env.tagger(f"{plan.name}-root", **labels),
            },
            ebs_optimized=True,
            user_data=bootstrap_user_data(env.region, env.architecture),
            tags=env.tagger(plan.name, **labels),
            # AMI or bootstrap changes must not replace a data node behind the operator's back:
            # roll them host by host on purpose.
            opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(ignore_changes=["ami", "userData"])),
        )
        self.volume = self.attachment = None
        if plan.data_volume is not None:
            self.volume, self.attachment = encrypted_data_volume(
                plan.name,
                spec=plan.data_volume,
                zone=plan.zone,
                instance=self.instance,
                key=env.key,
                protect=env.protect_data,
                tags=env.tagger(f"{plan.name}-data", **labels),
                opts=opts,
            )
        self.register_outputs({"instance_id": self.instance.id})


class HostGroup(pulumi.ComponentResource):
    """The hosts of one component group in one data centre; subclasses name the component."""

    component_type = "kafkakit:host:HostGroup"
    group = ""

    def __init__(
        self,
        dc_name: str,
        plans: Sequence[HostPlan],
        env: HostEnvironment,
        security_group: aws.ec2.SecurityGroup,
    ) -> None:
        super().__init__(
            self.component_type,
            f"{dc_name}-{self.group}",
            None,
            pulumi.ResourceOptions(providers=[env.provider]),
        )
        mine = [p for p in plans if p.dc == dc_name and p.group == self.group]
        self.hosts = [ClusterHost(p, env, security_group, self) for p in mine]
        self.register_outputs({"hosts": [h.plan.name for h in self.hosts]})

    def extra_hostvars(self, host: ClusterHost) -> dict[str, object]:
        """Component-specific inventory variables of `host`; none by default."""
        return {}
