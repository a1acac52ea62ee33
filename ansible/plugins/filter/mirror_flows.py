"""Filters for MirrorMaker 2 flows: one copy of the rules, in kafkakit.mirror.flows."""

from __future__ import annotations

from typing import Any


def kafkakit_mirror_flow_errors(
    flows: Any, data_centres: list[str], mirrormaker_dcs: list[str], policy: str
) -> list[str]:
    from kafkakit.mirror import flows as mirror_flows

    return mirror_flows.flow_errors(flows, data_centres, mirrormaker_dcs, policy)


def kafkakit_mirror_acls(flows: list[dict], dc: str, user: str, policy: str, sync_acls: bool) -> list[dict]:
    from kafkakit.mirror import flows as mirror_flows

    return mirror_flows.mirrormaker_acls(flows, dc, f"User:{user}", policy, sync_acls)


def kafkakit_mirror_dcs(flows: list[dict]) -> list[str]:
    from kafkakit.mirror import flows as mirror_flows

    return mirror_flows.flow_dcs(flows)


def kafkakit_mirror_synced_prefixes(flows: list[dict], dc: str, policy: str, sync_acls: bool) -> list[str]:
    from kafkakit.mirror import flows as mirror_flows

    return mirror_flows.synced_acl_prefixes(flows, dc, policy, sync_acls)


def kafkakit_mirror_include(entries: list[dict]) -> str:
    from kafkakit.mirror import flows as mirror_flows

    return mirror_flows.include_regex(entries)


def kafkakit_mirror_excludes(flow: dict, kind: str) -> list[str]:
    from kafkakit.mirror import flows as mirror_flows

    return mirror_flows.excludes(flow, kind)


class FilterModule:
    def filters(self) -> dict[str, Any]:
        return {
            "kafkakit_mirror_flow_errors": kafkakit_mirror_flow_errors,
            "kafkakit_mirror_acls": kafkakit_mirror_acls,
            "kafkakit_mirror_dcs": kafkakit_mirror_dcs,
            "kafkakit_mirror_synced_prefixes": kafkakit_mirror_synced_prefixes,
            "kafkakit_mirror_include": kafkakit_mirror_include,
            "kafkakit_mirror_excludes": kafkakit_mirror_excludes,
        }
