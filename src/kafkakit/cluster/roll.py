"""The roll's decisions for every service (roles/roll): whether a data centre is healthy enough to
restart one of its hosts, and the order the hosts restart in. Each service's plan reads its own
tool's output (ZooKeeper's `srvr`, the brokers' cluster health, `kafka-metadata-quorum describe
--replication`, the Connect cluster's REST answer) and returns problems (empty: roll), the order and
the hosts that go last because they lead. The roles' roll-plan.yml only read and call."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from kafkakit.cluster.kraft import controller_roll_order, quorum_health

ZOOKEEPER_SERVING = ("leader", "follower", "standalone")
_MODE = re.compile(r"^Mode: (\w+)", re.MULTILINE)


@dataclass
class RollPlan:
    problems: list[str] = field(default_factory=list)
    order: list[str] = field(default_factory=list)
    # The hosts put last because they lead (the ZooKeeper leader, the ZooKeeper-mode controller).
    leaders: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"problems": self.problems, "order": self.order, "leaders": self.leaders}


def _leaders_last(hosts: Sequence[str], leaders: Sequence[str]) -> list[str]:
    return [h for h in hosts if h not in leaders] + [h for h in hosts if h in leaders]


def zookeeper_mode(srvr: str) -> str:
    """The `Mode:` line of a `srvr` answer; '' when the server did not answer or does not serve
    ("This ZooKeeper instance is not currently serving requests")."""
    found = _MODE.search(srvr or "")
    return found.group(1) if found else ""


def zookeeper_plan(dc: str, hosts: Sequence[str], srvr_by_server: Mapping[str, str]) -> RollPlan:
    """The ensemble of `dc` (every server's `srvr` answer) may lose one vote only when every server
    serves and exactly one leads; the leader restarts last, so the ensemble elects once per roll."""
    modes = {server: zookeeper_mode(text) for server, text in srvr_by_server.items()}
    down = [s for s, mode in modes.items() if mode not in ZOOKEEPER_SERVING]
    leaders = [s for s, mode in modes.items() if mode in ("leader", "standalone")]
    plan = RollPlan()
    if down:
        plan.problems.append(f"{dc}: ZooKeeper servers not serving {down}")
    if len(leaders) != 1:
        plan.problems.append(f"{dc}: {len(leaders)} ZooKeeper leaders")
    plan.order = _leaders_last(hosts, leaders)
    plan.leaders = [h for h in hosts if h in leaders]
    return plan


def ran_since_boot(unit_status: Mapping[str, object]) -> bool:
    """Whether a systemd unit has left the inactive state since its host booted (its
    InactiveExitTimestampMonotonic is 0 until then): a broker new to the inventory has not."""
    return str(unit_status.get("InactiveExitTimestampMonotonic", "0")) not in ("0", "")


def broker_plan(
    dc: str,
    hosts: Sequence[str],
    metadata_mode: str,
    health: Mapping[str, object],
    expected: Sequence[int],
    broker_ids: Mapping[str, int],
) -> RollPlan:
    """The brokers of `dc` roll when every broker `expected` (those that have run since their host
    booted) is registered, no partition is under-replicated or offline and, in ZooKeeper mode, a
    controller is active; that controller restarts last. In KRaft the controller is no broker (its
    quorum rolls first), so the brokers keep the given order."""
    registered = {int(b) for b in health.get("brokers") or []}  # type: ignore[union-attr]
    controller = int(health.get("controller", -1))  # type: ignore[arg-type]
    error = str(health.get("error") or "")
    under = list(health.get("under_replicated") or [])  # type: ignore[call-overload]
    offline = list(health.get("offline") or [])  # type: ignore[call-overload]
    zookeeper = metadata_mode != "kraft"
    plan = RollPlan()
    if error:
        plan.problems.append(f"{dc}: {error}")
    missing = [b for b in expected if int(b) not in registered]
    if missing:
        plan.problems.append(f"{dc}: missing brokers {missing}")
    if under:
        plan.problems.append(f"{dc}: {len(under)} under-replicated partitions")
    if offline:
        plan.problems.append(f"{dc}: {len(offline)} offline partitions")
    if zookeeper and controller < 0:
        plan.problems.append(f"{dc}: no active controller")
    plan.leaders = [h for h in hosts if zookeeper and controller >= 0 and broker_ids.get(h) == controller]
    plan.order = _leaders_last(hosts, plan.leaders)
    return plan


def controller_plan(
    dc: str,
    hosts: Sequence[str],
    rc: int,
    replication: str,
    stderr: str,
    expected_voters: Sequence[int],
    max_lag: int,
    joining: Sequence[int],
    controller_ids: Mapping[str, int],
) -> RollPlan:
    """The quorum of `dc` (`kafka-metadata-quorum describe --replication`) may lose one vote when it
    has a leader and every expected voter is caught up; the leader (the active controller) restarts
    last, so the quorum elects once per roll. A tool that failed is the only problem reported."""
    plan = RollPlan()
    if rc != 0:
        reason = " ".join((stderr or "").split())
        plan.problems.append(f"{dc}: the quorum does not answer: {reason[:200]}")
        plan.order = list(hosts)
        return plan
    health = quorum_health("", replication, list(expected_voters), max_lag, list(joining))
    plan.problems = [f"{dc}: {p}" for p in health.problems]
    plan.order = controller_roll_order(list(hosts), dict(controller_ids), health.leader)
    plan.leaders = [h for h in hosts if controller_ids.get(h) == health.leader]
    return plan


def connect_plan(dc: str, hosts: Sequence[str], problems: Sequence[str]) -> RollPlan:
    """The Connect cluster of `dc` rolls when its REST answer names no problem (every worker in the
    group, no connector or task FAILED); workers are peers, so the given order stands."""
    return RollPlan(problems=[f"{dc}: {p}" for p in problems], order=list(hosts))


def spark_plan(hosts: Sequence[str], masters: Sequence[str]) -> RollPlan:
    """Spark: the master first, so the workers re-register with the restarted master once. No
    health gate: a daemon that is down is what a restart mends."""
    return RollPlan(order=[h for h in hosts if h in masters] + [h for h in hosts if h not in masters])
