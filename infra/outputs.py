"""Stack outputs: the Ansible inventory, in exactly the lab's shape (kafkakit.rules.inventory)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pulumi

from infra.encryption import DATA_DEVICE
from infra.hosts import ClusterHost, HostGroup
from infra.model import StackConfig
from kafkakit.rules.inventory import HostRecord, build_inventory


def connection_vars(cfg: StackConfig) -> dict[str, Any]:
    """The inventory's `all` vars: Ansible reaches AWS hosts through Systems Manager."""
    return {
        "ansible_connection": "community.aws.aws_ssm",
        "ansible_aws_ssm_s3_addressing_style": "virtual",
        "ansible_python_interpreter": "/usr/bin/python3",
        "kafkakit_provisioner": "pulumi",
        "kafkakit_stack": cfg.stack,
    }


def host_record(host: ClusterHost, bucket: pulumi.Input[str], extra: Mapping[str, Any]) -> pulumi.Output[HostRecord]:
    """The inventory record of one host, once AWS has given it an id and addresses."""
    plan = host.plan
    volume_id: pulumi.Input[str | None] = host.volume.id if host.volume is not None else None

    def record(values: list[Any]) -> HostRecord:
        instance_id, ip, dns, bucket_name, vol = values
        hostvars: dict[str, Any] = {
            # aws_ssm takes the instance id from here; ansible_host stays the private IP.
            "ansible_aws_ssm_instance_id": instance_id,
            "ansible_aws_ssm_region": host.region,
            "ansible_aws_ssm_bucket_name": bucket_name,
            **extra,
        }
        if vol is not None:
            hostvars["storage_volume_id"] = vol
            hostvars["storage_device_name"] = DATA_DEVICE
        return HostRecord(
            name=plan.name,
            dc=plan.dc,
            rack=plan.zone,
            private_ip=ip,
            roles=(plan.group,),
            private_dns=dns,
            ansible_host=ip,
            broker_id=plan.broker_id,
            zookeeper_id=plan.zookeeper_id,
            controller_id=plan.controller_id,
            extra=hostvars,
        )

    return pulumi.Output.all(
        host.instance.id, host.instance.private_ip, host.instance.private_dns, bucket, volume_id
    ).apply(record)


# roles/kafka_common's kafka_kraft_version (Pulumi does not read the roles; a copy, tied to it by
# tests/unit/infra/test_infra_kraft.py).
KRAFT_KAFKA_VERSION = "4.4.0"


def data_centre_vars(cfg: StackConfig) -> dict[str, dict[str, Any]]:
    """Each DC group's variables, as the lab sets them in group_vars/<dc>.yml: its metadata mode,
    and for a KRaft DC the Kafka 4.x release it runs."""
    return {
        dc.name: {"kafka_metadata_mode": dc.metadata_mode}
        | ({"kafka_version": KRAFT_KAFKA_VERSION} if dc.metadata_mode == "kraft" else {})
        for dc in cfg.data_centres
    }


def inventory_output(groups: Sequence[tuple[HostGroup, pulumi.Input[str]]], cfg: StackConfig) -> pulumi.Output[dict]:
    """build_inventory over every host; `groups` pairs each host group with its DC's bucket."""
    records = [host_record(h, bucket, group.extra_hostvars(h)) for group, bucket in groups for h in group.hosts]
    return pulumi.Output.all(*records).apply(
        lambda rs: build_inventory(rs, connection_vars(cfg), data_centre_vars(cfg))
    )
