"""How long a data centre keeps a broker that has gone silent (issue #47, a leader's host lost):
the session settings checked against each other before any host is touched. Neither Kafka nor
ZooKeeper refuses a mismatch: ZooKeeper grants a broker's session within its own bounds whatever
the broker asks for (ZooKeeperServer.processConnectRequest clamps it), and a KRaft node whose
heartbeat interval is more than half its session only logs an error (KafkaConfig.validateValues,
4.x) while the controller fences a broker that is one heartbeat late."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

# ZooKeeper's bounds when zoo.cfg sets none (QuorumPeerConfig: -1 -> 2 and 20 ticks).
UNSET = -1
MIN_TICKS = 2
MAX_TICKS = 20


def zookeeper_bounds(tick_ms: int, min_ms: int = UNSET, max_ms: int = UNSET) -> tuple[int, int]:
    """The session timeouts an ensemble grants, in ms: [minSessionTimeout, maxSessionTimeout]."""
    low = min_ms if min_ms != UNSET else MIN_TICKS * tick_ms
    high = max_ms if max_ms != UNSET else MAX_TICKS * tick_ms
    return low, high


def granted(requested_ms: int, bounds: tuple[int, int]) -> int:
    """The session ZooKeeper gives a client that asks for `requested_ms`."""
    low, high = bounds
    return min(max(requested_ms, low), high)


@dataclass(frozen=True)
class Ensemble:
    """A ZooKeeper data centre's settings, as the zookeeper role writes zoo.cfg."""

    tick_ms: int
    min_ms: int = UNSET
    max_ms: int = UNSET

    @property
    def bounds(self) -> tuple[int, int]:
        return zookeeper_bounds(self.tick_ms, self.min_ms, self.max_ms)

    def why(self) -> str:
        """Where the bounds come from, in the kit's variables."""
        why = [
            f"zookeeper_min_session_timeout={self.min_ms}" if self.min_ms != UNSET else f"2 × {self.tick_ms}",
            f"zookeeper_max_session_timeout={self.max_ms}" if self.max_ms != UNSET else f"20 × {self.tick_ms}",
        ]
        if self.min_ms == UNSET or self.max_ms == UNSET:
            why.append(f"zookeeper_tick_time={self.tick_ms}")
        return ", ".join(why)


def zookeeper_session_errors(dc: str, ensemble: Ensemble, sessions: Mapping[int, list[str]]) -> list[str]:
    """`sessions`: kafka_zookeeper_session_timeout_ms -> the brokers asking for it."""
    low, high = ensemble.bounds
    if low > high:
        return [
            f"{dc}: ZooKeeper's minimum session timeout {low} ms is above its maximum {high} ms "
            f"({ensemble.why()}): ZooKeeper refuses to start"
        ]
    errors = []
    for requested, hosts in sorted(sessions.items()):
        if not low <= requested <= high:
            errors.append(
                f"{dc}: kafka_zookeeper_session_timeout_ms={requested} on {hosts} is outside the sessions its "
                f"ZooKeeper ensemble grants, {low}..{high} ms ({ensemble.why()}): the brokers would get "
                f"{granted(requested, ensemble.bounds)} ms"
            )
    return errors


def lease_errors(dc: str, leases: Mapping[tuple[int, int], list[str]]) -> list[str]:
    """`leases`: (kafka_broker_session_timeout_ms, kafka_broker_heartbeat_interval_ms) -> the
    brokers and controllers given that pair."""
    errors = []
    for (session, heartbeat), hosts in sorted(leases.items()):
        if heartbeat <= 0 or session <= 0:
            errors.append(
                f"{dc}: kafka_broker_session_timeout_ms={session} and kafka_broker_heartbeat_interval_ms={heartbeat} "
                f"on {hosts} must both be above 0"
            )
        elif 2 * heartbeat > session:
            errors.append(
                f"{dc}: kafka_broker_heartbeat_interval_ms={heartbeat} on {hosts} is more than half of "
                f"kafka_broker_session_timeout_ms={session}: a broker one heartbeat late would be fenced (Kafka only "
                "logs an error); keep the interval at most half the session"
            )
    return errors
