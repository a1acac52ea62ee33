"""docs/cloud.md stays true: its cost tables and config-key table are checked against the code."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import pytest
from stack_harness import ROOT, example_config

from infra.config import parse_stack_config
from infra.placement import plan_stack

DOC = (ROOT / "docs" / "cloud.md").read_text()
HOURS_PER_MONTH = 730


def cost_rows(stack: str) -> list[str]:
    cfg = example_config(stack)
    zones = {dc.name: [f"z{i}" for i in range(dc.zone_count)] for dc in cfg.data_centres}
    per_type = Counter(h.instance_type for h in plan_stack(cfg, zones))
    rows = [f"| {t} | {n} | {n * HOURS_PER_MONTH:,} |" for t, n in sorted(per_type.items())]
    total = sum(per_type.values())
    return [*rows, f"| **total** | **{total}** | **{total * HOURS_PER_MONTH:,}** |"]


@pytest.mark.parametrize("stack", ["small", "production"])
def test_the_cost_table_matches_the_example_stack(stack: str) -> None:
    section = DOC.split(f"### {stack}\n\n", 1)[1].split("\n\n", 1)[0]
    table = [line for line in section.splitlines() if line.startswith("| ") and "---" not in line]
    assert table[1:] == cost_rows(stack)


class Recorder(dict):
    """A config mapping that notes every key the parser asks for, with its dotted path."""

    def __init__(self, data: dict[str, Any], path: str, seen: set[str]) -> None:
        super().__init__(data)
        self.path, self.seen = path, seen

    def get(self, key: str, default: Any = None) -> Any:
        where = f"{self.path}{key}" if self.path.endswith(":") else f"{self.path}.{key}"
        self.seen.add(where)
        value = super().get(key, default)
        if isinstance(value, dict):
            return Recorder(value, where, self.seen)
        if isinstance(value, list) and value and isinstance(value[0], dict):
            return [Recorder(v, f"{where}[]", self.seen) for v in value]
        return value


def test_every_config_key_is_in_the_docs_table() -> None:
    seen: set[str] = set()
    raw = {
        "dataCentres": [{"name": "dc1", "region": "eu-west-1", "vpcCidr": "10.1.0.0/16"}],
        **{k: {} for k in ("instanceTypes", "spark", "mirrormaker", "monitoring", "ssh")},
        **{k: {} for k in ("kafkaVolume", "zookeeperVolume", "controllerVolume")},
    }
    parse_stack_config(Recorder(raw, "kafkakit:", seen), stack="docs")
    documented = set(re.findall(r"^\| `(kafkakit:[^`]+)` \|", DOC, re.MULTILINE))
    sections = {k for k in seen if any(o.startswith(f"{k}.") for o in seen)}
    assert len(seen - sections) > 30
    assert seen - sections == documented
