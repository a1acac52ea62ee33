"""Builds the Pulumi program under `pulumi.runtime.set_mocks`: no CLI, no plugin, no cloud.

`run_stack(cfg)` registers the whole stack against fresh mocks and returns every resource the
program registered (type, name, inputs, region of its provider) and the resolved outputs.
"""

from __future__ import annotations

import ipaddress
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pulumi
import yaml
from pulumi.runtime.mocks import MockCallArgs, MockMonitor, MockResourceArgs
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

ROOT = Path(__file__).resolve().parents[3]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from infra.config import StackConfig, parse_stack_config  # noqa: E402
from infra.program import build_stack  # noqa: E402

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


@dataclass
class StackRun:
    resources: list[Res]
    outputs: dict[str, Any]
    calls: list[MockCallArgs] = field(default_factory=list)

    def of(self, typ: str) -> list[Res]:
        return [r for r in self.resources if r.typ == typ]

    def by_id(self, rid: str) -> Res:
        return next(r for r in self.resources if r.id == rid)

    def named(self, name: str, typ: str) -> Res:
        return next(r for r in self.resources if r.name == name and r.typ == typ)


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


def run_stack(cfg: StackConfig, zones: dict[str, list[str]] | None = None, mocks: AwsMocks | None = None) -> StackRun:
    """Build the stack for `cfg` against fresh mocks (the mock runtime is process-global).
    Pass `mocks` to look at what was registered when the build raises."""
    mocks = mocks or AwsMocks(zones or DEFAULT_ZONES)
    pulumi.runtime.set_mocks(mocks, project="kafkakit", stack=cfg.stack, preview=False, monitor=MockMonitor(mocks))
    outputs: dict[str, Any] = {}

    def program() -> None:
        exported = build_stack(cfg)
        pulumi.Output.from_input(exported).apply(outputs.update)

    _sync_await(run_pulumi_func(program))
    return StackRun(mocks.resources, outputs, mocks.calls)


def stack_file_settings(stack: str) -> dict[str, Any]:
    """The `kafkakit:*` settings of Pulumi.<stack>.yaml, without the namespace."""
    doc = yaml.safe_load((ROOT / f"Pulumi.{stack}.yaml").read_text())
    return {k.split(":", 1)[1]: v for k, v in doc["config"].items() if k.startswith("kafkakit:")}


def example_config(stack: str) -> StackConfig:
    return parse_stack_config(stack_file_settings(stack), stack=stack)
