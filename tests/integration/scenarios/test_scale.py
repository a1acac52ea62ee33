"""Scale-out: a new dc1 broker joins (lab-up with the spare host, then ops/scale-out.yml), partitions
move onto it under a throttle while a producer runs, and every acknowledged message is read back.
Afterwards ops/scale-in.yml drains and stops it and the lab goes back to its usual hosts."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from kafkakit.cluster.reassignment import read_cluster, replica_counts, throttles_left
from tests.integration.conftest import fresh_admin
from tests.integration.faults import assert_clean, run_scenario
from tests.integration.lab import Lab
from tests.integration.playbooks import lab_up, restart_order, run_playbook, run_site

pytestmark = pytest.mark.faults

NEW_HOST = "dc1-kafka4"


def brokers_and_controller(lab: Lab, dc: str) -> list[str]:
    """The hosts the test runs scale-out.yml on: the brokers of `dc`, the new one among them (the
    others are in the play so that the test sees they do not restart: super.users names the DC's
    shared principal, not each broker), and localhost (site.yml's preflight play).
    Left out on purpose: MirrorMaker 2, Prometheus and the Spark hosts also list dc1's brokers,
    but only as bootstrap addresses and scrape targets. Re-rendering those files is the plain
    site.yml path that test_idempotence and the rotation prove; left out of both runs here, they
    never change, so nothing is left behind. An operator runs scale-out.yml unlimited."""
    return [b.name for b in lab.brokers(dc)] + ["localhost"]


def first_broker_and_controller(lab: Lab, dc: str) -> list[str]:
    """Where the clean-up's site.yml runs once the new broker has gone: no other broker's
    configuration names it, so only the first broker (it writes the DC's client configs on the
    controller, which the tests read, their bootstrap lists included) and localhost."""
    return [lab.brokers(dc)[0].name, "localhost"]


@pytest.fixture
def spare_broker(client_conf: dict[str, str]) -> Iterator[int]:
    """The spare host started and in the inventory; drained, stopped and removed afterwards."""
    lab_up(NEW_HOST)
    new_id = Lab().hosts[NEW_HOST].broker_id
    assert new_id is not None
    try:
        yield new_id
    finally:
        _, racks = read_cluster(fresh_admin(client_conf))
        if new_id in racks:
            run_playbook("ops/scale-in.yml", "-e", json.dumps({"scale_in_hosts": [NEW_HOST]}))
        lab_up()
        # The client configs forget it: site.yml again (first_broker_and_controller).
        run_site("--limit", ",".join(first_broker_and_controller(Lab(), "dc1")))


def test_scale_out_under_load_loses_nothing(client_conf: dict[str, str], spare_broker: int) -> None:
    before, _ = read_cluster(fresh_admin(client_conf))
    outputs: list[str] = []
    load_replicas: list[list[int]] = []

    def scale_out(topic: str) -> None:
        # Limited to dc1's brokers, the new one among them (brokers_and_controller).
        hosts = ",".join(brokers_and_controller(Lab(), "dc1"))
        outputs.append(run_playbook("ops/scale-out.yml", "-e", "scale_out_dc=dc1", "--limit", hosts))
        assignment, _ = read_cluster(fresh_admin(client_conf))
        load_replicas.extend(r for (t, _), r in assignment.items() if t == topic)

    outcome = run_scenario("scale-out: a fourth dc1 broker, throttled moves", client_conf, scale_out)
    assert_clean(outcome)

    # The plan ran under the throttle the role sets, and the tool cleared it when done.
    assert "throttle limit was set to 10485760 B/s" in outputs[0], outputs[0][-3000:]
    # The new broker joined without restarting any other: none is named in another's configuration.
    assert restart_order(outputs[0]) == [], restart_order(outputs[0])
    admin = fresh_admin(client_conf)
    after, racks = read_cluster(admin)
    assert throttles_left(admin, sorted({t for t, _ in after}), racks) == []

    # The new broker holds its rack's fair share, and no partition lost rack spread.
    counts = replica_counts(after, racks)
    assert counts[spare_broker] > 0 and abs(counts[spare_broker] - counts[1]) <= 1, counts
    for tp, replicas in after.items():
        if tp in before:
            assert len({racks[b] for b in replicas}) >= len({racks[b] for b in before[tp]}), tp
    # Partitions of the topic under load moved too: the accounting above covers moved partitions.
    assert any(spare_broker in r for r in load_replicas), load_replicas
