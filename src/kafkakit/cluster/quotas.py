"""Client quotas as code: the users' declared quotas vs. the cluster's, and Kafka's own tool to read
and change them.

confluent-kafka's AdminClient has no client-quota API, so quotas are read and changed with Kafka's
ConfigCommand (`kafka.admin.ConfigCommand`; from 4.4 `org.apache.kafka.tools.ConfigCommand`), run on a
broker host of the data centre (roles/kafka_resources, the
kafka_quotas action plugin). Everything here is pure: what the inventory declares, what the tool's
`--describe` printed, the plan between them, its diff, and the tool's command lines. The admin's
login goes to the tool on its standard input (`--command-config /dev/stdin`), never on a command
line or in a file; nothing returned here holds it except `command_config`'s text.

Ownership, as for ACLs with kafka_acls_exclusive off: a user whose entry has a `quotas` mapping
(even an empty one; null is none) owns exactly those quotas; so does the default user entity
(`--entity-default`) when `defaults` is a mapping; a user declared absent keeps none. Quotas of every other user on the
cluster are undeclared: reported, and removed only with `exclusive`. Only user entities are touched
(no client-id or <user, client-id> quotas).
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from kafkakit.cluster.module_support import text_diff

# Kafka's user quota configs and the type it defines each with (QuotaConfig's user and client
# quota ConfigDef, the same in 3.9 and 4.x). Kafka refuses a fraction for a LONG quota and, in KRaft
# mode, any quota at or below 0.
QUOTA_TYPES: dict[str, str] = {
    "producer_byte_rate": "LONG",
    "consumer_byte_rate": "LONG",
    "request_percentage": "DOUBLE",
    "controller_mutation_rate": "DOUBLE",
}
LONG_MAX = 2**63 - 1
# Kafka 4.4 moved the tool from the core jar (kafka.admin) to the tools jar.
TOOL_CLASS = "kafka.admin.ConfigCommand"
TOOL_CLASS_FROM_4_4 = "org.apache.kafka.tools.ConfigCommand"
# The tool reads its client settings from this path: the runner gives them on standard input.
COMMAND_CONFIG_PATH = "/dev/stdin"
SASL_MECHANISMS = ("SCRAM-SHA-512", "SCRAM-SHA-256")
DEFAULT_LABEL = "<default>"

# A user's name, or None for Kafka's default user entity.
Entity = str | None
Quotas = dict[str, float]

# What ConfigCommand prints per quota entity, in both 3.9 and 4.x (describeQuotaConfigs):
# "Quota configs for user-principal 'NAME' are KEY=VALUE, KEY=VALUE" and, for the default entity,
# "Quota configs for the default user-principal are ...". Values are Java doubles (65536.0, 1.0E7).
_QUOTA_LINE = re.compile(
    r"^Quota configs for (?:the default user-principal|user-principal '(?P<name>.*)') are\b ?(?P<rest>.*)$"
)
_ENTRY = re.compile(r"^(?P<key>[a-z_]+)=(?P<value>[-+0-9.eE]+|Infinity|NaN)$")


class QuotaError(Exception):
    """Declarations Kafka would refuse, or a describe output that cannot be read."""


def label(entity: Entity) -> str:
    return DEFAULT_LABEL if entity is None else f"User:{entity}"


def number_text(key: str, value: float) -> str:
    """A quota as the tool takes it and the diff shows it: whole numbers without '.0'."""
    if QUOTA_TYPES.get(key) == "LONG" or float(value).is_integer():
        return str(int(value))
    return repr(float(value))


def number_value(key: str, value: float) -> int | float:
    """A quota for a result: an int where Kafka's type is LONG or the value is whole."""
    return int(value) if QUOTA_TYPES.get(key) == "LONG" or float(value).is_integer() else float(value)


def _closest(key: str) -> str:
    match = difflib.get_close_matches(key, list(QUOTA_TYPES), n=1, cutoff=0.6)
    return f" (did you mean {match[0]!r}?)" if match else ""


def _number(value: object) -> float | None:
    """The value as a finite number, or None. Numbers may arrive as strings from an inventory; a
    bool is not one here (`yes` is a typo)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return None
    else:
        return None
    return number if math.isfinite(number) else None


def value_problem(key: str, value: object) -> str | None:
    """Why Kafka would refuse `value` for quota `key` (a known one), or None."""
    number = _number(value)
    if number is None:
        if key == "request_percentage" and isinstance(value, str) and value.strip().endswith("%"):
            return (
                "is a percentage written as text: give the number without '%' (the percentage of one "
                "network or I/O thread's time, e.g. 50)"
            )
        return "is not a number"
    if number <= 0:
        return "must be above 0 (Kafka refuses a quota of 0 or less; to lift a quota, remove it)"
    if QUOTA_TYPES[key] == "LONG":
        if not number.is_integer():
            return f"is not a whole number: Kafka defines {key} as LONG (bytes per second)"
        if number > LONG_MAX:
            return f"is above Kafka's largest LONG ({LONG_MAX})"
    return None


def quota_errors(where: str, quotas: object) -> list[str]:
    """One message per problem of a quotas mapping (`where` names it, e.g. 'kafka_users[2] (app)')."""
    if not isinstance(quotas, Mapping):
        return [f"{where}: quotas must be a mapping of {', '.join(QUOTA_TYPES)} to numbers, not {quotas!r}"]
    errors = []
    for key, value in quotas.items():
        if key not in QUOTA_TYPES:
            errors.append(
                f"{where}: unknown quota {key!r}{_closest(str(key))}; Kafka's user quotas are {', '.join(QUOTA_TYPES)}"
            )
        elif problem := value_problem(key, value):
            errors.append(f"{where}: {key}={value!r} {problem}")
    return errors


def user_quota_errors(users: object, name: str = "kafka_users") -> list[str]:
    """The quota problems of a users list (entries with a name; the SCRAM rules check the rest):
    bad quotas, quotas on a user declared absent, a user's quotas in two entries."""
    if not isinstance(users, list):
        return []
    errors: list[str] = []
    holder: dict[str, int] = {}
    for i, user in enumerate(users):
        if not isinstance(user, Mapping) or not isinstance(user.get("name"), str) or user.get("quotas") is None:
            continue
        where = f"{name}[{i}] ({user['name']})"
        if (user.get("state") or "present") == "absent":
            errors.append(f"{where}: quotas on a user declared state: absent; remove them (its quotas go with it)")
            continue
        errors += quota_errors(where, user["quotas"])
        if user["name"] in holder:
            first = holder[user["name"]]
            errors.append(f"{where}: its quotas are declared in {name}[{first}] too; keep them in one entry")
        holder.setdefault(user["name"], i)
    return errors


def declared_quotas(users: Sequence[Mapping], defaults: Mapping | None) -> dict[Entity, Quotas]:
    """The entities the inventory owns, with their quotas: users with a `quotas` mapping, users
    declared absent (none), the default entity when `defaults` is a mapping. QuotaError lists
    every problem."""
    errors = user_quota_errors(list(users), "users")
    if defaults is not None:
        errors += quota_errors("defaults", defaults)
    if errors:
        raise QuotaError("invalid client quota declarations:\n  " + "\n  ".join(errors))
    owned: dict[Entity, Quotas] = {}
    for user in users:
        name = user.get("name")
        if not isinstance(name, str) or not name:
            raise QuotaError(f"a user without a name: {sorted(user)}")
        if (user.get("state") or "present") == "absent":
            owned.setdefault(name, {})
        elif user.get("quotas") is not None:
            owned[name] = {k: float(v) for k, v in user["quotas"].items()}
    if defaults is not None:
        owned[None] = {k: float(v) for k, v in defaults.items()}
    return owned


def parse_describe(output: str) -> dict[Entity, Quotas]:
    """The user quota entities ConfigCommand's `--describe --entity-type users` printed (its other
    lines, the SCRAM credentials, are not quotas). QuotaError on a quota line it cannot read."""
    found: dict[Entity, Quotas] = {}
    for line in output.splitlines():
        match = _QUOTA_LINE.match(line.rstrip())
        if not match:
            continue
        # The name is greedy: one holding "' are " ends at the last one, where the entries begin.
        entity: Entity = match["name"]
        quotas: Quotas = {}
        for part in (p.strip() for p in match["rest"].split(",") if p.strip()):
            entry = _ENTRY.match(part)
            if not entry:
                raise QuotaError(f"cannot read the quota {part!r} in ConfigCommand's line {line!r}")
            quotas[entry["key"]] = float(entry["value"])
        if quotas:
            found[entity] = quotas
    return found


def _same(have: float | None, want: float) -> bool:
    return have is not None and math.isclose(have, want, rel_tol=1e-9, abs_tol=1e-9)


@dataclass(frozen=True)
class Change:
    """One entity's alteration: quotas set (added or changed) and quotas deleted."""

    entity: Entity
    set: dict[str, float] = field(default_factory=dict)
    delete: tuple[str, ...] = ()


@dataclass
class QuotaPlan:
    before: dict[Entity, Quotas]
    after: dict[Entity, Quotas]
    changes: list[Change] = field(default_factory=list)
    # Quotas of entities the inventory does not own: kept, or removed (exclusive).
    undeclared: dict[Entity, Quotas] = field(default_factory=dict)
    exclusive: bool = False

    @property
    def changed(self) -> bool:
        return bool(self.changes)


def _order(entity: Entity) -> tuple[int, str]:
    return (0, "") if entity is None else (1, entity)


def plan_quotas(declared: Mapping[Entity, Quotas], current: Mapping[Entity, Quotas], exclusive: bool) -> QuotaPlan:
    """What to change so that every owned entity has exactly its declared quotas, and (with
    `exclusive`) no other user entity has any."""
    before = {e: dict(q) for e, q in current.items() if q}
    after = {e: dict(q) for e, q in before.items()}
    plan = QuotaPlan(before=before, after=after, exclusive=exclusive)
    for entity in sorted(set(declared) | set(before), key=_order):
        have = before.get(entity, {})
        if entity in declared:
            want = declared[entity]
            to_set = {k: v for k, v in sorted(want.items()) if not _same(have.get(k), v)}
            to_delete = tuple(sorted(k for k in have if k not in want))
        else:
            plan.undeclared[entity] = dict(have)
            if not exclusive:
                continue
            to_set, to_delete = {}, tuple(sorted(have))
        if not to_set and not to_delete:
            continue
        plan.changes.append(Change(entity, to_set, to_delete))
        result = {k: v for k, v in have.items() if k not in to_delete} | to_set
        if result:
            after[entity] = result
        else:
            after.pop(entity, None)
    return plan


def lines(quotas: Mapping[Entity, Quotas]) -> list[str]:
    """One line per entity and quota, e.g. 'User:app producer_byte_rate=65536' (the diff's lines)."""
    return [
        f"{label(e)} {k}={number_text(k, v)}" for e in sorted(quotas, key=_order) for k, v in sorted(quotas[e].items())
    ]


def diff(plan: QuotaPlan) -> dict[str, str]:
    return text_diff(lines(plan.before), lines(plan.after))


def as_result(quotas: Mapping[Entity, Quotas]) -> dict[str, dict[str, float]]:
    """Entities by label, for a module result (JSON has no None key)."""
    return {
        label(e): {k: number_value(k, v) for k, v in sorted(q.items())}
        for e, q in sorted(quotas.items(), key=lambda item: _order(item[0]))
    }


def tool_class(kafka_version: str) -> str:
    """The ConfigCommand class of the Kafka release the tool's host runs ("4.4.0", "3.9.2")."""
    found = re.match(r"^\s*(\d+)\.(\d+)(\.\d+)?\s*$", str(kafka_version))
    if found is None:
        raise QuotaError(f"kafka_version={kafka_version!r} is not a Kafka release like 4.4.0")
    return TOOL_CLASS_FROM_4_4 if (int(found.group(1)), int(found.group(2))) >= (4, 4) else TOOL_CLASS


def _connection(bootstrap_servers: str, kafka_version: str) -> list[str]:
    return [tool_class(kafka_version), "--bootstrap-server", bootstrap_servers, "--command-config", COMMAND_CONFIG_PATH]


def describe_command(bootstrap_servers: str, kafka_version: str) -> list[str]:
    """Every user entity with quotas, the default one included, in one run (a filter on the user
    entity type only: <user, client-id> entities are not listed), with the tool of `kafka_version`."""
    return [*_connection(bootstrap_servers, kafka_version), "--describe", "--entity-type", "users"]


def alter_command(bootstrap_servers: str, kafka_version: str, change: Change) -> list[str]:
    """One entity's change in one run (the tool takes one entity per run; adding and deleting
    together is one AlterClientQuotas request), with the tool of `kafka_version`."""
    args = [*_connection(bootstrap_servers, kafka_version), "--alter", "--entity-type", "users"]
    args += ["--entity-default"] if change.entity is None else ["--entity-name", change.entity]
    if change.set:
        args += ["--add-config", ",".join(f"{k}={number_text(k, v)}" for k, v in sorted(change.set.items()))]
    if change.delete:
        args += ["--delete-config", ",".join(change.delete)]
    return args


def _jaas_quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def command_config(user: str, password: str, truststore: str, mechanism: str = "SCRAM-SHA-512") -> str:
    """The tool's client settings (Java properties): the admin's SCRAM login over TLS, checked
    against the host's PEM truststore. A secret: give it to the tool on standard input only."""
    if mechanism not in SASL_MECHANISMS:
        raise QuotaError(f"unknown SASL mechanism {mechanism!r}; expected one of {', '.join(SASL_MECHANISMS)}")
    if not user or not password:
        raise QuotaError("the admin login needs a user name and a password")
    if any(c in user + password for c in "\r\n"):
        raise QuotaError("the admin's name or password holds a line break, which a client properties file cannot carry")
    jaas = (
        "org.apache.kafka.common.security.scram.ScramLoginModule required "
        f"username={_jaas_quoted(user)} password={_jaas_quoted(password)};"
    )
    settings = {
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": mechanism,
        "sasl.jaas.config": jaas,
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": truststore,
    }
    return "".join(f"{k}={_properties_value(v)}\n" for k, v in settings.items())


def _properties_value(value: str) -> str:
    """`value` as java.util.Properties reads it back: a backslash is its escape character, and the
    tool reads the file as ISO-8859-1, so anything beyond ASCII goes as \\uXXXX (UTF-16 units)."""
    out = []
    for char in value.replace("\\", "\\\\"):
        if " " <= char <= "~":
            out.append(char)
        else:
            units = char.encode("utf-16-be")
            out += [f"\\u{units[i]:02x}{units[i + 1]:02x}" for i in range(0, len(units), 2)]
    return "".join(out)


def mask(text: str, secrets: Sequence[str]) -> str:
    """`text` with every secret replaced, longest first (one may hold another)."""
    for secret in sorted((s for s in secrets if s), key=len, reverse=True):
        text = text.replace(secret, "********")
    return text
