"""Guards of the day-2 operations that can take a production cluster down (issue 16).

Each returns why the operation must not run ('' when it may), one line, naming what it would
destroy and the exact confirmation that lets it go ahead. The playbooks call them through
ansible/plugins/filter/ops_guards.py before touching any host.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

DR_CONFIRM_VAR = "dr_drill_confirm"


def dr_drill_victims(groups: Mapping[str, Iterable[str]], source: str) -> list[str]:
    """The hosts the drill's step 2 kills: every broker and ZooKeeper server of `source`, in
    inventory order (the play's pattern kafka_broker:&src:zookeeper:&src)."""
    in_source = set(groups.get(source, []))
    servers = list(groups.get("kafka_broker", [])) + list(groups.get("zookeeper", []))
    return [h for i, h in enumerate(servers) if h in in_source and h not in servers[:i]]


def dr_drill_refusal(source: Any, target: Any, confirmation: Any, groups: Mapping[str, Iterable[str]]) -> str:
    """Why the DR drill must not take `source` down ('' when the operator confirmed it by name)."""
    source, target = str(source), str(target)
    victims = dr_drill_victims(groups, source)
    if not victims:
        return f"dr_source={source} has no broker or ZooKeeper server in this inventory: nothing to drill (-i?)"
    if source == target:
        return f"dr_source and dr_target are both {source}: the drill fails over to another data centre"
    stops = f"{len(victims)} host(s) {', '.join(victims)}"
    confirmed = "" if confirmation is None else str(confirmation).strip()
    if not confirmed:
        return (
            f"refusing to run the DR drill: it SIGKILLs and stops every broker and ZooKeeper server of {source}, "
            f"{stops}, and {source} serves nothing until the drill brings it back; "
            f"to go ahead, name the data centre: -e {DR_CONFIRM_VAR}={source}"
        )
    if confirmed != source:
        return (
            f"{DR_CONFIRM_VAR}={confirmed} does not name the data centre this drill takes down: {source} "
            f"({stops}); check dr_source and the inventory, then confirm with -e {DR_CONFIRM_VAR}={source}"
        )
    return ""
