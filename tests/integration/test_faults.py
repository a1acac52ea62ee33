"""One acks=all kill per metadata mode, with zero-loss accounting (tests/integration/faults.py):
dc1 (ZooKeeper mode) here, its active controller and partition leader SIGKILLed under load;
dc2's (KRaft) is test_kraft_quorum.py's. The rest of the fault matrix is a scenario
(tests/integration/scenarios/test_faults.py, `make test-faults`)."""

from __future__ import annotations

import pytest

from tests.integration.accounting import account
from tests.integration.conftest import controller_id, wait_until
from tests.integration.faults import active_controller, assert_clean, broker_back, leaders_of, run_scenario

pytestmark = pytest.mark.faults


def test_sigkill_of_the_controller_and_leader_then_restart(lab, client_conf, healthy_after):
    """One SIGKILL, both failovers: the dc1 broker that is the active controller also leads
    partitions of the topic under load (each broker leads a third of them). Another broker takes
    over as controller, each partition it led gets another leader; restarted, it catches up."""
    seen: dict = {}

    def fault(topic: str) -> None:
        seen["old"] = old = active_controller(client_conf, "an active controller")
        seen["led"] = sorted(p for p, leader in leaders_of(client_conf, topic).items() if leader == old)
        host = lab.testinfra(lab.broker_by_id(old))
        host.run_test("systemctl kill --signal=SIGKILL kafka")

        def moved() -> bool:
            seen["new"] = controller_id(client_conf)
            seen["leaders"] = {p: leader for p, leader in leaders_of(client_conf, topic).items() if p in seen["led"]}
            return seen["new"] not in (old, -1) and all(v not in (old, -1) for v in seen["leaders"].values())

        try:
            wait_until("a new controller and new leaders", moved, 60)
        finally:
            host.run_test("systemctl restart kafka")
        wait_until("broker back", broker_back(client_conf, old), 180)

    outcome = run_scenario("controller and leader SIGKILLed, restarted", client_conf, fault)
    account(f"controller {seen['old']} -> {seen.get('new')}; its partitions {seen['led']} -> {seen.get('leaders')}")
    assert seen["led"], f"the controller led no partition of the topic: {seen}"
    assert seen["new"] not in (seen["old"], -1), f"no new controller: {seen}"
    assert all(v not in (seen["old"], -1) for v in seen["leaders"].values()), f"a partition kept no leader: {seen}"
    assert_clean(outcome)
