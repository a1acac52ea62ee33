"""A KRaft controller quorum's health from Kafka's own tool, `kafka-metadata-quorum describe`:
its `--status` and `--replication` outputs parsed, and the reasons (one message each) not to call
the quorum healthy: no leader, a missing voter, a voter behind. Shared by the kafka_controller
role (through the kafkakit_quorum_health filter) and the tests."""

from __future__ import annotations

import json
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


def quorum_health(status_text: str, replication_text: str, expected_voters: list[int], max_lag: int) -> QuorumHealth:
    """Healthy: a leader, every expected voter in the voter set, and each voter at most max_lag
    records behind the leader."""
    status = parse_status(status_text)
    replicas = parse_replication(replication_text)
    health = QuorumHealth()
    try:
        health.leader = int(str(status.get("LeaderId", "-1")))
    except ValueError:
        health.leader = -1
    voters = status.get("CurrentVoters") or []
    observers = status.get("CurrentObservers") or []
    health.voters = sorted(int(v["id"]) for v in voters if isinstance(v, dict) and "id" in v)  # type: ignore[union-attr]
    health.observers = sorted(int(o["id"]) for o in observers if isinstance(o, dict) and "id" in o)  # type: ignore[union-attr]
    if health.leader < 0:
        health.problems.append("no quorum leader")
    missing = sorted(set(expected_voters) - set(health.voters))
    if missing:
        health.problems.append(f"controllers {missing} are not voters (voters: {health.voters})")
    by_id = {r.node_id: r for r in replicas if r.status in ("Leader", "Follower")}
    for voter in health.voters:
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
