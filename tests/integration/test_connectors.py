"""Connectors as code and plugins (roles/kafka_connect): the declared plugin installed in its own
versioned directory; the lab's heartbeat connector running as its own principal with no secret in
any REST answer; the restart operation restarting only what failed; the principal refused where
it was not granted. Each refusal beside its positive control. (The lifecycle, pause, stop, resume
and a deletion, and Connect's own validation refusing a typo are the connect scenario's:
tests/integration/scenarios/test_connector_states.py.)"""

from __future__ import annotations

import json

from confluent_kafka import Consumer, KafkaError, TopicPartition
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
)

from kafkakit.cluster.connect import RestError
from tests.integration.conftest import wait_until
from tests.integration.connect_lab import (
    DC,
    WORKERS,
    admin_tls,
    connector_running,
    connector_status,
    rest,
    url,
)
from tests.integration.lab import ROOT, Lab
from tests.integration.playbooks import run_playbook

LAB = Lab()
NAME = "connect-heartbeat"
PRINCIPAL = "connect-heartbeat"
PLUGIN = "io.debezium.connector.postgresql.PostgresConnector"


def status(name: str = NAME) -> dict:
    return connector_status(name)


def running() -> bool:
    return connector_running(NAME)


def test_the_declared_plugin_version_is_installed_in_a_directory_of_its_own():
    for w in WORKERS:
        dirs = LAB.testinfra(w).check_output("ls /opt/kafka-connect/plugins").split()
        assert dirs == ["debezium-postgres-3.6.1.Final"], (w.name, dirs)
    plugins = rest(url(WORKERS[0]), "GET", "/connector-plugins", admin_tls())[1]
    assert {"class": PLUGIN, "type": "source", "version": "3.6.1.Final"} in plugins, plugins


def test_the_workers_find_plugins_by_their_manifests_without_scanning_classes(lab: Lab):
    """plugin.discovery=service_load: each worker's start read the manifests only; the plugin is
    found all the same (the test above lists it)."""
    for w in WORKERS:
        journal = lab.journal_of_this_start(w, "kafka-connect")
        assert "Scanning plugins with ServiceLoaderScanner" in journal, (w.name, journal[-2000:])
        assert "ReflectionScanner" not in journal, w.name


def test_the_heartbeat_connector_runs_as_its_own_principal_and_no_answer_holds_its_password(lab: Lab):
    wait_until("the heartbeat connector and its task to run", running, timeout=120)
    password = (ROOT / "build/lab/secrets/user-connect-heartbeat").read_text().split()[0]
    tls = admin_tls()
    answers = [
        rest(url(w), "GET", path, tls)[1]
        for w in WORKERS
        for path in (
            f"/connectors/{NAME}",
            f"/connectors/{NAME}/config",
            f"/connectors/{NAME}/tasks",
            "/connectors?expand=info",
        )
    ]
    text = json.dumps(answers)
    assert password not in text
    assert "${file:/etc/kafka-connect/secrets/principals.properties:connect-heartbeat}" in text
    assert f'username=\\"{PRINCIPAL}\\"' in text
    # Its heartbeats arrive in dc1, written by its principal's transactional producer.
    c = Consumer({**lab.client_conf(DC), "group.id": "kafkakit-heartbeat-probe", "isolation.level": "read_committed"})
    try:
        low, high = c.get_watermark_offsets(TopicPartition("heartbeats", 0), timeout=20)
        wait_until(
            "new heartbeats",
            lambda: c.get_watermark_offsets(TopicPartition("heartbeats", 0), timeout=20)[1] > high,
            timeout=60,
        )
    finally:
        c.close()
    assert high >= low


def test_the_connectors_principal_reads_nothing_it_was_not_granted(lab: Lab):
    password = (ROOT / "build/lab/secrets/user-connect-heartbeat").read_text().split()[0]
    conf = {**lab.client_conf(DC), "sasl.username": PRINCIPAL, "sasl.password": password}
    c = Consumer({**conf, "group.id": f"connect-{NAME}", "enable.auto.commit": "false"})
    try:
        own = c.list_topics("heartbeats", timeout=20).topics["heartbeats"]
        assert own.error is None, own.error
        other = c.list_topics("orders", timeout=20).topics["orders"]
        assert other.error is not None and other.error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED, other.error
    finally:
        c.close()


def _worker_grants(admin: AdminClient, create: bool) -> None:
    """What the failing probe lacks: the workers' principal writing heartbeats transactionally."""
    bindings = [
        AclBinding(
            ResourceType.TRANSACTIONAL_ID,
            f"connect-{DC}-{PROBE}-",
            ResourcePatternType.PREFIXED,
            "User:connect",
            "*",
            op,
            AclPermissionType.ALLOW,
        )
        for op in (AclOperation.WRITE, AclOperation.DESCRIBE)
    ] + [
        AclBinding(
            ResourceType.TOPIC,
            "heartbeats",
            ResourcePatternType.LITERAL,
            "User:connect",
            "*",
            op,
            AclPermissionType.ALLOW,
        )
        for op in (AclOperation.WRITE, AclOperation.DESCRIBE)
    ]
    if create:
        for f in admin.create_acls(bindings).values():
            f.result()
    else:
        for f in admin.delete_acls(
            [
                AclBindingFilter(
                    b.restype, b.name, b.resource_pattern_type, b.principal, b.host, b.operation, b.permission_type
                )
                for b in bindings
            ]
        ).values():
            f.result()


PROBE = "kafkakit-restart-probe"


def _task_starts(task: str) -> int:
    """How often the workers have started `task` since they started (their journal)."""
    return sum(
        int(
            LAB.testinfra(w).check_output(
                f"journalctl -u kafka-connect --no-pager -o cat | grep -c 'Creating task {task}' || true"
            )
        )
        for w in WORKERS
    )


def test_the_restart_operation_restarts_only_what_failed(lab: Lab):
    """A probe whose task fails (the workers' principal may not use its transactional id) beside the
    running heartbeat: the operation restarts the probe's failed parts only, and once the grant is
    there they run."""
    tls = admin_tls()
    wait_until("the heartbeat connector to run", running, timeout=120)
    heartbeat_starts = _task_starts(f"{NAME}-0")
    # The heartbeat's config without its principal: the probe's tasks produce as the workers' principal.
    stored = rest(url(WORKERS[0]), "GET", f"/connectors/{NAME}/config", tls)[1]
    overrides = ("producer.override.", "consumer.override.", "admin.override.")
    probe = {k: v for k, v in stored.items() if not k.startswith(overrides) and k != "name"}
    rest(url(WORKERS[0]), "POST", "/connectors", tls, {"name": PROBE, "config": probe})
    admin = AdminClient(lab.client_conf(DC))
    try:

        def probe_failed() -> bool:
            try:
                return any(t["state"] == "FAILED" for t in status(PROBE)["tasks"])
            except RestError:
                return False

        wait_until("the probe's task to fail", probe_failed, timeout=120)
        _worker_grants(admin, create=True)
        out = run_playbook("ops/connect-restart-failed.yml", "-e", f"connect_dc={DC}")
        assert f"{DC}: restarted the failed parts of {PROBE}'" in out, out[-2000:]
        wait_until(
            "the probe to run", lambda: all(t["state"] == "RUNNING" for t in status(PROBE)["tasks"]), timeout=120
        )
        # The heartbeat's task was not restarted: no worker started it again, and it runs.
        assert _task_starts(f"{NAME}-0") == heartbeat_starts
        assert running()
    finally:
        try:
            rest(url(WORKERS[0]), "DELETE", f"/connectors/{PROBE}", tls)
        finally:
            _worker_grants(admin, create=False)
