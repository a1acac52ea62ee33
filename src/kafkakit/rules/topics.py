"""The declared topics of a data centre (`kafka_topics`, roles/kafka_resources) as typed: each
entry's fields, name, sizes, state and configs, checked before anything reaches a broker.

The rules that need the cluster's shape (replication factor above the broker count, partitions
for the declared consumers, a topic declared twice) stay in kafkakit.rules.topology.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from kafkakit.rules.property_values import value_problem
from kafkakit.rules.topic_configs import closest_topic_config, release_line, topic_config_types
from kafkakit.rules.values import is_true, whole_number

# The fields of a kafka_topics entry (roles/kafka_resources/meta/argument_specs.yml).
TOPIC_FIELDS = ("name", "partitions", "replication_factor", "configs", "consumers", "state")
TOPIC_STATES = ("present", "absent")
# kafka_resources applies a topic with replication factor 3 when the entry gives none.
DEFAULT_TOPIC_REPLICATION_FACTOR = 3
# Kafka's own rule for a topic name (org.apache.kafka.common.internals.Topic).
MAX_TOPIC_NAME = 249
_TOPIC_NAME = re.compile(r"^[a-zA-Z0-9._-]+$")


def topic_name_problem(name: str) -> str | None:
    """Why Kafka would refuse `name` as a topic name, None when it is a valid one."""
    if name in ("", ".", ".."):
        return "is not a topic name (empty, '.' and '..' are reserved)"
    if len(name) > MAX_TOPIC_NAME:
        return f"is {len(name)} characters long; Kafka allows at most {MAX_TOPIC_NAME}"
    if not _TOPIC_NAME.match(name):
        bad = sorted({c for c in name if not re.match(r"[a-zA-Z0-9._-]", c)})
        return f"has character(s) {bad} Kafka does not allow; use only letters, digits, '.', '_' and '-'"
    return None


def _closest(word: str, choices: tuple[str, ...] | frozenset[str]) -> str:
    match = closest_topic_config(word, frozenset(choices))
    return f" (did you mean {match!r}?)" if match else ""


def _config_errors(where: str, configs: object, rf: int | None, version: str | None) -> list[str]:
    if not isinstance(configs, Mapping):
        return [f"{where}: configs must be a mapping of topic config names to values, not {configs!r}"]
    errors = []
    types = topic_config_types(version)
    names = frozenset(types)
    for key, value in configs.items():
        if key not in names:
            errors.append(
                f"{where}: {key!r} is not a topic config of {release_line(version)}{_closest(str(key), names)}"
            )
        elif key != "min.insync.replicas" and (problem := value_problem(*types[key], value)):  # that one: below
            errors.append(f"{where}: {key}={value!r} {problem}")
    if is_true(configs.get("unclean.leader.election.enable")):
        errors.append(
            f"{where}: unclean.leader.election.enable=true can lose acknowledged writes; the kit keeps it false"
        )
    if "min.insync.replicas" in configs:
        min_isr = whole_number(configs["min.insync.replicas"])
        if min_isr is None or min_isr < 1:
            errors.append(f"{where}: min.insync.replicas={configs['min.insync.replicas']!r} is not a whole number >= 1")
        elif rf is not None and min_isr >= rf and not (rf == 1 and min_isr == 1):
            errors.append(
                f"{where}: min.insync.replicas={min_isr} must be below its replication factor {rf}, "
                "or one broker down stops every acks=all producer"
            )
    return errors


def _entry_errors(where: str, entry: Mapping, version: str | None) -> list[str]:
    errors = []
    unknown = [str(k) for k in entry if k not in TOPIC_FIELDS]
    for key in unknown:
        errors.append(f"{where}: unknown field {key!r}{_closest(key, TOPIC_FIELDS)}; a topic has {list(TOPIC_FIELDS)}")
    if "partitions" not in entry:
        errors.append(f"{where}: partitions is missing; give the partition count (at least 1)")
    elif whole_number(entry["partitions"]) is None:
        errors.append(f"{where}: partitions={entry['partitions']!r} is not a whole number")
    rf = whole_number(entry.get("replication_factor", DEFAULT_TOPIC_REPLICATION_FACTOR))
    if rf is None:
        errors.append(f"{where}: replication_factor={entry['replication_factor']!r} is not a whole number")
    elif rf < 1:
        errors.append(f"{where}: replication_factor={rf} must be at least 1")
        rf = None
    if "consumers" in entry and whole_number(entry["consumers"]) is None:
        errors.append(f"{where}: consumers={entry['consumers']!r} is not a whole number")
    state = entry.get("state", "present")
    if state not in TOPIC_STATES:
        errors.append(f"{where}: state={state!r} is neither 'present' nor 'absent'")
    if "configs" in entry:
        errors += _config_errors(where, entry["configs"], rf, version)
    return errors


def topic_errors(dc: str, topics: object, version: str | None) -> list[str]:
    """One message per mistake in a data centre's `kafka_topics`, each naming the DC and topic."""
    if not isinstance(topics, list):
        return [f"{dc}: kafka_topics must be a list of topics, not {topics!r}"]
    errors: list[str] = []
    seen: dict[str, str] = {}  # the name with '.' as '_' -> the first declared name
    for i, entry in enumerate(topics):
        if not isinstance(entry, Mapping):
            errors.append(f"{dc}: kafka_topics[{i}] must be a mapping (name, partitions, ...), not {entry!r}")
            continue
        name = entry.get("name")
        if not isinstance(name, str):
            errors.append(f"{dc}: kafka_topics[{i}] has no name")
            continue
        where = f"{dc}: topic {name}"
        problem = topic_name_problem(name)
        if problem:
            errors.append(f"{dc}: topic name {name!r} {problem}")
            continue
        # Kafka refuses a topic whose name differs from another only by '.' vs '_' (metric names).
        folded = name.replace(".", "_")
        if folded in seen and seen[folded] != name:
            errors.append(
                f"{dc}: topics {seen[folded]!r} and {name!r} collide: Kafka treats '.' and '_' alike in topic "
                "names and refuses the second; rename one"
            )
        seen.setdefault(folded, name)
        errors += _entry_errors(where, entry, version)
    return errors
