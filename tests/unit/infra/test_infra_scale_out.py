"""Scale-out on AWS is a count bump: the existing hosts keep their names, ids and zones (so
Pulumi replaces nothing), and the new broker gets the next id in the next zone, as the lab's
spare broker dc1-kafka4 does (ansible/lab/lab-config.yml)."""

from __future__ import annotations

import dataclasses

from stack_harness import example_config

from infra.placement import plan_stack

ZONES = {"dc1": ["eu-west-1a", "eu-west-1b", "eu-west-1c"], "dc2": ["x-1a", "x-1b", "x-1c"]}


def grown(stack: str, dc: str, extra: int):  # noqa: ANN201 - StackConfig
    cfg = example_config(stack)
    dcs = tuple(dataclasses.replace(d, brokers=d.brokers + extra) if d.name == dc else d for d in cfg.data_centres)
    return dataclasses.replace(cfg, data_centres=dcs)


def test_a_count_bump_adds_one_broker_and_keeps_every_other_host() -> None:
    before = plan_stack(example_config("small"), ZONES)
    after = plan_stack(grown("small", "dc1", 1), ZONES)
    assert [h for h in after if h in before] == before
    (new,) = [h for h in after if h not in before]
    old_ids = [h.broker_id for h in before if h.dc == "dc1" and h.group == "kafka_broker"]
    assert new.group == "kafka_broker" and new.dc == "dc1"
    assert new.broker_id == max(old_ids) + 1
    # Round robin: the fourth broker of three zones lands in the first zone, like dc1-kafka4 in dc1-az1.
    assert new.zone == ZONES["dc1"][len(old_ids) % 3]
