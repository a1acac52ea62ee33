"""Builds the Pulumi program under `pulumi.runtime.set_mocks`: no CLI, no plugin, no cloud.

`run_stack(cfg)` registers the whole stack against fresh mocks and returns every resource the
program registered (type, name, inputs, region of its provider) and the resolved outputs.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pulumi
import yaml
from aws_mocks import DEFAULT_ZONES, AwsMocks, Res
from pulumi.runtime.mocks import MockCallArgs, MockMonitor
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

ROOT = Path(__file__).resolve().parents[3]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from infra.config import parse_stack_config  # noqa: E402
from infra.model import StackConfig  # noqa: E402
from infra.program import build_stack  # noqa: E402

# Re-exported for the tests, which take everything from here.
__all__ = ["DEFAULT_ZONES", "ROOT", "AwsMocks", "Res", "StackRun", "example_config", "run_stack", "stack_file_settings"]


SG = "aws:ec2/securityGroup:SecurityGroup"
INGRESS = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"


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

    def group_roles(self) -> dict[str, str]:
        """Security group id -> the Role tag of the group."""
        return {g.id: g.inputs["tags"]["Role"] for g in self.of(SG) if "Role" in g.inputs["tags"]}

    def rules_into(self, role: str) -> set[tuple[str, int, int, str]]:
        """(region, from, to, source role or CIDR) of every ingress rule into the `role` groups."""
        roles = self.group_roles()
        rows = set()
        for r in self.of(INGRESS):
            if roles.get(r.inputs["securityGroupId"]) == role:
                ref = r.inputs.get("referencedSecurityGroupId")
                source = roles[ref] if ref else r.inputs["cidrIpv4"]
                rows.add((r.region or "", int(r.inputs["fromPort"]), int(r.inputs["toPort"]), source))
        return rows


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
