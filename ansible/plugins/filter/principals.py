"""Filter for the move to shared principals (kafkakit.cluster.principals)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any


def kafkakit_principal_plan(results: list[dict], hostvars: Any) -> dict[str, dict]:
    """Per data centre, {shared, by_name}, from the loop results of kafkakit_principal_state
    (one per kafkakit_principal_servers item; a skipped one is no server's)."""
    from kafkakit.cluster.principals import principal_plan, state_from_result

    states = [
        state_from_result(r["item"]["host"], str(hostvars[r["item"]["host"]]["dc"]), r)
        for r in results
        if not r.get("skipped")
    ]
    return {dc: asdict(plan) for dc, plan in principal_plan(states).items()}


def kafkakit_principal_servers(play_hosts: list[str], groups: Any, hostvars: Any) -> list[dict]:
    """The brokers and controllers of the data centres of `play_hosts`, in the play or not (a
    --limit leaves the others running): {host, address, controller} each."""
    dcs = {str(hostvars[h]["dc"]) for h in play_hosts}
    controllers = list(groups.get("kafka_controller", []))
    return [
        {"host": h, "address": str(hostvars[h]["private_ip"]), "controller": h in controllers}
        for h in [*groups.get("kafka_broker", []), *controllers]
        if str(hostvars[h]["dc"]) in dcs
    ]


class FilterModule:
    def filters(self) -> dict[str, Any]:
        return {
            "kafkakit_principal_plan": kafkakit_principal_plan,
            "kafkakit_principal_servers": kafkakit_principal_servers,
        }
