"""Connectors as code: what a run must do to bring a Connect cluster's connectors to the declared
ones (create, update, pause, resume, stop, delete), decided before anything changes; and the
REST calls that do it (kafkakit.cluster.connect.request, mutual TLS)."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from kafkakit.cluster.connect import Call, RestError, TlsFiles, request

STATES = ("running", "paused", "stopped", "absent")
# Connect's state of a connector -> the declared state it already is: a failed, unassigned or
# restarting one is meant to run (restarting what failed is ops/connect-restart-failed.yml's).
_AS_DECLARED = {
    "RUNNING": "running",
    "FAILED": "running",
    "UNASSIGNED": "running",
    "RESTARTING": "running",
    "PAUSED": "paused",
    "STOPPED": "stopped",
}
# The REST call that takes a connector to a declared state.
_TRANSITIONS = {"running": "resume", "paused": "pause", "stopped": "stop"}
# Debezium's PostgreSQL connector: its replication slot keeps the database's WAL until it is dropped,
# so its deletion drops the slot too. Debezium's defaults where the config names none.
POSTGRES_CLASS = "io.debezium.connector.postgresql.PostgresConnector"
_POSTGRES_DEFAULTS = {
    "database.port": "5432",
    "database.sslmode": "prefer",
    "slot.name": "debezium",
    "publication.name": "dbz_publication",
    "publication.autocreate.mode": "all_tables",
}
_FILE_REF = re.compile(r"^\$\{file:(?P<path>[^:}]+):(?P<key>[^:}]+)\}$")


def config_text(value: Any) -> str:
    """A config value as Connect stores it: booleans as Java writes them, everything else as text."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


@dataclass(frozen=True)
class Declared:
    """A declared connector: its name, class, state and config, the config as Connect stores it
    (every value a string; secrets as config-provider references, never their values)."""

    name: str
    cls: str
    state: str = "running"
    config: Mapping[str, str] = field(default_factory=dict)

    def full_config(self) -> dict[str, str]:
        return {**{k: config_text(v) for k, v in self.config.items()}, "connector.class": self.cls, "name": self.name}


@dataclass(frozen=True)
class Current:
    """A connector as the cluster has it: its stored config and its state (RUNNING, PAUSED, ...)."""

    name: str
    config: Mapping[str, str]
    state: str


@dataclass(frozen=True)
class SourceSlot:
    """What a deleted PostgreSQL connector leaves in its database, and how to log in as it did: its
    replication slot, and its publication when Debezium made it (the capture user owns it then; one
    the database's owner made, publication.autocreate.mode=disabled, is theirs and stays)."""

    connector: str
    host: str
    port: int
    database: str
    user: str
    sslmode: str
    sslrootcert: str
    slot: str
    publication: str  # '' when it is the database owner's
    password_file: str
    password_key: str

    def where(self) -> str:
        return f"{self.host}:{self.port}/{self.database}"


def source_slot(current: Current) -> SourceSlot | None:
    """The slot a connector holds in its source database (None for any other class). Its password
    must be a reference to a file on the workers, as the kit writes it; a ValueError otherwise."""
    if current.config.get("connector.class") != POSTGRES_CLASS:
        return None
    c = {**_POSTGRES_DEFAULTS, **current.config}
    ref = _FILE_REF.match(c.get("database.password", ""))
    if ref is None:
        raise ValueError(
            f"connector {current.name}: database.password is no ${{file:...}} reference, so the kit cannot log in "
            "to drop its replication slot; drop it by hand after the deletion"
        )
    owned = c["publication.autocreate.mode"] != "disabled"
    return SourceSlot(
        current.name,
        c.get("database.hostname", ""),
        int(c["database.port"]),
        c.get("database.dbname", ""),
        c.get("database.user", ""),
        c["database.sslmode"],
        c.get("database.sslrootcert", ""),
        c["slot.name"],
        c["publication.name"] if owned else "",
        ref["path"],
        ref["key"],
    )


@dataclass(frozen=True)
class Action:
    name: str
    verb: str  # create, update, pause, resume, stop, delete
    state: str = ""  # create: the initial state


@dataclass
class Plan:
    actions: list[Action] = field(default_factory=list)
    refusals: list[str] = field(default_factory=list)
    undeclared: list[str] = field(default_factory=list)
    diffs: dict[str, tuple[list[str], list[str]]] = field(default_factory=dict)
    slots: list[SourceSlot] = field(default_factory=list)  # to drop after their connectors' deletion


def declared_errors(declared: Sequence[Mapping[str, Any]]) -> list[str]:
    """What is wrong with `kafka_connectors` as typed, one message each."""
    errors, seen = [], set()
    for i, c in enumerate(declared):
        name = str(c.get("name", "")).strip()
        where = f"kafka_connectors[{i}]" + (f" ({name})" if name else "")
        if not name:
            errors.append(f"{where}: no name")
        elif name in seen:
            errors.append(f"{where}: declared twice")
        seen.add(name)
        if str(c.get("state", "running")) not in STATES:
            errors.append(f"{where}: state {c.get('state')!r} is none of {list(STATES)}")
        if str(c.get("state", "running")) != "absent" and not str(c.get("class", "")).strip():
            errors.append(f"{where}: no class")
        if not isinstance(c.get("config", {}), Mapping):
            errors.append(f"{where}: config is no mapping")
        elif {"name", "connector.class"} & set(c.get("config", {})):
            errors.append(f"{where}: config names 'name' or 'connector.class' (the entry's name and class set them)")
    return errors


def config_lines(config: Mapping[str, str]) -> list[str]:
    return [f"{k}={v}" for k, v in sorted(config.items())]


def plan(declared: Iterable[Declared], current: Mapping[str, Current], allow_delete: Iterable[str] = ()) -> Plan:
    """The actions, in order, that take `current` to `declared`; a deletion not named in
    `allow_delete` is a refusal instead (and a refused plan must not be carried out at all)."""
    allowed = set(allow_delete)
    result = Plan()
    names = set()
    for d in declared:
        names.add(d.name)
        have = current.get(d.name)
        if d.state == "absent":
            if have is None:
                continue
            try:
                slot = source_slot(have)
            except ValueError as exc:
                result.refusals.append(str(exc))
                continue
            if d.name in allowed:
                result.actions.append(Action(d.name, "delete"))
                result.diffs[d.name] = (config_lines(have.config), [])
                if slot is not None:
                    result.slots.append(slot)
            else:
                result.refusals.append(
                    f"connector {d.name} is declared absent: deleting it drops its tasks and its place in its source"
                    + _slot_words(slot)
                    + f'; name it for this run: -e \'{{"kafka_connectors_allow_delete": ["{d.name}"]}}\''
                )
            continue
        want = d.full_config()
        if have is None:
            result.actions.append(Action(d.name, "create", d.state))
            result.diffs[d.name] = ([], config_lines(want))
            continue
        if dict(have.config) != want:
            result.actions.append(Action(d.name, "update"))
            result.diffs[d.name] = (config_lines(have.config), config_lines(want))
        if _AS_DECLARED.get(have.state) != d.state:
            result.actions.append(Action(d.name, _TRANSITIONS[d.state]))
    result.undeclared = sorted(set(current) - names)
    return result


def _slot_words(slot: SourceSlot | None) -> str:
    if slot is None:
        return ""
    words = f", and its replication slot {slot.slot}"
    if slot.publication:
        words += f" and publication {slot.publication}"
    return words + f" in {slot.where()}"


def validation_errors(answer: Mapping[str, Any]) -> list[str]:
    """The errors of Connect's PUT /connector-plugins/{class}/config/validate answer, as
    "<setting>: <error>"."""
    errors = []
    for item in answer.get("configs", []):
        value = item.get("value") or {}  # null for a setting Connect only defines
        errors += [f"{value.get('name', '?')}: {e}" for e in value.get("errors", [])]
    if answer.get("error_count", 0) and not errors:
        errors.append(f"{answer.get('error_count')} error(s) without a setting named")
    return errors


# --- against a cluster --------------------------------------------------------------------------


def _path(name: str) -> str:
    return quote(name, safe="")


def read_current(url: str, tls: TlsFiles, call: Call = request) -> dict[str, Current]:
    """Every connector of the cluster with its stored config and state."""
    listing = call(url, "GET", "/connectors?expand=info&expand=status", tls)[1] or {}
    current = {}
    for name, entry in listing.items():
        config = {k: str(v) for k, v in entry["info"]["config"].items()}
        current[name] = Current(name, config, entry["status"]["connector"]["state"])
    return current


def validate(url: str, tls: TlsFiles, declared: Iterable[Declared], call: Call = request) -> list[str]:
    """Connect's own validation of every declared config, before anything changes: one message per
    error, naming the connector."""
    errors = []
    for d in declared:
        if d.state == "absent":
            continue
        try:
            answer = call(url, "PUT", f"/connector-plugins/{_path(d.cls)}/config/validate", tls, d.full_config())[1]
        except RestError as exc:
            errors.append(f"connector {d.name}: class {d.cls} could not be validated (is it in a plugin?): {exc}")
            continue
        errors += [f"connector {d.name}: {e}" for e in validation_errors(answer or {})]
    return errors


def apply(
    url: str, tls: TlsFiles, declared: Iterable[Declared], actions: Iterable[Action], call: Call = request
) -> None:
    """Carry out a plan's actions in order (a refused plan is never passed here)."""
    by_name = {d.name: d for d in declared}
    for a in actions:
        path = f"/connectors/{_path(a.name)}"
        if a.verb == "create":
            body = {"name": a.name, "config": by_name[a.name].full_config(), "initial_state": a.state.upper()}
            call(url, "POST", "/connectors", tls, body)
        elif a.verb == "update":
            call(url, "PUT", f"{path}/config", tls, by_name[a.name].full_config())
        elif a.verb == "delete":
            retire(url, tls, a.name, call)
        else:
            call(url, "PUT", f"{path}/{a.verb}", tls)


def retire(
    url: str,
    tls: TlsFiles,
    name: str,
    call: Call = request,
    timeout: float = 120.0,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """Delete a connector with its offsets: stop it, wait until its tasks are gone (a replication
    slot is then no longer in use), reset its offsets (Connect allows it only when stopped), delete
    it. One made again under its name starts anew, never from a place in its source that is gone."""
    path = f"/connectors/{_path(name)}"
    call(url, "PUT", f"{path}/stop", tls)
    deadline = clock() + timeout
    while True:
        status = call(url, "GET", f"{path}/status", tls)[1] or {}
        if status.get("connector", {}).get("state") == "STOPPED" and not status.get("tasks"):
            break
        if clock() >= deadline:
            raise RestError(0, f"connector {name} did not stop within {timeout:.0f} s: {status}")
        sleep(1.0)
    call(url, "DELETE", f"{path}/offsets", tls)
    call(url, "DELETE", path, tls)


def restart(url: str, tls: TlsFiles, names: Iterable[str], call: Call = request) -> None:
    """Restart each connector with its tasks (its secrets changed: the workers re-read them)."""
    for name in names:
        call(url, "POST", f"/connectors/{_path(name)}/restart?includeTasks=true", tls)


def restart_failed(url: str, tls: TlsFiles, names: Iterable[str], call: Call = request) -> None:
    """Restart what is FAILED of each connector (Connect's onlyFailed restart), nothing else."""
    for name in names:
        call(url, "POST", f"/connectors/{_path(name)}/restart?includeTasks=true&onlyFailed=true", tls)


def restart_task(url: str, tls: TlsFiles, name: str, task: int, call: Call = request) -> None:
    """Restart one task of a connector on the worker it is assigned to (Connect forwards the
    request there), running or not."""
    call(url, "POST", f"/connectors/{_path(name)}/tasks/{task}/restart", tls)


# --- from the inventory ---------------------------------------------------------------------------

PRINCIPAL_PREFIXES = ("producer.override.", "consumer.override.", "admin.override.")


def properties_text(values: Mapping[str, Any]) -> str:
    """A Java .properties text of `values` (keys sorted); backslashes escaped, no line breaks."""
    lines = []
    for key, value in sorted(values.items()):
        text = str(value)
        if "\n" in text or "\r" in text or any(c in key for c in "=: \n\\"):
            raise ValueError(f"{key}: a secret's key must be a plain name and its value one line")
        lines.append(f"{key}={text.replace(chr(92), chr(92) * 2)}")
    return "".join(f"{line}\n" for line in lines)


def properties_value(text: str, key: str) -> str:
    """The value of `key` in a .properties text properties_text wrote; a KeyError naming only the key."""
    for line in text.splitlines():
        name, sep, value = line.partition("=")
        if sep and name.strip() == key:
            return value.replace(chr(92) * 2, chr(92))
    raise KeyError(f"no {key} in the file")


def secret_ref(path: str, key: str) -> str:
    """A reference Connect's FileConfigProvider resolves on the worker; the REST API only ever
    stores and shows the reference."""
    return "${file:" + path + ":" + key + "}"


def declared_connectors(entries: Sequence[Mapping[str, Any]], secrets_dir: str) -> list[Declared]:
    """`kafka_connectors` as Connect will store them: each secret replaced by its reference into
    <secrets_dir>/<name>.properties, and a `principal` made the connector's own login for every
    client it uses (its password referenced in <secrets_dir>/principals.properties)."""
    out = []
    for e in entries:
        name = str(e["name"])
        config = {k: config_text(v) for k, v in (e.get("config") or {}).items()}
        for key in sorted(e.get("secrets") or {}):
            config[key] = secret_ref(f"{secrets_dir}/{name}.properties", key)
        principal = str(e.get("principal") or "")
        if principal:
            password = secret_ref(f"{secrets_dir}/principals.properties", principal)
            jaas = (
                f'org.apache.kafka.common.security.scram.ScramLoginModule required username="{principal}" '
                f'password="{password}";'
            )
            config.update({f"{prefix}sasl.jaas.config": jaas for prefix in PRINCIPAL_PREFIXES})
        out.append(Declared(name, str(e.get("class", "")), str(e.get("state", "running")), config))
    return out


def secret_files(
    entries: Sequence[Mapping[str, Any]], secrets_dir: str, passwords: Mapping[str, str]
) -> dict[str, str]:
    """Path -> text of the secret files the workers need: one per connector with secrets, and the
    passwords of the connectors' principals (from `passwords`, the declared users'). A connector
    declared absent keeps its files: its deletion fences its tasks' producers as its principal and
    drops its replication slot with its database login."""
    files = {}
    principals = {}
    for e in entries:
        if e.get("secrets"):
            files[f"{secrets_dir}/{e['name']}.properties"] = properties_text(e["secrets"])
        principal = str(e.get("principal") or "")
        if principal:
            if principal not in passwords:
                raise ValueError(f"connector {e['name']}: principal {principal} is no declared user (kafka_users)")
            principals[principal] = passwords[principal]
    files[f"{secrets_dir}/principals.properties"] = properties_text(principals)
    return files


def connector_acls(entries: Sequence[Mapping[str, Any]], group_id: str, offset_topic: str) -> list[dict[str, Any]]:
    """What a connector's own principal needs beyond its data topics (which kafka_acls grants):
    the transactional ids of its tasks' producers (exactly-once source support names them
    <group>-<connector>-<task>; the leader fences them with the same principal), the offsets topic
    its offsets are written to inside those transactions, and a sink's consumer group connect-<name>.
    A connector declared absent keeps them: its deletion fences its tasks' producers first."""
    acls: list[dict[str, Any]] = []
    for e in entries:
        principal = str(e.get("principal") or "")
        if not principal:
            continue
        user = f"User:{principal}"
        acls += [
            {
                "principal": user,
                "resource_type": "transactional_id",
                "name": f"{group_id}-{e['name']}-",
                "pattern_type": "prefixed",
                "operations": ["write", "describe"],
            },
            {
                "principal": user,
                "resource_type": "topic",
                "name": offset_topic,
                "pattern_type": "literal",
                "operations": ["read", "write", "describe"],
            },
            {
                "principal": user,
                "resource_type": "group",
                "name": f"connect-{e['name']}",
                "pattern_type": "literal",
                "operations": ["read", "describe"],
            },
        ]
    return acls
