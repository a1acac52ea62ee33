"""MirrorMaker 2 replication flows: validation, MM2's include patterns and the MM2 principal's ACLs.

A flow's `topics` and `groups` are Kafka ACL resource patterns (literal or prefixed). MM2's include
regexes and the ACLs are both derived from them, so MM2 is never configured to read what its
principal may not, nor granted more than it is configured to read.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

POLICIES = ("default", "identity")
PATTERN_TYPES = ("literal", "prefixed")
FLOW_KEYS = frozenset({"source", "target", "topics", "groups", "topics_exclude", "groups_exclude"})
# MM2's own defaults: never mirror internal, replica or double-underscore topics.
DEFAULT_TOPICS_EXCLUDE = (r".*[\-\.]internal", r".*\.replica", r"__.*")
DEFAULT_GROUPS_EXCLUDE = (r"console-consumer-.*", r"connect-.*", r"__.*")
HEARTBEATS_TOPIC = "heartbeats"
# Connect's internal topics in dedicated mode (mm2-configs.<source>.internal, ...) and the
# offset-syncs topic (kept on the target: offset-syncs.topic.location=target).
INTERNAL_TOPIC_PREFIX = "mm2-"


def _pattern_errors(where: str, entries: Any, required: bool) -> list[str]:
    if entries is None and not required:
        return []
    if not isinstance(entries, list) or (required and not entries):
        return [f"{where}: must be a{' non-empty' if required else ''} list of {{name, pattern_type}}"]
    errors = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str) or not entry["name"]:
            errors.append(f"{where}[{i}]: needs a non-empty name")
            continue
        unknown = sorted(set(entry) - {"name", "pattern_type"})
        if unknown:
            errors.append(f"{where}[{i}]: unknown field(s) {', '.join(unknown)}")
        if entry.get("pattern_type", "literal") not in PATTERN_TYPES:
            errors.append(f"{where}[{i}]: pattern_type must be literal or prefixed")
    return errors


def _regex_list_errors(where: str, value: Any) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return [f"{where}: must be a list of regexes"]
    errors = []
    for pattern in value:
        try:
            re.compile(pattern)
        except re.error as exc:
            errors.append(f"{where}: {pattern!r} is not a valid regex ({exc})")
    return errors


def flow_errors(
    flows: Any, data_centres: Collection[str], mirrormaker_dcs: Collection[str], policy: str = "default"
) -> list[str]:
    """One message per problem: unknown or equal DCs, a target without MirrorMaker hosts, duplicate
    flows, malformed patterns, and identity naming on a two-way (cycle-prone) pair."""
    if not isinstance(flows, list):
        return ["mirrormaker_flows must be a list"]
    errors = []
    if policy not in POLICIES:
        errors.append(f"mirrormaker_replication_policy {policy!r}: expected one of {', '.join(POLICIES)}")
    seen: set[tuple[str, str]] = set()
    for i, flow in enumerate(flows):
        where = f"mirrormaker_flows[{i}]"
        if not isinstance(flow, Mapping):
            errors.append(f"{where}: expected a mapping")
            continue
        unknown = sorted(set(flow) - FLOW_KEYS)
        if unknown:
            errors.append(f"{where}: unknown field(s) {', '.join(unknown)}")
        source, target = flow.get("source"), flow.get("target")
        where = f"{where} ({source}->{target})"
        for side, dc in (("source", source), ("target", target)):
            if dc not in data_centres:
                errors.append(f"{where}: {side} {dc!r} is not a data centre of the inventory {sorted(data_centres)}")
        if source == target:
            errors.append(f"{where}: source and target must differ")
        if target in data_centres and target not in mirrormaker_dcs:
            errors.append(f"{where}: {target} has no mirrormaker host to run the flow (pull model)")
        if (source, target) in seen:
            errors.append(f"{where}: declared twice")
        seen.add((source, target))
        errors += _pattern_errors(f"{where}.topics", flow.get("topics"), required=True)
        errors += _pattern_errors(f"{where}.groups", flow.get("groups"), required=False)
        errors += _regex_list_errors(f"{where}.topics_exclude", flow.get("topics_exclude"))
        errors += _regex_list_errors(f"{where}.groups_exclude", flow.get("groups_exclude"))
    if policy == "identity":
        pairs = {(f.get("source"), f.get("target")) for f in flows if isinstance(f, Mapping)}
        for source, target in sorted(p for p in pairs if (p[1], p[0]) in pairs and p[0] < p[1]):
            errors.append(
                f"flows {source}->{target} and {target}->{source}: identity naming would mirror topics "
                "back and forth; use the default policy for active/active"
            )
    return errors


def include_regex(entries: Iterable[Mapping[str, Any]]) -> str:
    """MM2's include regex for ACL-style patterns: literal = the exact name, prefixed = name.*"""
    parts = []
    for entry in entries:
        name = re.escape(str(entry["name"]))
        parts.append(f"{name}.*" if entry.get("pattern_type", "literal") == "prefixed" else name)
    # An empty include list must match nothing (MM2's own default would be everything).
    return "|".join(parts) if parts else "(?!)"


def excludes(flow: Mapping[str, Any], kind: str) -> list[str]:
    defaults = DEFAULT_TOPICS_EXCLUDE if kind == "topics" else DEFAULT_GROUPS_EXCLUDE
    value = flow.get(f"{kind}_exclude")
    return list(defaults if value is None else value)


def remote_prefix(source: str, policy: str) -> str:
    return "" if policy == "identity" else f"{source}."


def _acl(principal: str, rtype: str, name: str, pattern: str, operations: Sequence[str]) -> dict[str, Any]:
    return {
        "principal": principal,
        "resource_type": rtype,
        "name": name,
        "pattern_type": pattern,
        "operations": list(operations),
    }


def _source_acls(flow: Mapping[str, Any], principal: str, sync_acls: bool) -> list[dict[str, Any]]:
    acls = [
        _acl(principal, "topic", t["name"], t.get("pattern_type", "literal"), ["read", "describe", "describe_configs"])
        for t in flow["topics"]
    ]
    # The heartbeats of flows into the source (active/active) are mirrored too.
    acls.append(_acl(principal, "topic", HEARTBEATS_TOPIC, "literal", ["read", "describe", "describe_configs"]))
    # Checkpoints list the source's groups and read their committed offsets.
    acls += [
        _acl(principal, "group", g["name"], g.get("pattern_type", "literal"), ["describe"])
        for g in flow.get("groups") or []
    ]
    if sync_acls:
        acls.append(_acl(principal, "cluster", "kafka-cluster", "literal", ["describe"]))
    return acls


def _target_acls(flow: Mapping[str, Any], principal: str, policy: str, sync_acls: bool) -> list[dict[str, Any]]:
    source = flow["source"]
    mirrored = ["create", "write", "read", "describe", "describe_configs", "alter_configs", "alter"]
    if policy == "identity":
        acls = [_acl(principal, "topic", t["name"], t.get("pattern_type", "literal"), mirrored) for t in flow["topics"]]
    else:
        # <source>.<topic>, <source>.heartbeats and <source>.checkpoints.internal.
        acls = [_acl(principal, "topic", remote_prefix(source, policy), "prefixed", mirrored)]
    internal = ["create", "write", "read", "describe", "describe_configs"]
    acls.append(_acl(principal, "topic", INTERNAL_TOPIC_PREFIX, "prefixed", internal))
    acls.append(_acl(principal, "topic", HEARTBEATS_TOPIC, "literal", internal))
    if policy == "identity":
        acls.append(_acl(principal, "topic", f"{source}.checkpoints.internal", "literal", internal))
    # The Connect worker group of the dedicated MM2 driver for this source.
    acls.append(_acl(principal, "group", f"{source}-mm2", "literal", ["read", "describe"]))
    # Offset sync commits translated offsets for the groups it mirrors (needs READ on group and topic).
    acls += [
        _acl(principal, "group", g["name"], g.get("pattern_type", "literal"), ["read", "describe"])
        for g in flow.get("groups") or []
    ]
    if sync_acls:
        acls.append(_acl(principal, "cluster", "kafka-cluster", "literal", ["describe", "alter"]))
    return acls


def mirrormaker_acls(
    flows: Sequence[Mapping[str, Any]], dc: str, principal: str, policy: str = "default", sync_acls: bool = False
) -> list[dict[str, Any]]:
    """The MM2 principal's ACLs in data centre `dc`, over every flow that reads from or writes to it."""
    acls: list[dict[str, Any]] = []
    for flow in flows:
        if flow.get("source") == dc:
            acls += _source_acls(flow, principal, sync_acls)
        if flow.get("target") == dc:
            acls += _target_acls(flow, principal, policy, sync_acls)
    unique: dict[str, dict[str, Any]] = {}
    for acl in acls:
        unique.setdefault(repr(sorted((k, str(v)) for k, v in acl.items())), acl)
    return list(unique.values())


def flow_dcs(flows: Sequence[Mapping[str, Any]]) -> list[str]:
    """Data centres MM2 talks to (both ends of every flow), first-seen order."""
    seen: list[str] = []
    for flow in flows:
        for dc in (flow.get("source"), flow.get("target")):
            if dc and dc not in seen:
                seen.append(dc)
    return seen


def synced_acl_prefixes(flows: Sequence[Mapping[str, Any]], dc: str, policy: str, sync_acls: bool) -> list[str]:
    """Topic-name prefixes whose ACLs MM2 owns in `dc` (ACL sync on, default naming): ACLs-as-code
    must leave them alone or the two would undo each other forever."""
    if not sync_acls or policy == "identity":
        return []
    return [remote_prefix(f["source"], policy) for f in flows if f.get("target") == dc]
