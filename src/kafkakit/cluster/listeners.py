"""An extra listener on a running broker as an overlay: per-broker dynamic configuration (KIP-226),
never server.properties. Used by `make bench` for its PLAINTEXT listener (ansible/lab/bench-listener.yml).

`listeners`, `advertised.listeners` and `listener.security.protocol.map` are per-broker dynamic
configs: set through the admin API on the BROKER resource `<broker id>`, the broker opens the new
listener (and, in ZooKeeper mode, re-registers its advertised endpoints) without a restart, and
keeps it across restarts until the dynamic values are deleted, which returns it to the listeners
of its server.properties. Under KRaft, Kafka refuses to alter advertised listeners dynamically.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

# The dynamic settings of an overlay, in the order Kafka validates them together.
KEYS = ("listeners", "advertised.listeners", "listener.security.protocol.map")
DYNAMIC_BROKER_CONFIG = 2  # confluent_kafka.admin.ConfigSource.DYNAMIC_BROKER_CONFIG
TIMEOUT = 30.0


class ListenerError(Exception):
    pass


def _items(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]


def _name(item: str) -> str:
    """The listener name of `NAME://host:port` or of `NAME:PROTOCOL`."""
    return item.split(":", 1)[0].upper()


@dataclass(frozen=True)
class BrokerListeners:
    """The three settings of one broker as it runs them, and which are per-broker dynamic."""

    values: Mapping[str, str]
    dynamic: frozenset[str] = field(default_factory=frozenset)

    def items(self, key: str) -> list[str]:
        # Without advertised.listeners a broker advertises its listeners.
        if key == "advertised.listeners" and not self.values.get(key):
            return _items(self.values.get("listeners"))
        return _items(self.values.get(key))

    def names(self) -> set[str]:
        return {_name(item) for key in KEYS for item in self.items(key)}


def static_names(lines: Sequence[str]) -> frozenset[str]:
    """The listener names of server.properties' `listeners=` and `advertised.listeners=` lines."""
    names: set[str] = set()
    for line in lines:
        key, sep, value = line.strip().partition("=")
        if sep and key.strip() in ("listeners", "advertised.listeners"):
            names.update(_name(item) for item in _items(value))
    return frozenset(names)


def plan(
    current: BrokerListeners,
    name: str,
    protocol: str,
    address: str,
    present: bool,
    static: frozenset[str] | None = None,
) -> dict[str, str | None]:
    """What to change: {key: new value} to set, {key: None} to delete; empty when nothing is to do.

    present: the three settings as the broker runs them, with `name` (re)defined as
    `name://address` speaking `protocol`. absent: the three per-broker dynamic values deleted, so
    the broker runs its server.properties listeners again. `static`, the listener names of
    server.properties when known, decides whether the listener is static: a describe answered while
    the broker applies a change can show dynamic values with a static source, so then all three
    keys are deleted (deleting a key that has no dynamic value changes nothing)."""
    name = name.upper()
    if present:
        wanted = {
            "listeners": f"{name}://{address}",
            "advertised.listeners": f"{name}://{address}",
            "listener.security.protocol.map": f"{name}:{protocol.upper()}",
        }
        out: dict[str, str | None] = {}
        for key in KEYS:
            items = current.items(key)
            if wanted[key] in items and sum(_name(i) == name for i in items) == 1:
                continue
            out[key] = ",".join([i for i in items if _name(i) != name] + [wanted[key]])
        # Kafka checks the three together: set all or none.
        return {key: out.get(key, ",".join(current.items(key))) for key in KEYS} if out else {}
    if name not in current.names():
        return {}
    if static is not None:
        if name in static:
            raise ListenerError(
                f"listener {name} is in the broker's server.properties, not a dynamic overlay: remove it there"
            )
        return dict.fromkeys(KEYS)
    if not current.dynamic:
        raise ListenerError(
            f"listener {name} is in the broker's static configuration (server.properties), not a "
            "dynamic overlay: remove it there"
        )
    return {key: None for key in KEYS if key in current.dynamic}


def settled(current: BrokerListeners, name: str, protocol: str, address: str, present: bool) -> bool:
    """Whether the broker reports the overlay as asked. Read while a change is being applied, not
    before: a ZooKeeper-mode broker drops the deleted keys from its dynamic set before it swaps in
    the configuration without the listener, so for a moment the listener shows with a static source."""
    if present:
        return not plan(current, name, protocol, address, present=True)
    return name.upper() not in current.names()


def _source(entry: Any) -> int:
    return int(getattr(entry.source, "value", entry.source))


def read(admin: Any, broker_id: int, timeout: float = TIMEOUT) -> BrokerListeners:
    """The three settings of `broker_id` as it reports them (the request goes to that broker)."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import ConfigResource, ResourceType

    resource = ConfigResource(ResourceType.BROKER, str(broker_id))
    try:
        entries = admin.describe_configs([resource], request_timeout=timeout)[resource].result(timeout=timeout + 5)
    except KafkaException as exc:
        raise ListenerError(f"broker {broker_id}: {exc}") from exc
    values = {key: entries[key].value or "" for key in KEYS if key in entries}
    dynamic = frozenset(key for key in KEYS if key in entries and _source(entries[key]) == DYNAMIC_BROKER_CONFIG)
    return BrokerListeners(values, dynamic)


def apply(admin: Any, broker_id: int, changes: Mapping[str, str | None], timeout: float = TIMEOUT) -> None:
    """One IncrementalAlterConfigs request on BROKER `broker_id`: SET or DELETE each key."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

    entries = [
        ConfigEntry(key, value, incremental_operation=AlterConfigOpType.SET)
        if value is not None
        else ConfigEntry(key, None, incremental_operation=AlterConfigOpType.DELETE)
        for key, value in changes.items()
    ]
    resource = ConfigResource(ResourceType.BROKER, str(broker_id), incremental_configs=entries)
    try:
        admin.incremental_alter_configs([resource], request_timeout=timeout)[resource].result(timeout=timeout + 5)
    except KafkaException as exc:
        raise ListenerError(f"broker {broker_id}: {exc}") from exc


@dataclass(frozen=True)
class Outcome:
    changes: dict[str, str | None]
    before: dict[str, str]
    after: dict[str, str]

    @property
    def changed(self) -> bool:
        return bool(self.changes)


def _shown(current: BrokerListeners) -> dict[str, str]:
    return {key: ",".join(current.items(key)) for key in KEYS}


def overlay(
    admin: Any,
    broker_id: int,
    name: str,
    protocol: str,
    address: str,
    present: bool,
    check_mode: bool = False,
    static: frozenset[str] | None = None,
    settle: float = TIMEOUT,
    interval: float = 1.0,
) -> Outcome:
    """Bring the listener overlay of one broker to `present`; the settings before and after.

    The broker applies a dynamic change when it sees it (in ZooKeeper mode, through a change
    notification), a moment after the request returned: its own report is read again until the
    change shows there, for up to `settle` seconds."""
    current = read(admin, broker_id)
    changes = plan(current, name, protocol, address, present, static)
    before = _shown(current)
    if not changes or check_mode:
        after = {**before, **{k: v if v is not None else "(server.properties)" for k, v in changes.items()}}
        return Outcome(changes, before, after)
    apply(admin, broker_id, changes)
    deadline = time.monotonic() + settle
    while True:
        now = read(admin, broker_id)
        if settled(now, name, protocol, address, present):
            return Outcome(changes, before, _shown(now))
        if time.monotonic() >= deadline:
            state = "missing" if present else "still there"
            raise ListenerError(f"broker {broker_id}: listener {name} {state} {settle:.0f} s later: {dict(now.values)}")
        time.sleep(interval)
