"""Filters for the day-2 operations' guards: one copy of the rules, in kafkakit.ops_guards."""

from __future__ import annotations

from typing import Any

from kafkakit import ops_guards


def _plain(groups: Any) -> dict[str, list[str]]:
    return {k: list(v) for k, v in dict(groups).items()}


def kafkakit_dr_drill_refusal(source: Any, target: Any, confirmation: Any, groups: Any) -> str:
    """Why the DR drill must not take `source` down ('' when confirmed by the data centre's name)."""
    return ops_guards.dr_drill_refusal(source, target, confirmation, _plain(groups))


def kafkakit_dr_drill_victims(source: Any, groups: Any) -> list[str]:
    """The brokers and ZooKeeper servers the drill kills."""
    return ops_guards.dr_drill_victims(_plain(groups), str(source))


class FilterModule:
    def filters(self) -> dict[str, Any]:
        return {
            "kafkakit_dr_drill_refusal": kafkakit_dr_drill_refusal,
            "kafkakit_dr_drill_victims": kafkakit_dr_drill_victims,
        }
