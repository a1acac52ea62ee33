"""Guards of kafka_resources's destructive changes (issue 16).

A topic declared `state: absent` is deleted only when the operator names it in
`kafka_topics_allow_delete` for that run; anything else (an unnamed topic, a name no data centre
declares absent, a confirmation that is not a list of names) is refused with one message before
any topic, user or ACL of the data centre changes.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping
from typing import Any

CONFIRM_VAR = "kafka_topics_allow_delete"


class GuardError(ValueError):
    """A confirmation that cannot be read."""


def delete_confirmation(value: Any) -> list[str]:
    """The topic names a confirmation holds: a list of names, or one comma-separated string (the
    form `-e kafka_topics_allow_delete=a,b` gives). A boolean or a number confirms nothing."""
    if value is None or value == "" or value == []:
        return []
    if isinstance(value, str):
        names = [n.strip() for n in value.split(",")]
    elif isinstance(value, list | tuple) and all(isinstance(n, str) for n in value):
        names = [n.strip() for n in value]
    else:
        raise GuardError(f"{CONFIRM_VAR} must name the topics to delete ({example(['old-topic'])}), not {value!r}")
    if any(not n for n in names):
        raise GuardError(f"{CONFIRM_VAR} holds an empty topic name: {value!r}")
    return names


def example(names: Iterable[str]) -> str:
    return "-e '" + json.dumps({CONFIRM_VAR: sorted(names)}) + "'"


def absent_topics(topics: Iterable[Mapping[str, Any]]) -> list[str]:
    return [str(t["name"]) for t in topics if str(t.get("state", "present")) == "absent"]


def topic_deletion_refusal(
    dc: str, topics: Iterable[Mapping[str, Any]], confirmation: Any, absent_anywhere: Collection[str]
) -> str:
    """Why this data centre's topic deletions must not run ('' when they may).

    `topics` is the data centre's kafka_topics; `absent_anywhere` every topic name any data
    centre declares absent (one confirmation serves a whole run, across data centres)."""
    try:
        confirmed = set(delete_confirmation(confirmation))
    except GuardError as exc:
        return str(exc)
    unconfirmed = [n for n in absent_topics(topics) if n not in confirmed]
    if unconfirmed:
        return (
            f"refusing to delete topic(s) {', '.join(unconfirmed)} in {dc} (state: absent in kafka_topics): "
            f"deleting a topic destroys its data; to go ahead, name them for this run: {example(unconfirmed)}"
        )
    stray = sorted(confirmed - set(absent_anywhere))
    if stray:
        return (
            f"{CONFIRM_VAR} names {', '.join(stray)}, which no data centre's kafka_topics declares state: absent; "
            "a deletion is confirmed by its exact topic name: fix the name or drop it"
        )
    return ""
