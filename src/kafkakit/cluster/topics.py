"""Topics as code: the difference between a declared topic and the cluster, and applying it."""

from __future__ import annotations

from dataclasses import dataclass, field

from confluent_kafka import KafkaException
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    NewPartitions,
    NewTopic,
)

TIMEOUT = 30.0


class TopicError(Exception):
    """A declared change Kafka cannot make safely (shrinking, RF change) or an API failure."""


@dataclass(frozen=True)
class TopicSpec:
    name: str
    partitions: int
    replication_factor: int
    configs: dict[str, str] = field(default_factory=dict)
    present: bool = True


@dataclass
class TopicState:
    partitions: int
    replication_factor: int
    configs: dict[str, str]


@dataclass
class TopicChange:
    actions: list[str] = field(default_factory=list)
    before: dict = field(default_factory=dict)
    after: dict = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        return bool(self.actions)


def _as_dict(state: TopicState | None) -> dict:
    if state is None:
        return {}
    return {
        "partitions": state.partitions,
        "replication_factor": state.replication_factor,
        "configs": dict(sorted(state.configs.items())),
    }


def read_topic(admin: AdminClient, name: str) -> TopicState | None:
    meta = admin.list_topics(topic=name, timeout=TIMEOUT)
    topic = meta.topics.get(name)
    if topic is None or topic.error is not None:
        return None
    partitions = topic.partitions.values()
    rf = max((len(p.replicas) for p in partitions), default=0)
    resource = ConfigResource(ConfigResource.Type.TOPIC, name)
    entries = admin.describe_configs([resource])[resource].result(timeout=TIMEOUT)
    # Only configs set on the topic itself are declared state; defaults are the broker's business.
    explicit = {
        k: e.value
        for k, e in entries.items()
        if e.source in (ConfigSource.DYNAMIC_TOPIC_CONFIG, ConfigSource.DYNAMIC_TOPIC_CONFIG.value)
    }
    return TopicState(partitions=len(topic.partitions), replication_factor=rf, configs=explicit)


def plan(spec: TopicSpec, current: TopicState | None) -> list[str]:
    """The actions that bring `current` to `spec`; raises TopicError for unsafe ones."""
    if not spec.present:
        return [f"delete topic {spec.name}"] if current else []
    if current is None:
        return [
            f"create topic {spec.name} with {spec.partitions} partitions, replication factor {spec.replication_factor}"
        ]
    if spec.partitions < current.partitions:
        raise TopicError(
            f"topic {spec.name}: cannot shrink from {current.partitions} to {spec.partitions} "
            "partitions (Kafka cannot remove partitions; key-to-partition mapping would break)"
        )
    if spec.replication_factor != current.replication_factor:
        raise TopicError(
            f"topic {spec.name}: replication factor is {current.replication_factor}, declared "
            f"{spec.replication_factor}; changing it needs a partition reassignment, not a config edit"
        )
    actions = []
    if spec.partitions > current.partitions:
        actions.append(f"grow {spec.name} from {current.partitions} to {spec.partitions} partitions")
    for key, value in sorted(spec.configs.items()):
        if current.configs.get(key) != value:
            actions.append(f"set {key}={value} on {spec.name}")
    return actions


def apply_topic(admin: AdminClient, spec: TopicSpec, check_mode: bool = False) -> TopicChange:
    try:
        current = read_topic(admin, spec.name)
        actions = plan(spec, current)
        after = (
            {}
            if not spec.present
            else {
                "partitions": max(spec.partitions, current.partitions if current else 0),
                "replication_factor": spec.replication_factor,
                "configs": dict(sorted({**(current.configs if current else {}), **spec.configs}.items())),
            }
        )
        change = TopicChange(actions=actions, before=_as_dict(current), after=after)
        if check_mode or not actions:
            return change
        if not spec.present:
            admin.delete_topics([spec.name])[spec.name].result(timeout=TIMEOUT)
        elif current is None:
            new = NewTopic(spec.name, spec.partitions, spec.replication_factor, config=spec.configs)
            admin.create_topics([new])[spec.name].result(timeout=TIMEOUT)
        else:
            if spec.partitions > current.partitions:
                grow = NewPartitions(spec.name, spec.partitions)
                admin.create_partitions([grow])[spec.name].result(timeout=TIMEOUT)
            changed_cfg = {k: v for k, v in spec.configs.items() if current.configs.get(k) != v}
            if changed_cfg:
                resource = ConfigResource(
                    ConfigResource.Type.TOPIC,
                    spec.name,
                    incremental_configs=[
                        ConfigEntry(k, v, incremental_operation=AlterConfigOpType.SET) for k, v in changed_cfg.items()
                    ],
                )
                admin.incremental_alter_configs([resource])[resource].result(timeout=TIMEOUT)
        return change
    except KafkaException as exc:
        raise TopicError(f"topic {spec.name}: {exc}") from exc
