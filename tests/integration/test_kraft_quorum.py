"""The KRaft data centre's controller quorum: the contract tier's acks=all kill in KRaft mode (the
active controller SIGKILLed under a transactional load on dc2 that must end with nothing failed,
lost or stored twice) and the format step's refusal. A controller host stopped and started is in
scenarios/test_faults.py, a lost disk replaced in scenarios/test_controllers.py."""

from __future__ import annotations

from tests.integration import quorum
from tests.integration.accounting import account
from tests.integration.conftest import wait_until
from tests.integration.faults import assert_clean, run_scenario
from tests.integration.playbooks import module_process, module_result

DC = quorum.KRAFT_DC


def test_sigkill_of_the_active_controller(lab, kraft_conf, quorum_after):
    elected: dict[str, int] = {}

    def fault(_topic: str) -> None:
        elected["old"] = old = quorum.leader(lab, DC)
        assert old > 0, "no quorum leader before the fault"
        host = lab.testinfra(quorum.controller_by_id(lab, DC, old))
        host.run_test("systemctl kill --signal=SIGKILL kafka-controller")
        try:
            wait_until("a new quorum leader", lambda: quorum.leader(lab, DC) not in (old, -1), 60)
            elected["new"] = quorum.leader(lab, DC)
        finally:
            host.run_test("systemctl restart kafka-controller")
        wait_until("quorum whole", lambda: quorum.quorum_whole(lab, DC), 180)

    outcome = run_scenario(
        "active KRaft controller SIGKILLed and restarted", kraft_conf, fault, quorum.replicas(lab, DC)
    )
    account(f"quorum leader {elected.get('old')} -> {elected.get('new')}")
    assert elected.get("new") not in (None, -1, elected.get("old"))
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
