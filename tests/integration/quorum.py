"""A KRaft data centre's controller quorum as its own tool reports it (kafka-metadata-quorum, run
on a controller with the controller certificate): for the quorum and upgrade tests. KRAFT_DC is
the lab's KRaft data centre those tests load (the fixtures kraft_conf and quorum_after)."""

from __future__ import annotations

from kafkakit.bench.nodes import CONTROLLER_CLIENT, QUORUM_TOOL, TOOL_RUNNER
from kafkakit.cluster.kraft import parse_status, quorum_health
from tests.integration.lab import Host, Lab

KRAFT_DC = "dc2"

# The same command the bench runs (kafkakit.bench.nodes.describe_quorum), here with every
# controller as bootstrap, through the inventory's connection.
DESCRIBE = (
    f"{TOOL_RUNNER} {QUORUM_TOOL} --bootstrap-controller {{servers}} "
    f"--command-config {CONTROLLER_CLIENT} describe --{{what}}"
)


def describe(lab: Lab, dc: str, what: str, through: Host | None = None) -> str:
    """describe --status/--replication, asked of `through` or of the first controller that answers."""
    controllers = lab.controllers(dc)
    servers = ",".join(f"{c.ip}:9094" for c in controllers)
    for host in [through] if through else controllers:
        try:
            out = lab.testinfra(host).run(DESCRIBE.format(servers=servers, what=what))
        except Exception:  # noqa: BLE001 - a stopped host is unreachable: ask the next one
            continue
        if out.rc == 0:
            return out.stdout
    return ""


def leader(lab: Lab, dc: str) -> int:
    """The quorum leader's (the active controller's) node id; -1 when none is known."""
    try:
        return int(str(parse_status(describe(lab, dc, "status")).get("LeaderId", "-1")))
    except ValueError:
        return -1


def quorum_whole(lab: Lab, dc: str) -> bool:
    ids = [c.controller_id for c in lab.controllers(dc)]
    return quorum_health(describe(lab, dc, "status"), describe(lab, dc, "replication"), ids, 20).problems == []


def controller_by_id(lab: Lab, dc: str, node_id: int) -> Host:
    return next(c for c in lab.controllers(dc) if c.controller_id == node_id)


def replicas(lab: Lab, dc: str) -> int:
    """A load's replication factor: 3, or every broker of a smaller DC (the lab's dc2 has 2)."""
    return min(3, len(lab.brokers(dc)))
