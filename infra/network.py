"""Per data centre: a VPC, a private subnet per AZ (the AZ is the Kafka rack), egress, endpoints."""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

import pulumi
import pulumi_aws as aws

from infra.model import DataCentreConfig
from infra.ports import HTTPS
from infra.tagging import Tagger

# Session Manager needs these three; with them a DC works without any route to the internet.
SSM_SERVICES = ("ssm", "ssmmessages", "ec2messages")


def subnet_cidrs(vpc_cidr: str, zone_count: int) -> tuple[list[str], str]:
    """Private subnet CIDRs (one per AZ) and the public (NAT) subnet: sixteenths of the VPC."""
    net = ipaddress.IPv4Network(vpc_cidr)
    parts = [str(s) for s in net.subnets(new_prefix=net.prefixlen + 4)]
    return parts[:zone_count], parts[-1]


class DataCentreNetwork(pulumi.ComponentResource):
    """The VPC of one data centre. Data nodes live only in its private subnets."""

    vpc: aws.ec2.Vpc
    private_subnets: dict[str, aws.ec2.Subnet]  # by AZ
    private_route_table: aws.ec2.RouteTable
    public_subnet: aws.ec2.Subnet | None

    def __init__(
        self,
        dc: DataCentreConfig,
        zones: Sequence[str],
        *,
        nat_gateway: bool,
        ssm_endpoints: bool,
        tagger: Tagger,
        provider: aws.Provider,
    ) -> None:
        super().__init__(
            "kafkakit:network:DataCentreNetwork",
            f"{dc.name}-network",
            None,
            pulumi.ResourceOptions(providers=[provider]),
        )
        self.dc = dc
        self.cidr = dc.vpc_cidr
        opts = pulumi.ResourceOptions(parent=self, provider=provider)
        n = dc.name

        self.vpc = aws.ec2.Vpc(
            f"{n}-vpc",
            cidr_block=dc.vpc_cidr,
            enable_dns_support=True,
            enable_dns_hostnames=True,  # brokers advertise their private DNS names
            tags=tagger(f"{n}-vpc", DataCentre=n),
            opts=opts,
        )
        # Adopt the default security group and strip its allow-all rules.
        aws.ec2.DefaultSecurityGroup(f"{n}-default-sg", vpc_id=self.vpc.id, tags=tagger(f"{n}-default-sg"), opts=opts)
        self.private_route_table = aws.ec2.RouteTable(
            f"{n}-private-rt", vpc_id=self.vpc.id, tags=tagger(f"{n}-private-rt"), opts=opts
        )
        private, public = subnet_cidrs(dc.vpc_cidr, len(zones))
        self.private_subnets = {}
        for zone, cidr in zip(zones, private, strict=True):
            subnet = aws.ec2.Subnet(
                f"{n}-private-{zone}",
                vpc_id=self.vpc.id,
                cidr_block=cidr,
                availability_zone=zone,
                map_public_ip_on_launch=False,
                tags=tagger(f"{n}-private-{zone}", DataCentre=n, Rack=zone),
                opts=opts,
            )
            aws.ec2.RouteTableAssociation(
                f"{n}-private-{zone}-rta",
                subnet_id=subnet.id,
                route_table_id=self.private_route_table.id,
                opts=opts,
            )
            self.private_subnets[zone] = subnet

        self.public_subnet = None
        if nat_gateway:
            self._nat(n, zones[0], public, tagger, opts)
        # S3 is reached through a free gateway endpoint: the SSM connection's file transfers
        # and Debian's apt mirrors on S3 never leave the region's network.
        aws.ec2.VpcEndpoint(
            f"{n}-s3-endpoint",
            vpc_id=self.vpc.id,
            service_name=f"com.amazonaws.{dc.region}.s3",
            vpc_endpoint_type="Gateway",
            route_table_ids=[self.private_route_table.id],
            tags=tagger(f"{n}-s3-endpoint"),
            opts=opts,
        )
        if ssm_endpoints:
            self._ssm_endpoints(n, dc.region, tagger, opts)
        self.register_outputs({"vpc_id": self.vpc.id})

    def _nat(self, n: str, zone: str, cidr: str, tagger: Tagger, opts: pulumi.ResourceOptions) -> None:
        """One NAT gateway per DC: outbound only (packages, archives), never inbound."""
        self.public_subnet = aws.ec2.Subnet(
            f"{n}-public",
            vpc_id=self.vpc.id,
            cidr_block=cidr,
            availability_zone=zone,
            map_public_ip_on_launch=False,
            tags=tagger(f"{n}-public", DataCentre=n),
            opts=opts,
        )
        igw = aws.ec2.InternetGateway(f"{n}-igw", vpc_id=self.vpc.id, tags=tagger(f"{n}-igw"), opts=opts)
        public_rt = aws.ec2.RouteTable(f"{n}-public-rt", vpc_id=self.vpc.id, tags=tagger(f"{n}-public-rt"), opts=opts)
        aws.ec2.Route(
            f"{n}-public-default",
            route_table_id=public_rt.id,
            destination_cidr_block="0.0.0.0/0",
            gateway_id=igw.id,
            opts=opts,
        )
        aws.ec2.RouteTableAssociation(
            f"{n}-public-rta",
            subnet_id=self.public_subnet.id,
            route_table_id=public_rt.id,
            opts=opts,
        )
        eip = aws.ec2.Eip(f"{n}-nat-eip", domain="vpc", tags=tagger(f"{n}-nat-eip"), opts=opts)
        nat = aws.ec2.NatGateway(
            f"{n}-nat",
            allocation_id=eip.id,
            subnet_id=self.public_subnet.id,
            tags=tagger(f"{n}-nat"),
            opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=[igw])),
        )
        aws.ec2.Route(
            f"{n}-private-default",
            route_table_id=self.private_route_table.id,
            destination_cidr_block="0.0.0.0/0",
            nat_gateway_id=nat.id,
            opts=opts,
        )

    def _ssm_endpoints(self, n: str, region: str, tagger: Tagger, opts: pulumi.ResourceOptions) -> None:
        sg = aws.ec2.SecurityGroup(
            f"{n}-endpoints-sg",
            vpc_id=self.vpc.id,
            description="Interface endpoints: HTTPS from inside the VPC",
            tags=tagger(f"{n}-endpoints-sg"),
            opts=opts,
        )
        aws.vpc.SecurityGroupIngressRule(
            f"{n}-endpoints-in-https",
            security_group_id=sg.id,
            ip_protocol="tcp",
            from_port=HTTPS,
            to_port=HTTPS,
            cidr_ipv4=self.cidr,
            description="AWS API calls from the VPC",
            tags=tagger(f"{n}-endpoints-in-https"),
            opts=opts,
        )
        for service in SSM_SERVICES:
            aws.ec2.VpcEndpoint(
                f"{n}-{service}-endpoint",
                vpc_id=self.vpc.id,
                service_name=f"com.amazonaws.{region}.{service}",
                vpc_endpoint_type="Interface",
                private_dns_enabled=True,
                subnet_ids=[s.id for s in self.private_subnets.values()],
                security_group_ids=[sg.id],
                tags=tagger(f"{n}-{service}-endpoint"),
                opts=opts,
            )
