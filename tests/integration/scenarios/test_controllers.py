"""ops/add-controller.yml and ops/remove-controller.yml on the KRaft data centre (dynamic quorum,
KIP-853) under a transactional acks=all load that must lose nothing: two spare controllers join
dc2's quorum (3 -> 5 voters), then leave it one at a time, each taken out of the inventory before
the next (5 -> 3), and the lab goes back to its usual hosts; and a controller whose disk is lost
replaced through the quorum (ops/replace-controller.yml). Scenario `make test-controllers`."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kafkakit.cluster.admin import wait_healthy
from kafkakit.cluster.kraft import voter_directory, voter_keys
from tests.integration import quorum
from tests.integration.accounting import account
from tests.integration.conftest import fresh_admin, wait_until
from tests.integration.faults import assert_clean, run_scenario
from tests.integration.lab import Lab
from tests.integration.playbooks import lab_up, playbook_process, restart_order, run_playbook, run_site

DC = KRAFT_DC = "dc2"
SPARES = ("dc2-controller4", "dc2-controller5")
BOOTSTRAP = "controller.quorum.bootstrap.servers"


def voters() -> list[int]:
    return sorted(node for node, _ in voter_keys(quorum.describe(Lab(), DC, "status")))


def dc_hosts(lab: Lab) -> list[str]:
    """Where the test's site.yml runs: dc2's controllers and brokers (their bootstrap lists name
    the controllers) and localhost. MirrorMaker, Spark and Prometheus are left out, as in the
    scale-out test: the inventory is back to its usual hosts before the last run."""
    return [h.name for h in lab.controllers(DC) + lab.brokers(DC)] + ["localhost"]


def bootstrap(lab: Lab, host: str, path: str) -> list[str]:
    """The controllers a node's configuration at `path` bootstraps from, sorted."""
    lines = lab.testinfra(host).file(path).content_string.splitlines()
    return sorted(next(x for x in lines if x.startswith(BOOTSTRAP)).split("=", 1)[1].split(","))


def remove(host: str) -> None:
    run_playbook(
        "ops/remove-controller.yml", "-e", f"controller_remove={host}", "-e", f"controller_remove_confirm={host}"
    )


def remove_one_at_a_time(names: list[str]) -> dict[str, bool]:
    """remove-controller.yml for each of `names`, last first, each host taken out of the inventory
    before the next removal (the others' quorum gate wants every inventory controller a voter);
    whether each controller still ran right after its removal."""
    remaining, running = list(names), {}
    while remaining:
        name = remaining.pop()
        remove(name)
        running[name] = Lab().testinfra(name).service("kafka-controller").is_running
        lab_up(*remaining)
    return running


@pytest.fixture
def spares(lab: Lab) -> Iterator[list[int]]:
    """The spare controllers running and in the inventory; out of the quorum, removed and the
    others' bootstrap lists restored afterwards, whatever the test did."""
    original = sorted(c.controller_id for c in lab.controllers(DC))
    lab_up(*SPARES)
    ids = {name: Lab().hosts[name].controller_id for name in SPARES}
    try:
        yield list(ids.values())
    finally:
        left = [name for name in SPARES if ids[name] in voters()]
        if left:
            lab_up(*left)
            remove_one_at_a_time(left)
        lab_up()
        run_site("--limit", ",".join(dc_hosts(Lab())))
        wait_until("quorum whole", lambda: quorum.quorum_whole(Lab(), DC), 180)
        assert voters() == original


def test_controllers_added_then_removed_under_load(lab: Lab, spares: list[int]) -> None:
    conf = lab.client_conf(DC)
    before = voters()
    seen: dict[str, object] = {}

    def add_then_remove(_topic: str) -> None:
        out = run_playbook(
            "ops/add-controller.yml", "-e", f"controller_add={','.join(SPARES)}", "--limit", ",".join(dc_hosts(Lab()))
        )
        seen["added"] = voters()
        seen["whole"] = quorum.quorum_whole(Lab(), DC)
        seen["rolled"] = restart_order(out, "kafka-controller")
        five = Lab()
        seen["five"] = sorted(f"{c.ip}:9094" for c in five.controllers(DC))
        seen["broker_bootstrap"] = bootstrap(five, lab.brokers(DC)[0].name, "/etc/kafka/server.properties")
        # Refused without the confirmation naming the host: nothing stops, no voter goes.
        refused = playbook_process("ops/remove-controller.yml", "-e", f"controller_remove={SPARES[-1]}")
        seen["refused"] = refused.returncode != 0 and f"-e controller_remove_confirm={SPARES[-1]}" in refused.stdout
        seen["after_refusal"] = voters()
        seen["running_after_removal"] = remove_one_at_a_time(list(SPARES))
        seen["removed"] = voters()

    outcome = run_scenario(
        "two KRaft controllers added, then removed", conf, add_then_remove, min(3, len(lab.brokers(DC)))
    )
    account(f"voters {before} -> {seen.get('added')} -> {seen.get('removed')}")
    assert seen["added"] == sorted(before + spares), seen
    assert seen["whole"], "the quorum of five was not whole and caught up after add-controller.yml"
    # The existing controllers took the new bootstrap list in one roll, each once.
    assert sorted(seen["rolled"]) == sorted(c.name for c in lab.controllers(DC)), seen["rolled"]
    # The brokers bootstrap from all five too (a roll of the brokers: their configuration changed).
    assert len(seen["five"]) == 5 and seen["broker_bootstrap"] == seen["five"], seen
    assert seen["refused"] and seen["after_refusal"] == seen["added"], seen
    assert seen["removed"] == before, seen
    assert seen["running_after_removal"] == dict.fromkeys(SPARES, False), seen
    assert_clean(outcome)
    ids = [b.broker_id for b in lab.brokers(DC)]
    health = wait_healthy(fresh_admin(conf), ids, timeout=300)
    assert health.healthy(ids), health.as_dict()


def test_the_bootstrap_lists_are_back_to_the_usual_controllers(lab: Lab) -> None:
    """After the spares' fixture: the usual controllers and the brokers name only the usual controllers."""
    usual = sorted(f"{c.ip}:9094" for c in lab.controllers(DC))
    for host in lab.controllers(DC):
        assert bootstrap(lab, host.name, "/etc/kafka/controller.properties") == usual, host.name
    for host in lab.brokers(DC):
        assert bootstrap(lab, host.name, "/etc/kafka/server.properties") == usual, host.name


def test_a_controller_with_a_lost_disk_is_replaced_through_the_quorum(lab, kraft_conf, quorum_after):
    """ops/replace-controller.yml under load: a follower's metadata directory is gone; refused
    without the confirmation (nothing changes), then with it the quorum drops the old voter and
    takes the new directory, and the load loses nothing."""
    victim = next(c for c in lab.controllers(KRAFT_DC) if c.controller_id != quorum.leader(lab, KRAFT_DC))
    before = voter_directory(quorum.describe(lab, KRAFT_DC, "status"), victim.controller_id)
    assert before, f"{victim.name} is not a voter before the test"
    swapped: dict[str, str] = {}

    def fault(_topic: str) -> None:
        host = lab.testinfra(victim)
        # The disk is lost: the process dies and its metadata directory is gone.
        host.run_test("systemctl kill --signal=SIGKILL kafka-controller && systemctl stop kafka-controller")
        host.run_test("rm -rf /var/lib/kafka-controller/metadata")
        refused = playbook_process("ops/replace-controller.yml", "-e", f"controller_replace={victim.name}")
        assert refused.returncode != 0 and f"-e controller_replace_confirm={victim.name}" in refused.stdout
        assert voter_directory(quorum.describe(lab, KRAFT_DC, "status"), victim.controller_id) == before, (
            "the refusal changed the quorum"
        )
        assert not host.file("/var/lib/kafka-controller/metadata").exists, "the refusal formatted the directory"
        run_playbook(
            "ops/replace-controller.yml",
            "-e",
            f"controller_replace={victim.name}",
            "-e",
            f"controller_replace_confirm={victim.name}",
        )
        swapped["after"] = voter_directory(quorum.describe(lab, KRAFT_DC, "status"), victim.controller_id)

    outcome = run_scenario(
        "KRaft controller with a lost disk replaced", kraft_conf, fault, quorum.replicas(lab, KRAFT_DC)
    )
    meta = lab.testinfra(victim).file("/var/lib/kafka-controller/metadata/meta.properties").content_string
    account(f"{victim.name}: voter directory {before} -> {swapped.get('after')}")
    assert swapped.get("after") not in ("", None, before), swapped
    assert f"directory.id={swapped['after']}" in meta
    assert quorum.quorum_whole(lab, KRAFT_DC)
    assert_clean(outcome)
