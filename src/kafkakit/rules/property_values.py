"""Kafka's own definitions of the properties the kit writes, and what Kafka would refuse in a value.

The tables (kafka_configs/kafka-<line>.tsv) are Kafka's ConfigDefs as Kafka prints them, per
release line (kafkakit.rules.topology.definitions_line: 3.9; 4.0 to 4.3; 4.4, which only adds
definitions, so a 4.3 node is not given a setting it would ignore): the broker's and controller's
(KafkaConfig), the Connect worker's (DistributedConfig), MirrorMaker 2's (MirrorMakerConfig) and
its three connectors', and those of the producer, consumer and admin clients a worker opens (its
producer., consumer. and admin. settings). They are printed by `python -m
kafkakit.tooling.config_defs <archive>`, never typed by hand; tests/unit/rules/
test_property_values.py prints them again from every archive in build/artifacts and compares, and
checks that value_problem accepts and refuses what Kafka's own parsing and validators do.
"""

from __future__ import annotations

import math
import re
import unicodedata
from functools import cache
from pathlib import Path

from kafkakit.rules.topology import definitions_line
from kafkakit.rules.values import whole_number

TABLES = Path(__file__).parent / "kafka_configs"
COMPONENTS = ("broker", "connect", "mirrormaker", "source", "checkpoint", "heartbeat", "producer", "consumer", "admin")
# MirrorMaker 2's connectors, whose settings mm2.properties takes at the top or per flow (a->b.).
MIRROR_CONNECTORS = ("source", "checkpoint", "heartbeat")
# A Connect worker's settings of the clients it opens, by prefix.
CLIENT_PREFIXES = {"producer.": "producer", "consumer.": "consumer", "admin.": "admin"}
LINES = ("3", "4.3", "4.4")
# A line whose archive lacks a component takes it from the line before: Maven Central serves no
# connect-mirror 4.4.0, so MirrorMaker 2's settings on 4.4 are checked as 4.3 defines them.
EARLIER = {"4.4": "4.3"}

Definition = tuple[str, str]  # (ConfigDef type, validator as Kafka prints it; "" when it has none)


@cache
def _table(release_line: str) -> dict[str, dict[str, Definition]]:
    by_component: dict[str, dict[str, Definition]] = {c: {} for c in COMPONENTS}
    for line in (TABLES / f"kafka-{release_line}.tsv").read_text().splitlines():
        if line and not line.startswith("#"):
            component, name, kind, validator = line.split("\t")
            by_component[component][name] = (kind, validator)
    return by_component


def property_types(component: str, version: str | None) -> dict[str, Definition]:
    """The properties of `component` in a Kafka release ("3.9.2", "4.3.1") with their types and
    validators; for a version of no line the kit ships, every known one (3.x's where both have it)."""
    line = definitions_line(version)
    while line is not None:
        if _table(line)[component]:
            return _table(line)[component]
        line = EARLIER.get(line)
    if definitions_line(version) is not None:
        return {}
    return {k: v for line in reversed(LINES) for k, v in _table(line)[component].items()}


# ConfigDef's whole-number types and the bounds of the Java type each is read into.
_WHOLE_BITS = {"SHORT": 16, "INT": 32, "LONG": 64}
# Java's Double.parseDouble, without the NaN and Infinity no config wants.
_DECIMAL = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?[dDfF]?$")
# What Class.forName could load: a binary class name.
_CLASS = re.compile(r"^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*$")
# Kafka's Range (`[1,...]`, `[0,...,1]`), and the one validator that adds a single value to one.
_RANGE = re.compile(r"^\[(?P<lo>[-\d.E]+),\.\.\.(?:,(?P<hi>[-\d.E]+))?\](?: or (?P<also>[-\d.E]+))?$")
# ThrottledReplicaListValidator (topic configs): '*', or partition:broker pairs.
THROTTLED_REPLICAS = "[partitionId]:[brokerId],[partitionId]:[brokerId],..."
_REPLICA = re.compile(r"^\d+:\d+$")
_CASE_INSENSITIVE = "(case insensitive) "
# Validators Kafka describes in words, and what each refuses of a parsed value.
_WORDED: dict[str, tuple[str, object]] = {
    "non-null string": ("", lambda v: True),
    "non-empty string": ("is empty; Kafka wants a non-empty string", lambda v: v != ""),
    "non-empty string without ISO control characters": (
        "is empty or has control characters; Kafka wants a non-empty string without them",
        lambda v: v != "" and not any(unicodedata.category(c) == "Cc" for c in v),
    ),
    "Positive number, or -1 to use the broker's default": (
        "is neither a positive number nor -1 (the broker's default)",
        lambda v: v == -1 or v >= 1,
    ),
    "Positive number not larger than the number of brokers in the Kafka cluster, or -1 to use the broker's default": (
        "is neither a positive number nor -1 (the broker's default)",
        lambda v: v == -1 or v >= 1,
    ),
}
# Validators whose check needs the running JVM (its classes, algorithms, plugins) or that only
# describe a default: the type is checked, and Kafka checks the rest when it starts.
TYPE_ONLY = frozenset(
    {
        "A concrete subclass of org.apache.kafka.connect.storage.Converter, A class with a public, "
        "no-argument constructor",
        "A concrete subclass of org.apache.kafka.connect.storage.HeaderConverter, A class with a public, "
        "no-argument constructor",
        "non-null string, unique transformation aliases",
        "non-null string, unique predicate aliases",
        "List of comma-separated URLs, ex: http://localhost:8080,https://localhost:8443.",
        "Comma-separated header rules, where each header rule is of the form '[action] [header name]:[header "
        "value]' and optionally surrounded by double quotes if any part of a header rule contains a comma",
        "Any MAC algorithm supported by the worker JVM",
        "Any KeyGenerator algorithm supported by the worker JVM",
        "A list of one or more MAC algorithms, each supported by the worker JVM",
        "The default value of -1 means that this will be set to the configured value of "
        "remote.log.manager.thread.pool.size, if available; otherwise, it defaults to 10.",
        "org.apache.kafka.connect.runtime.ConnectorConfig$PluginVersionValidator",
        # The controller quorum's voters: each id@host:port, and an empty list is taken despite the name.
        "non-empty list",
        # A consumer's auto.offset.reset (4.x): its by_duration: takes an ISO-8601 duration.
        "[latest, earliest, none, by_duration:PnDTnHnMn.nS]",
    }
)


def _parse(kind: str, value: object) -> tuple[object, str | None]:
    """`value` as Kafka's ConfigDef.parseType reads the string the kit writes for it (str(value),
    trimmed), or what is wrong with it."""
    if isinstance(value, list):
        return None, "is a list; give Kafka a comma-separated string"
    if value is None or isinstance(value, dict):
        return None, "is not a single value"
    text = str(value).strip()
    if kind == "BOOLEAN":
        if text.lower() in ("true", "false"):
            return text.lower() == "true", None
        return None, "is not true or false"
    if kind in _WHOLE_BITS:
        number = None if isinstance(value, float) else whole_number(value)
        if number is None:
            return None, "is not a whole number"
        bound = 2 ** (_WHOLE_BITS[kind] - 1)
        if not -bound <= number < bound:
            return None, f"does not fit Kafka's {kind} type"
        return number, None
    if kind == "DOUBLE":
        if isinstance(value, bool) or not (isinstance(value, int | float) or _DECIMAL.match(text)):
            return None, "is not a number"
        number = float(text.rstrip("dDfF"))
        return (number, None) if math.isfinite(number) else (None, "is not a number")
    if kind == "LIST":
        return ([] if not text else [item.strip() for item in text.split(",")]), None
    if kind == "CLASS" and not _CLASS.match(text):
        return None, "is not a Java class name"
    return text, None


def _closest_value(word: str, choices: list[str]) -> str:
    import difflib

    match = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f" (did you mean {match[0]!r}?)" if match else ""


def understood(validator: str) -> bool:
    """Whether value_problem checks this validator itself (else only the type, TYPE_ONLY)."""
    return (
        not validator
        or validator == THROTTLED_REPLICAS
        or validator in _WORDED
        or _RANGE.match(validator) is not None
        or validator.removeprefix(_CASE_INSENSITIVE).startswith("[")
    )


def value_problem(kind: str, validator: str, value: object) -> str | None:
    """What Kafka would refuse in `value` for a config of ConfigDef type `kind` and `validator`
    (as the tables give them), said after the value; None when Kafka takes it."""
    parsed, problem = _parse(kind, value)
    if problem or not validator or validator in TYPE_ONLY:
        return problem
    if validator == THROTTLED_REPLICAS:
        items = parsed if isinstance(parsed, list) else [parsed]
        if items == ["*"] or all(_REPLICA.match(str(i)) for i in items):
            return None
        return f"is neither '*' nor partition:broker pairs (Kafka's {THROTTLED_REPLICAS})"
    if validator in _WORDED:
        message, accepts = _WORDED[validator]
        return None if accepts(parsed) else message  # type: ignore[operator]
    bounds = _RANGE.match(validator)
    if bounds:
        lo, hi, also = (None if b is None else float(b) for b in bounds.group("lo", "hi", "also"))
        number = float(parsed)  # type: ignore[arg-type]  # a number: _parse read it as one
        if number == also or ((lo is None or number >= lo) and (hi is None or number <= hi)):
            return None
        return f"is outside Kafka's range {validator}"
    folded = validator.startswith(_CASE_INSENSITIVE)
    choices = validator.removeprefix(_CASE_INSENSITIVE).strip("[]").split(", ")
    for item in parsed if isinstance(parsed, list) else [parsed]:
        word = str(item)
        # A metadata version (message.format.version) may leave out its -IV part: "2.8" is 2.8-IV1.
        if word in choices or any(c.startswith(f"{word}-IV") for c in choices):
            continue
        if folded and word.upper() in {c.upper() for c in choices}:
            continue
        what = "is" if not isinstance(parsed, list) or len(parsed) == 1 else f"has {word!r}, which is"
        case = " (in any case)" if folded else ""
        hint = _closest_value(word.upper() if folded else word, choices)
        if len(choices) > 8:  # Kafka's metadata versions: the first and the last few
            return f"{what} not one of Kafka's {len(choices)} values {choices[:3]} ... {choices[-3:]}{hint}"
        return f"{what} not one of Kafka's {choices}{case}{hint}"
    return None


def worker_definition(key: str, version: str | None) -> tuple[str, Definition] | None:
    """How a Connect worker reads `key`: (the name Kafka defines, its definition), its own setting
    or, behind producer., consumer. or admin., one of its clients'; None when Kafka defines neither."""
    own = property_types("connect", version).get(key)
    if own is not None:
        return key, own
    for prefix, component in CLIENT_PREFIXES.items():
        if key.startswith(prefix):
            name = key.removeprefix(prefix)
            client = property_types(component, version).get(name)
            return None if client is None else (name, client)
    return None


def mirrormaker_definition(key: str, version: str | None, clusters: set[str]) -> tuple[str, Definition] | None:
    """How mm2.properties reads `key`: (the name Kafka defines, its definition), or None when it
    is no setting of MirrorMaker, its connectors, or (behind a cluster alias) its workers.
    `a->b.name` is a flow's connector setting; `<alias>.name` a cluster's worker and client setting."""
    head, dot, rest = key.partition(".")
    if dot and head in clusters:
        return worker_definition(rest, version)
    if dot and "->" in head:
        tables = [property_types(c, version) for c in MIRROR_CONNECTORS]
        name = rest
    else:
        tables = [property_types(c, version) for c in ("mirrormaker", *MIRROR_CONNECTORS)]
        name = key
    for table in tables:
        if name in table:
            return name, table[name]
    return None


def definition_of(
    component: str, key: str, version: str | None, clusters: set[str] | frozenset[str] = frozenset()
) -> tuple[str, Definition] | None:
    """How `component` (broker, connect, mirrormaker) reads the property `key` of its file:
    (the name Kafka defines, its definition), or None when Kafka does not define it (a plugin's)."""
    if component == "connect":
        return worker_definition(key, version)
    if component == "mirrormaker":
        return mirrormaker_definition(key, version, set(clusters))
    own = property_types(component, version).get(key)
    return None if own is None else (key, own)
