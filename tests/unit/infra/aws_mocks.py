"""AWS as the Pulumi mocks see it: ids, IPs in the subnet, ARNs, AZ lists, AMIs.

Imports only Pulumi, never the project: the fresh-clone test runs these mocks in a virtualenv
that has nothing but what Pulumi installs, and the project must be found on its own there.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Any

import pulumi
from pulumi.runtime.mocks import MockCallArgs, MockResourceArgs

ACCOUNT = "123456789012"
DEFAULT_ZONES = {
    "eu-west-1": ["eu-west-1a", "eu-west-1b", "eu-west-1c"],
    "eu-central-1": ["eu-central-1a", "eu-central-1b", "eu-central-1c"],
    "us-east-1": [f"us-east-1{c}" for c in "abcdef"],
}


@dataclass
class Res:
    typ: str
    name: str
    id: str
    inputs: dict[str, Any]
    state: dict[str, Any]
    region: str | None  # the region of the provider it was registered with


class AwsMocks(pulumi.runtime.Mocks):
    """Answers like AWS would, enough for the program: ids, IPs in the subnet, ARNs, AZ lists."""

    def __init__(self, zones: dict[str, list[str]]) -> None:
        self.zones = zones
        self.resources: list[Res] = []
        self.calls: list[MockCallArgs] = []
        self.provider_regions: dict[str, str] = {}
        self.subnets: dict[str, tuple[str, str]] = {}  # id -> (cidr, az)
        self.next_host: dict[str, int] = {}

    def _region(self, provider_ref: str | None) -> str | None:
        if not provider_ref:
            return None
        return self.provider_regions.get(provider_ref.rsplit("::", 1)[-1])

    def new_resource(self, args: MockResourceArgs) -> tuple[str, dict]:
        short = args.typ.rsplit(":", 1)[-1].lower()
        rid = f"{short}-{args.name}"
        state = dict(args.inputs)
        region = self._region(args.provider)
        if args.typ == "pulumi:providers:aws":
            self.provider_regions[rid] = args.inputs["region"]
        elif args.typ == "aws:ec2/subnet:Subnet":
            self.subnets[rid] = (args.inputs["cidrBlock"], args.inputs["availabilityZone"])
        elif args.typ == "aws:ec2/instance:Instance":
            cidr, _ = self.subnets[args.inputs["subnetId"]]
            n = self.next_host.get(cidr, 10)
            self.next_host[cidr] = n + 1
            ip = str(ipaddress.IPv4Network(cidr)[n])
            state["privateIp"] = ip
            state["privateDns"] = f"ip-{ip.replace('.', '-')}.{region}.compute.internal"
            state["publicIp"] = ""
        elif args.typ == "aws:kms/key:Key":
            state["arn"] = f"arn:aws:kms:{region}:{ACCOUNT}:key/{rid}"
            state["keyId"] = rid
        elif args.typ == "aws:s3/bucket:Bucket":
            state["bucket"] = f"{args.inputs['bucketPrefix']}20250101"
            state["arn"] = f"arn:aws:s3:::{state['bucket']}"
        elif args.typ in ("aws:iam/role:Role", "aws:iam/instanceProfile:InstanceProfile"):
            state["name"] = rid
            state["arn"] = f"arn:aws:iam::{ACCOUNT}:{short}/{rid}"
        self.resources.append(Res(args.typ, args.name, rid, dict(args.inputs), state, region))
        return rid, state

    def call(self, args: MockCallArgs) -> dict:
        self.calls.append(args)
        region = self._region(args.provider)
        if args.token == "aws:index/getAvailabilityZones:getAvailabilityZones":
            names = self.zones[region or ""]
            return {"id": region, "names": names, "zoneIds": [f"id-{z}" for z in names]}
        if args.token == "aws:ec2/getAmi:getAmi":
            return {"id": f"ami-0debian12{region}", "architecture": "x86_64"}
        if args.token == "aws:index/getPartition:getPartition":
            return {"id": "aws", "partition": "aws", "dnsSuffix": "amazonaws.com"}
        raise NotImplementedError(args.token)
