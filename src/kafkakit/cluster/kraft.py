"""A KRaft controller quorum's health from Kafka's own tool, `kafka-metadata-quorum describe`:
its `--status` and `--replication` outputs parsed, and the reasons (one message each) not to call
the quorum healthy: no leader, a missing voter, a voter behind. Shared by the kafka_controller
role (through the kafkakit_quorum_health filter) and the tests."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Replica:
    node_id: int
    directory_id: str
    log_end_offset: int
    lag: int
    status: str  # Leader, Follower or Observer


@dataclass
class QuorumHealth:
    leader: int = -1
    voters: list[int] = field(default_factory=list)
    observers: list[int] = field(default_factory=list)
    lagging: list[int] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {
            "leader": self.leader,
            "voters": self.voters,
            "observers": self.observers,
            "lagging": self.lagging,
            "problems": self.problems,
        }


def parse_status(text: str) -> dict[str, object]:
    """`describe --status`: "Key:   value" lines; CurrentVoters/CurrentObservers are JSON lists."""
    out: dict[str, object] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if not sep or not key.strip().isalnum():
            continue
        value = value.strip()
        if key.strip() in ("CurrentVoters", "CurrentObservers"):
            try:
                out[key.strip()] = json.loads(value) if value else []
            except json.JSONDecodeError:
                out[key.strip()] = []
        else:
            out[key.strip()] = value
    return out


def parse_replication(text: str) -> list[Replica]:
    """`describe --replication`: a header row, then one whitespace-separated row per replica."""
    rows: list[Replica] = []
    header: list[str] = []
    for line in text.splitlines():
        cells = line.split()
        if not cells:
            continue
        if cells[0] == "NodeId":
            header = cells
            continue
        if not header or not cells[0].isdigit() or len(cells) < len(header):
            continue
        row = dict(zip(header, cells, strict=False))
        rows.append(
            Replica(
                node_id=int(row["NodeId"]),
                directory_id=row.get("DirectoryId", ""),
                log_end_offset=int(row.get("LogEndOffset", "-1")),
                lag=int(row.get("Lag", "-1")),
                status=cells[-1],
            )
        )
    return rows


def quorum_health(
    status_text: str, replication_text: str, expected_voters: list[int], max_lag: int, ignore: list[int] | None = None
) -> QuorumHealth:
    """Healthy: a leader, every expected voter in the voter set, and each voter at most max_lag
    records behind the leader; `ignore`d voters (one being replaced) may lag. An empty
    status_text reads the leader and the voters from the replication rows."""
    status = parse_status(status_text)
    replicas = parse_replication(replication_text)
    health = QuorumHealth()
    if "LeaderId" in status:
        try:
            health.leader = int(str(status["LeaderId"]))
        except ValueError:
            health.leader = -1
        voters = status.get("CurrentVoters") or []
        observers = status.get("CurrentObservers") or []
        health.voters = sorted(int(v["id"]) for v in voters if isinstance(v, dict) and "id" in v)  # type: ignore[union-attr]
        health.observers = sorted(int(o["id"]) for o in observers if isinstance(o, dict) and "id" in o)  # type: ignore[union-attr]
    else:
        # `--replication` alone (one tool run, one JVM, instead of two): both outputs answer the
        # same DescribeQuorum request; its Leader and Follower rows are the voters.
        health.leader = next((r.node_id for r in replicas if r.status == "Leader"), -1)
        health.voters = sorted(r.node_id for r in replicas if r.status in ("Leader", "Follower"))
        health.observers = sorted(r.node_id for r in replicas if r.status == "Observer")
    if health.leader < 0:
        health.problems.append("no quorum leader")
    missing = sorted(set(expected_voters) - set(health.voters))
    if missing:
        health.problems.append(f"controllers {missing} are not voters (voters: {health.voters})")
    by_id = {r.node_id: r for r in replicas if r.status in ("Leader", "Follower")}
    for voter in health.voters:
        if voter in (ignore or []):
            continue
        replica = by_id.get(voter)
        if replica is None or replica.lag < 0 or replica.lag > max_lag:
            health.lagging.append(voter)
    if health.lagging:
        health.problems.append(f"voters {health.lagging} are more than {max_lag} records behind the leader")
    return health


def initial_voters(controllers: list[tuple[int, str]], port: int, directory_ids: list[str]) -> list[str]:
    """`kafka-storage format --initial-controllers` entries: id@host:port:directory-id."""
    if len(directory_ids) != len(controllers) or not all(directory_ids):
        raise ValueError(f"{len(controllers)} controllers need as many directory ids, got {directory_ids}")
    return [f"{node}@{host}:{port}:{d}" for (node, host), d in zip(controllers, directory_ids, strict=True)]


def controller_roll_order(hosts: list[str], controller_ids: dict[str, int], leader: int) -> list[str]:
    """The order a roll restarts a DC's controllers in: the followers in the given order, the
    quorum leader (the active controller) last, so the quorum elects once per roll."""
    followers = [h for h in hosts if controller_ids.get(h) != leader]
    return followers + [h for h in hosts if controller_ids.get(h) == leader]


@dataclass
class Membership:
    """How a DC's controllers stand in the voter set (KIP-853 names a voter by node id and the
    directory id of its metadata log): `join` are (id, directory) not yet voters; `stale` maps an id
    to the directory of a voter it no longer has (a lost or replaced disk); `extra` are voter ids
    no inventory controller has."""

    join: list[int] = field(default_factory=list)
    stale: dict[int, str] = field(default_factory=dict)
    extra: list[int] = field(default_factory=list)

    def as_dict(self) -> dict:
        # String keys: the dict goes through Ansible facts, where keys become text anyway.
        return {"join": self.join, "stale": {str(k): v for k, v in self.stale.items()}, "extra": self.extra}


def voter_keys(status_text: str) -> list[tuple[int, str]]:
    """(id, directory id) of each voter of `describe --status`."""
    voters = parse_status(status_text).get("CurrentVoters") or []
    return [
        (int(v["id"]), str(v.get("directoryId") or ""))
        for v in voters  # type: ignore[union-attr]
        if isinstance(v, dict) and "id" in v
    ]


def voter_directory(status_text: str, node_id: int) -> str:
    """The directory id the voter set holds for node_id ('' when it is not a voter)."""
    return next((d for v, d in voter_keys(status_text) if v == node_id), "")


def membership(status_text: str, controllers: dict[int, str]) -> Membership:
    """Compare the voter set with the controllers' own (id -> directory id, from meta.properties)."""
    voters = voter_keys(status_text)
    found = Membership()
    for node_id, directory in sorted(controllers.items()):
        if (node_id, directory) in voters:
            continue
        found.join.append(node_id)
        for voter_id, voter_dir in voters:
            if voter_id == node_id:
                found.stale[node_id] = voter_dir
    found.extra = sorted({v for v, _ in voters} - set(controllers))
    return found


def observer_lag(replication_text: str, node_id: int, directory_id: str) -> int:
    """Records the observer (node id, directory id) is behind the leader; -1 if it is not fetching."""
    for replica in parse_replication(replication_text):
        if replica.node_id == node_id and replica.directory_id == directory_id and replica.status == "Observer":
            return replica.lag
    return -1


def features_behind(describe_text: str, mapping_text: str) -> list[str]:
    """The features whose finalized level differs from a release's, from kafka-features' `describe`
    and `version-mapping --release-version` outputs: what an `upgrade --release-version` would move.
    The tool reports every feature of the release as "upgraded", moved or not.

    describe: "Feature: <name>  SupportedMinVersion: ..  SupportedMaxVersion: ..
    FinalizedVersionLevel: <level>  Epoch: .."; metadata.version's level is its name (4.3-IV0), a
    feature never finalized shows "-" (level 0). version-mapping: "metadata.version=27 (4.3-IV0)",
    "<name>=<level>" for the others."""
    finalized: dict[str, str] = {}
    for line in describe_text.splitlines():
        fields = line.split()
        if len(fields) >= 2 and fields[0] == "Feature:" and "FinalizedVersionLevel:" in fields:
            finalized[fields[1]] = fields[fields.index("FinalizedVersionLevel:") + 1]
    behind = []
    for line in mapping_text.splitlines():
        name, sep, rest = line.strip().partition("=")
        if not sep or not rest:
            continue
        level, _, label = rest.partition(" ")
        held = finalized.get(name, "-")
        if name == "metadata.version":
            wanted = label.strip("()") or level
        else:
            wanted, held = level, "0" if held == "-" else held
        if held != wanted:
            behind.append(name)
    return behind


def lost_quorum(dc: str, state_file: str, formed: bool, formatted: list[bool]) -> str:
    """Why `dc`'s controllers must not be formatted, or "" (`formed`: the state kept on the Ansible
    controller says the first quorum has formed; `formatted`: which controllers hold a metadata
    directory). Formed, yet no controller holds one: every controller lost its data, or the hosts
    are new. Each would be formatted as a joiner and wait for a quorum that is gone."""
    if not (formed and formatted and not any(formatted)):
        return ""
    state_file = os.path.normpath(state_file)
    return (
        f"{dc}: {state_file} says its controller quorum has formed, but none of its {len(formatted)} "
        "controllers holds a metadata directory: each would wait to join a quorum that no longer exists. "
        f"If the data centre was deleted on purpose (make lab-down, new hosts), remove {state_file} to start "
        "a new cluster; otherwise restore a controller's disk first"
    )
