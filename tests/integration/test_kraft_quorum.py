"""The KRaft data centre's controller quorum under faults and through the dynamic-quorum
operations (KIP-853), each under a transactional acks=all load on dc2 that must end with nothing
failed, lost or stored twice: the active controller SIGKILLed, a controller host stopped and
started, a controller whose disk is lost replaced with ops/replace-controller.yml."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import pytest

from kafkakit.admin import wait_healthy
from kafkakit.kraft import voter_directory
from tests.integration import quorum
from tests.integration.conftest import fresh_admin, wait_until
from tests.integration.faults import assert_clean, run_scenario
from tests.integration.lab import Host, Lab
from tests.integration.playbooks import module_process, module_result, playbook_process, run_playbook

DC = "dc2"


@pytest.fixture(scope="module")
def conf(lab: Lab) -> dict[str, str]:
    if not lab.kraft(DC):
        pytest.fail(f"{DC} is not a KRaft data centre in this lab (no kafka_controller hosts)")
    return lab.client_conf(DC)


def describe(lab: Lab, what: str, through: Host | None = None) -> str:
    return quorum.describe(lab, DC, what, through)


def leader(lab: Lab) -> int:
    return quorum.leader(lab, DC)


def quorum_whole(lab: Lab) -> bool:
    return quorum.quorum_whole(lab, DC)


@pytest.fixture
def quorum_after(lab: Lab, conf: dict[str, str]) -> Iterator[None]:
    """Each test leaves dc2 as it found it: a whole, caught-up quorum and every broker healthy."""
    yield
    wait_until("quorum whole again", lambda: quorum_whole(lab), 180)
    ids = [b.broker_id for b in lab.brokers(DC)]
    health = wait_healthy(fresh_admin(conf), ids, timeout=300)
    assert health.healthy(ids), f"{DC} did not recover: {health.as_dict()}"


def replicas(lab: Lab) -> int:
    """The load's replication factor: 3, or every broker of a smaller DC (the lab's dc2 has 2)."""
    return min(3, len(lab.brokers(DC)))


def by_id(lab: Lab, node_id: int) -> Host:
    return quorum.controller_by_id(lab, DC, node_id)


def test_sigkill_of_the_active_controller(lab, conf, quorum_after):
    elected: dict[str, int] = {}

    def fault(_topic: str) -> None:
        elected["old"] = old = leader(lab)
        assert old > 0, "no quorum leader before the fault"
        host = lab.testinfra(by_id(lab, old))
        host.run_test("systemctl kill --signal=SIGKILL kafka-controller")
        try:
            wait_until("a new quorum leader", lambda: leader(lab) not in (old, -1), 60)
            elected["new"] = leader(lab)
        finally:
            host.run_test("systemctl restart kafka-controller")
        wait_until("quorum whole", lambda: quorum_whole(lab), 180)

    outcome = run_scenario("active KRaft controller SIGKILLed and restarted", conf, fault, replicas(lab))
    print(f"\nquorum leader {elected.get('old')} -> {elected.get('new')}")
    assert elected.get("new") not in (None, -1, elected.get("old"))
    assert_clean(outcome)


def test_a_stopped_and_started_controller_host(lab, conf, quorum_after):
    def fault(_topic: str) -> None:
        victim = next(c for c in lab.controllers(DC) if c.controller_id != leader(lab))
        subprocess.run(["podman", "stop", "-t", "120", victim.name], check=True, capture_output=True)
        try:
            # Two of three voters keep the quorum: it still has a leader while the host is down.
            wait_until("the voter behind", lambda: not quorum_whole(lab), 60)
            assert leader(lab) > 0
        finally:
            subprocess.run(["podman", "start", victim.name], check=True, capture_output=True)
        # systemd boots the host: the storage unlock and the controller come up on their own.
        wait_until("quorum whole", lambda: quorum_whole(lab), 300)

    outcome = run_scenario("KRaft controller host stopped and started", conf, fault, replicas(lab))
    assert_clean(outcome)


def test_a_controller_with_a_lost_disk_is_replaced_through_the_quorum(lab, conf, quorum_after):
    """ops/replace-controller.yml under load: a follower's metadata directory is gone; refused
    without the confirmation (nothing changes), then with it the quorum drops the old voter and
    takes the new directory, and the load loses nothing."""
    victim = next(c for c in lab.controllers(DC) if c.controller_id != leader(lab))
    before = voter_directory(describe(lab, "status"), victim.controller_id)
    assert before, f"{victim.name} is not a voter before the test"
    swapped: dict[str, str] = {}

    def fault(_topic: str) -> None:
        host = lab.testinfra(victim)
        # The disk is lost: the process dies and its metadata directory is gone.
        host.run_test("systemctl kill --signal=SIGKILL kafka-controller && systemctl stop kafka-controller")
        host.run_test("rm -rf /var/lib/kafka-controller/metadata")
        refused = playbook_process("ops/replace-controller.yml", "-e", f"controller_replace={victim.name}")
        assert refused.returncode != 0 and f"-e controller_replace_confirm={victim.name}" in refused.stdout
        assert voter_directory(describe(lab, "status"), victim.controller_id) == before, (
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
        swapped["after"] = voter_directory(describe(lab, "status"), victim.controller_id)

    outcome = run_scenario("KRaft controller with a lost disk replaced", conf, fault, replicas(lab))
    meta = lab.testinfra(victim).file("/var/lib/kafka-controller/metadata/meta.properties").content_string
    print(f"\n{victim.name}: voter directory {before} -> {swapped.get('after')}")
    assert swapped.get("after") not in ("", None, before), swapped
    assert f"directory.id={swapped['after']}" in meta
    assert quorum_whole(lab)
    assert_clean(outcome)


def test_the_format_step_refuses_a_foreign_log_dir_and_formats_an_empty_one(lab):
    """kafka_storage_format on a real controller host, with Kafka 4.x's own storage tool: a
    directory holding another cluster's meta.properties is refused and left byte for byte; an
    empty one beside it is formatted once (the positive control), and a second run changes nothing."""
    controller = lab.controllers(DC)[0]
    host = lab.testinfra(controller)
    cluster = host.check_output("sed -n 's/^cluster.id=//p' /var/lib/kafka-controller/metadata/meta.properties")
    work = "/var/tmp/kafkakit-format-test"
    foreign_meta = "version=1\ncluster.id=AAAAAAAAAAAAAAAAAAAAAA\nnode.id=101\ndirectory.id=BBBBBBBBBBBBBBBBBBBBBB\n"
    host.run_test(f"rm -rf {work} && mkdir -p {work}/foreign {work}/empty")
    host.run_test(f"printf '{foreign_meta}' > {work}/foreign/meta.properties")
    for name in ("foreign", "empty"):
        config = (
            f"process.roles=controller\nnode.id=101\nmetadata.log.dir={work}/{name}\nlog.dirs={work}/{name}\n"
            "controller.listener.names=CONTROLLER\nlisteners=CONTROLLER://127.0.0.1:19094\n"
            "controller.quorum.bootstrap.servers=127.0.0.1:19094\n"
        )
        host.run_test(f"printf '{config}' > {work}/{name}.properties")
    args = {"kafka_home": "/opt/kafka", "cluster_id": cluster, "quorum": "standalone"}
    try:
        refused = module_process(
            controller.name, "kafka_storage_format", {**args, "config": f"{work}/foreign.properties"}
        )
        result = module_result(refused, controller.name)
        assert result.get("failed") and "belongs to another cluster" in result["msg"], result
        assert host.file(f"{work}/foreign/meta.properties").content_string == foreign_meta
        assert host.file(f"{work}/foreign").listdir() == ["meta.properties"]

        first = module_result(
            module_process(controller.name, "kafka_storage_format", {**args, "config": f"{work}/empty.properties"}),
            controller.name,
        )
        assert not first.get("failed") and first["changed"] and first["formatted"] == [f"{work}/empty"], first
        assert f"cluster.id={cluster}" in host.file(f"{work}/empty/meta.properties").content_string
        again = module_result(
            module_process(controller.name, "kafka_storage_format", {**args, "config": f"{work}/empty.properties"}),
            controller.name,
        )
        assert not again.get("failed") and not again["changed"], again
    finally:
        host.run_test(f"rm -rf {work}")
