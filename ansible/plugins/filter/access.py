"""Filters for kafka_resources's guards: one copy of the rules, in kafkakit.guards.access."""

from __future__ import annotations

from typing import Any


def kafkakit_topic_deletion_refusal(topics: list[dict], dc: str, confirmation: Any, all_topics: list[Any]) -> str:
    """Why the topic deletions of `dc` must not run ('' when they may); `all_topics` holds every
    data centre's kafka_topics (one list per data centre)."""
    from kafkakit.guards import access as access_guards

    absent_anywhere = {name for dc_topics in all_topics for name in access_guards.absent_topics(dc_topics or [])}
    return access_guards.topic_deletion_refusal(dc, topics or [], confirmation, absent_anywhere)


def kafkakit_delete_confirmation(confirmation: Any) -> list[str]:
    """The topic names the operator confirmed for deletion (the guard refused anything unreadable)."""
    from kafkakit.guards import access as access_guards

    return access_guards.delete_confirmation(confirmation)


class FilterModule:
    def filters(self) -> dict[str, Any]:
        return {
            "kafkakit_topic_deletion_refusal": kafkakit_topic_deletion_refusal,
            "kafkakit_delete_confirmation": kafkakit_delete_confirmation,
        }
