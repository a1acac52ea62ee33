"""Guards of a Kafka release change in a KRaft data centre (issue 47): what ops/upgrade.yml refuses
before any node restarts, and before its features step.

- The features step (`kafka-features upgrade --release-version <line>`) moves metadata.version and
  the other features to the new release line. It cannot be undone once the line changed metadata
  (4.3 and 4.4 did), so it is refused until every controller and broker runs the new release.
- A release below the finalized metadata.version cannot start (its newest metadata.version is
  lower): changing the binaries to it is refused before any node restarts.
- Kafka 4.4's storage format is not forward-compatible (KIP-1170: the bootstrap metadata moved from
  bootstrap.checkpoint into the zero checkpoint of __cluster_metadata-0): a node must run the release
  that formatted its directories or a newer one. The kit formats with the release the node runs and
  records it (kafka_storage_format's `record`); a release older than that record is refused.

The levels are Kafka's own: MetadataVersion of Kafka 4.4.0 (`kafka-features version-mapping
--release-version <line>` prints the one a line finalizes); tests/unit/guards/test_upgrade.py compares
them with every 4.x archive in build/artifacts.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass

# metadata.version's feature levels by name (MetadataVersion, 3.3-IV3 the oldest KRaft supports).
METADATA_LEVELS: dict[str, int] = {
    "3.3-IV3": 7,
    "3.4-IV0": 8,
    "3.5-IV0": 9,
    "3.5-IV1": 10,
    "3.5-IV2": 11,
    "3.6-IV0": 12,
    "3.6-IV1": 13,
    "3.6-IV2": 14,
    "3.7-IV0": 15,
    "3.7-IV1": 16,
    "3.7-IV2": 17,
    "3.7-IV3": 18,
    "3.7-IV4": 19,
    "3.8-IV0": 20,
    "3.9-IV0": 21,
    "4.0-IV0": 22,
    "4.0-IV1": 23,
    "4.0-IV2": 24,
    "4.0-IV3": 25,
    "4.1-IV0": 26,
    "4.1-IV1": 27,
    "4.2-IV0": 28,
    "4.2-IV1": 29,
    "4.3-IV0": 30,
    "4.4-IV0": 31,
    "4.4-IV1": 32,
    "4.4-IV2": 33,
}
# The metadata.version a release line finalizes (`--release-version <line>`), which is also the
# newest one a release of that line can run: its last production MetadataVersion.
RELEASE_METADATA: dict[str, str] = {
    "3.3": "3.3-IV3",
    "3.4": "3.4-IV0",
    "3.5": "3.5-IV2",
    "3.6": "3.6-IV2",
    "3.7": "3.7-IV4",
    "3.8": "3.8-IV0",
    "3.9": "3.9-IV0",
    "4.0": "4.0-IV3",
    "4.1": "4.1-IV1",
    "4.2": "4.2-IV1",
    "4.3": "4.3-IV0",
    "4.4": "4.4-IV2",
}
# The first release whose kafka-storage format a release older than it cannot read (KIP-1170).
NOT_FORWARD_COMPATIBLE_FROM = (4, 4, 0)

_RELEASE = re.compile(r"^\s*(\d+)\.(\d+)(?:\.(\d+))?\s*$")


def release(version: str) -> tuple[int, int, int] | None:
    """(major, minor, patch) of a Kafka release like "4.4.0" ("4.4" is 4.4.0); None if it is not one."""
    m = _RELEASE.match(str(version))
    return None if m is None else (int(m.group(1)), int(m.group(2)), int(m.group(3) or 0))


def release_line(version: str) -> str:
    """ "4.4.0" -> "4.4": what `--release-version` takes (patch releases share their line's features)."""
    parsed = release(version)
    if parsed is None:
        raise ValueError(f"{version!r} is not a Kafka release like 4.4.0")
    return f"{parsed[0]}.{parsed[1]}"


def metadata_level(name: str) -> int | None:
    """The feature level of a metadata.version name ("4.3-IV0" -> 30); None when the kit does not know it."""
    return METADATA_LEVELS.get(str(name).strip())


def newest_metadata(version: str) -> str | None:
    """The newest metadata.version a release runs (its line's production one); None for a line the
    kit does not know."""
    parsed = release(version)
    return None if parsed is None else RELEASE_METADATA.get(f"{parsed[0]}.{parsed[1]}")


@dataclass(frozen=True)
class Feature:
    name: str
    supported_max: str
    finalized: str  # "-" when never finalized


def parse_describe(text: str) -> dict[str, Feature]:
    """kafka-features `describe`: "Feature: <name>  SupportedMinVersion: ..  SupportedMaxVersion: <v>
    FinalizedVersionLevel: <v>  Epoch: ..", one line per feature; metadata.version's versions are
    names (4.3-IV0), the others' numbers."""
    features = {}
    for line in text.splitlines():
        fields = line.split()
        if len(fields) < 2 or fields[0] != "Feature:":
            continue

        def after(key: str, fields: list[str] = fields) -> str:
            return fields[fields.index(key) + 1] if key in fields[:-1] else "-"

        features[fields[1]] = Feature(fields[1], after("SupportedMaxVersion:"), after("FinalizedVersionLevel:"))
    return features


def finalized_metadata(describe_text: str) -> str:
    """The finalized metadata.version of a `describe` output; raises ValueError when it has none."""
    feature = parse_describe(describe_text).get("metadata.version")
    if feature is None or feature.finalized == "-":
        raise ValueError("kafka-features describe shows no finalized metadata.version")
    return feature.finalized


def features_step_refusal(running: Mapping[str, str], target: str) -> str:
    """Why `kafka-features upgrade --release-version <target's line>` must not run yet ('' when it may):
    `running` is the release each controller and broker of the data centre runs (host -> "4.3.1";
    "" or "?" when it could not be read). Every one must run the target's line or a newer one."""
    line = release_line(target)
    wanted = release(target)
    assert wanted is not None
    behind = sorted(
        f"{host} ({version or '?'})"
        for host, version in running.items()
        if (ran := release(version)) is None or ran[:2] < wanted[:2]
    )
    if not running:
        return f"no controller or broker was read: the features step to {line} needs every node on it first"
    if behind:
        return (
            f"refusing the features step to {line}: {len(behind)} node(s) do not run Kafka {line} yet: "
            f"{', '.join(behind)}. It moves metadata.version to {RELEASE_METADATA.get(line, line)}, which no "
            "older release can run and which cannot be undone: roll every controller and broker first "
            "(ops/upgrade.yml without -e upgrade_step=features)"
        )
    return ""


def release_change_refusal(
    finalized: str, target: str, formatted_by: Mapping[str, str] | None = None, running: Mapping[str, str] | None = None
) -> str:
    """Why the data centre's nodes must not be moved to Kafka `target` ('' when they may), read
    before any node restarts: `finalized` is its metadata.version (4.4-IV2), `formatted_by` the
    release that formatted each node's storage (host -> "4.4.0", from kafka_storage_format's record),
    `running` what each node runs now (only named in the message)."""
    parsed = release(target)
    if parsed is None:
        return f"kafka_version={target!r} is not a Kafka release like 4.4.0"
    problems = []
    newest = newest_metadata(target)
    have, can = metadata_level(finalized), metadata_level(newest or "")
    if newest is None:
        problems.append(f"the kit does not know which metadata.version Kafka {target} runs")
    elif have is None or can is None or can < have:
        problems.append(
            f"its metadata.version is {finalized}, finalized by the features step, and Kafka {target} runs "
            f"{newest} at most: it would not start (a metadata.version that changed metadata cannot be "
            "downgraded)"
        )
    newer = sorted(
        f"{host} ({by})"
        for host, by in (formatted_by or {}).items()
        if (made := release(by)) is not None and made >= NOT_FORWARD_COMPATIBLE_FROM and made > parsed
    )
    if newer:
        problems.append(
            f"{', '.join(newer)}: storage formatted by a newer Kafka, whose format Kafka {target} cannot read "
            "(from 4.4 on, a node runs the release that formatted it or a newer one)"
        )
    if not problems:
        return ""
    now = sorted({v for v in (running or {}).values() if v})
    ran = f" (it runs {', '.join(now)})" if now else ""
    return f"refusing to move the data centre to Kafka {target}{ran}: " + "; ".join(problems)


@dataclass(frozen=True)
class NodeRead:
    running: str  # the release the node's process runs; "" when it is not running or unreadable
    formatted_by: dict[str, str]  # directory -> the release that formatted it (kafka_storage_format's record)


_CORE_JAR = re.compile(r"/kafka_\d+\.\d+-(\d+\.\d+\.\d+)\.jar$")


def parse_node_read(text: str) -> NodeRead:
    """What ops/upgrade.yml reads on a node, one line each: "running: <the kafka_2.13-<release>.jar the
    process holds open, or nothing>" and "record: <the JSON record, {} when none>"."""
    running, record = "", {}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        value = value.strip()
        if key == "running" and (m := _CORE_JAR.search(value)):
            running = m.group(1)
        elif key == "record" and value:
            try:
                data = json.loads(value)
            except ValueError:
                data = None
            if not isinstance(data, dict):
                raise ValueError(f"the storage record is not a JSON object: {value[:80]}")
            record = {str(k): str(v) for k, v in data.items()}
    return NodeRead(running, record)


def read_nodes(reads: Mapping[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """(host -> running release, "host:directory" -> release that formatted it) of every node read."""
    running, formatted = {}, {}
    for host, text in reads.items():
        node = parse_node_read(text)
        running[host] = node.running
        formatted.update({f"{host}:{d}": v for d, v in node.formatted_by.items()})
    return running, formatted
