"""Read-only questions to a region: its availability zones and the AMI hosts boot from."""

from __future__ import annotations

import pulumi
import pulumi_aws as aws

from infra.model import ConfigError, DataCentreConfig

# Debian's own account: the lab runs Debian bookworm, so AWS hosts run Debian 12 as well.
DEBIAN_OWNER = "136693071363"


def availability_zones(dc: DataCentreConfig, provider: aws.Provider) -> list[str]:
    """The DC's racks: the AZs it declares, else the first `zoneCount` the region offers."""
    if dc.availability_zones:
        return list(dc.availability_zones)
    found = aws.get_availability_zones(
        state="available",
        filters=[{"name": "opt-in-status", "values": ["opt-in-not-required"]}],
        opts=pulumi.InvokeOptions(provider=provider),
    )
    names = sorted(found.names)
    if len(names) < dc.zone_count:
        raise ConfigError(
            [
                f"{dc.name}: zoneCount is {dc.zone_count} but {dc.region} offers only "
                f"{len(names)} availability zone(s): {names}"
            ]
        )
    return names[: dc.zone_count]


def debian_ami(dc: DataCentreConfig, architecture: str, provider: aws.Provider) -> str:
    """The DC's pinned AMI, else the newest Debian 12 image for the architecture."""
    if dc.ami:
        return dc.ami
    arch = "amd64" if architecture == "x86_64" else "arm64"
    image = aws.ec2.get_ami(
        most_recent=True,
        owners=[DEBIAN_OWNER],
        filters=[
            {"name": "name", "values": [f"debian-12-{arch}-*"]},
            {"name": "architecture", "values": [architecture]},
            {"name": "virtualization-type", "values": ["hvm"]},
        ],
        opts=pulumi.InvokeOptions(provider=provider),
    )
    return image.id


def partition(provider: aws.Provider) -> str:
    """aws, aws-cn or aws-us-gov: managed policy ARNs differ between partitions."""
    return aws.get_partition(opts=pulumi.InvokeOptions(provider=provider)).partition
