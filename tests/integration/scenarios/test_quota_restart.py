"""A produce quota holds across a restart of the broker that enforces it, in every data centre
(ZooKeeper mode in dc1, KRaft in dc2): the leader of quota-test is restarted (systemctl, a new
process that reads its quotas back from the cluster's metadata), leads the topic again, and still
throttles quota-writer while team-a beside it is not (tests/integration/quotas.py)."""

from __future__ import annotations

import pytest

from kafkakit.cluster.reassignment import elect_preferred_leaders
from tests.integration.accounting import account
from tests.integration.conftest import fresh_admin, leader_of, wait_until
from tests.integration.faults import broker_back
from tests.integration.lab import Lab
from tests.integration.quotas import CONTROL_USER, QUOTA_TOPIC, assert_held_to_its_quota, declared

pytestmark = [pytest.mark.every_dc, pytest.mark.faults]


def replicas_and_isr(client_conf: dict[str, str]) -> tuple[list[int], list[int]]:
    meta = fresh_admin(client_conf).list_topics(topic=QUOTA_TOPIC, timeout=10).topics[QUOTA_TOPIC]
    partition = meta.partitions[0]
    return list(partition.replicas), list(partition.isrs)


def test_a_quota_holds_after_the_broker_enforcing_it_restarts(lab: Lab, dc: str, client_conf, new_topic, healthy_after):
    declared(lab, dc)  # skips a DC whose inventory declares no quota for quota-writer
    # The first replica is the one a preferred election hands the partition to: it leads before
    # the restart and again after it, so the restarted process is the one that enforces the quota.
    preferred = replicas_and_isr(client_conf)[0][0]
    elect_preferred_leaders(fresh_admin(client_conf))
    wait_until(
        f"broker {preferred} leading {QUOTA_TOPIC}", lambda: leader_of(client_conf, QUOTA_TOPIC) == preferred, 60
    )
    broker = lab.broker_by_id(preferred, dc)
    started = lab.unit_started(broker)

    lab.testinfra(broker).run_test("systemctl restart kafka")
    assert lab.unit_started(broker) != started, f"{broker.name}'s kafka unit did not restart"
    back = wait_until(f"{broker.name} back", broker_back(client_conf, preferred), 180)
    wait_until(f"{broker.name} in the ISR of {QUOTA_TOPIC}", lambda: preferred in replicas_and_isr(client_conf)[1], 120)
    elect_preferred_leaders(fresh_admin(client_conf))
    wait_until(
        f"{broker.name} leading {QUOTA_TOPIC} again", lambda: leader_of(client_conf, QUOTA_TOPIC) == preferred, 60
    )
    account(f"{dc}: {broker.name} (leader of {QUOTA_TOPIC}) restarted, registered again {back:.1f} s later")

    control = new_topic(partitions=1, prefix=f"{CONTROL_USER}.quota-control-")
    assert_held_to_its_quota(lab, dc, control, when=f"after {broker.name} restarted")
