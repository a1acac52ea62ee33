"""Kafka client settings for Spark's Kafka source and sink, read from the properties file the
spark role writes on each Spark host (bootstrap, SASL_SSL, SCRAM credentials, CA)."""

from __future__ import annotations

from pathlib import Path


def read_properties(path: str | Path) -> dict[str, str]:
    """Java .properties with `key=value` lines and `#` comments (what the role writes)."""
    props: dict[str, str] = {}
    for raw in Path(path).read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", "!")):
            continue
        key, sep, value = line.partition("=")
        if not sep:
            raise ValueError(f"{path}: not a key=value line: {line!r}")
        props[key.strip()] = value.strip()
    if "bootstrap.servers" not in props:
        raise ValueError(f"{path}: bootstrap.servers is missing")
    return props


def spark_kafka_options(path: str | Path) -> dict[str, str]:
    """The properties as Spark options: every Kafka client setting takes the `kafka.` prefix."""
    return {f"kafka.{key}": value for key, value in read_properties(path).items()}
