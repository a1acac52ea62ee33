"""Data at rest: one customer-managed KMS key per data centre and the EBS volumes it encrypts."""

from __future__ import annotations

import pulumi
import pulumi_aws as aws

from infra.model import VolumeSpec
from infra.tagging import Tagger

DATA_DEVICE = "/dev/sdf"  # shows up as an NVMe device on Nitro; the storage role finds it by volume id


class DataEncryptionKey(pulumi.ComponentResource):
    """The DC's CMK. KMS keys are regional, so each data centre has its own."""

    key: aws.kms.Key

    def __init__(self, dc_name: str, *, tagger: Tagger, provider: aws.Provider) -> None:
        super().__init__(
            "kafkakit:encryption:DataEncryptionKey",
            f"{dc_name}-data-key",
            None,
            pulumi.ResourceOptions(providers=[provider]),
        )
        opts = pulumi.ResourceOptions(parent=self, provider=provider)
        self.key = aws.kms.Key(
            f"{dc_name}-data-key",
            description=f"kafkakit {tagger.stack} {dc_name}: EBS data and root volumes",
            enable_key_rotation=True,
            deletion_window_in_days=30,
            tags=tagger(f"{dc_name}-data-key", DataCentre=dc_name),
            opts=opts,
        )
        aws.kms.Alias(
            f"{dc_name}-data-key-alias",
            name=f"alias/kafkakit-{tagger.stack}-{dc_name}-data",
            target_key_id=self.key.key_id,
            opts=opts,
        )
        self.register_outputs({"arn": self.key.arn})

    @property
    def arn(self) -> pulumi.Output[str]:
        return self.key.arn


def encrypted_data_volume(
    name: str,
    *,
    spec: VolumeSpec,
    zone: str,
    instance: aws.ec2.Instance,
    key: DataEncryptionKey,
    protect: bool,
    tags: dict[str, str],
    opts: pulumi.ResourceOptions,
) -> tuple[aws.ebs.Volume, aws.ec2.VolumeAttachment]:
    """A gp3 volume in the instance's own AZ, attached to it.

    A separate Volume (not a block device of the instance) outlives the instance: replacing or
    terminating a broker leaves its data in place for the replacement to re-attach.
    """
    volume = aws.ebs.Volume(
        f"{name}-data",
        availability_zone=zone,
        type="gp3",
        size=spec.size_gib,
        iops=spec.iops,
        throughput=spec.throughput_mibps,
        encrypted=True,
        kms_key_id=key.arn,
        final_snapshot=protect,
        tags=tags,
        opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(protect=protect)),
    )
    attachment = aws.ec2.VolumeAttachment(
        f"{name}-data-attachment",
        device_name=DATA_DEVICE,
        volume_id=volume.id,
        instance_id=instance.id,
        # Stop the instance before detaching so the filesystem is unmounted cleanly.
        stop_instance_before_detaching=True,
        opts=opts,
    )
    return volume, attachment
