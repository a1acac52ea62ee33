"""VPC peering between two data centres in two regions, so MirrorMaker 2 reaches both clusters."""

from __future__ import annotations

import pulumi
import pulumi_aws as aws

from infra.network import DataCentreNetwork
from infra.tagging import Tagger


class DataCentrePeering(pulumi.ComponentResource):
    """`requester` asks from its region, `accepter` accepts in its own; routes go both ways."""

    connection: aws.ec2.VpcPeeringConnection

    def __init__(
        self,
        requester: DataCentreNetwork,
        accepter: DataCentreNetwork,
        *,
        requester_provider: aws.Provider,
        accepter_provider: aws.Provider,
        tagger: Tagger,
    ) -> None:
        a, b = requester.dc.name, accepter.dc.name
        name = f"{a}-{b}-peering"
        super().__init__("kafkakit:network:DataCentrePeering", name, None, None)
        in_a = pulumi.ResourceOptions(parent=self, provider=requester_provider)
        in_b = pulumi.ResourceOptions(parent=self, provider=accepter_provider)

        # Cross-region peering cannot be auto-accepted by the requester: the accepter side does it.
        self.connection = aws.ec2.VpcPeeringConnection(
            name,
            vpc_id=requester.vpc.id,
            peer_vpc_id=accepter.vpc.id,
            peer_region=accepter.dc.region,
            auto_accept=False,
            tags=tagger(name, DataCentre=a),
            opts=in_a,
        )
        accepted = aws.ec2.VpcPeeringConnectionAccepter(
            f"{name}-accept",
            vpc_peering_connection_id=self.connection.id,
            auto_accept=True,
            tags=tagger(name, DataCentre=b),
            opts=in_b,
        )
        after_accept = [accepted]
        # Private DNS names resolve across the peering, as brokers advertise them.
        aws.ec2.PeeringConnectionOptions(
            f"{name}-dns-{a}",
            vpc_peering_connection_id=accepted.id,
            requester={"allow_remote_vpc_dns_resolution": True},
            opts=pulumi.ResourceOptions.merge(in_a, pulumi.ResourceOptions(depends_on=after_accept)),
        )
        aws.ec2.PeeringConnectionOptions(
            f"{name}-dns-{b}",
            vpc_peering_connection_id=accepted.id,
            accepter={"allow_remote_vpc_dns_resolution": True},
            opts=pulumi.ResourceOptions.merge(in_b, pulumi.ResourceOptions(depends_on=after_accept)),
        )
        aws.ec2.Route(
            f"{name}-route-{a}",
            route_table_id=requester.private_route_table.id,
            destination_cidr_block=accepter.cidr,
            vpc_peering_connection_id=accepted.id,
            opts=in_a,
        )
        aws.ec2.Route(
            f"{name}-route-{b}",
            route_table_id=accepter.private_route_table.id,
            destination_cidr_block=requester.cidr,
            vpc_peering_connection_id=accepted.id,
            opts=in_b,
        )
        self.register_outputs({"id": self.connection.id})
