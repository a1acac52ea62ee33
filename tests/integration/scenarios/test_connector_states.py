"""Connectors as code, the lifecycle of the lab's heartbeat connector (roles/kafka_connect): paused,
then stopped, each with changed=0 on a second run; declared absent it is refused until the run
names it, then deleted; declared again it runs anew. A typo in its config refused by Connect's own
validation before anything changes. And the Connect roll's gate: refused while a
task is FAILED, passed (its order reported, nothing restarted) once nothing is."""

from __future__ import annotations

import json

from kafkakit.cluster.connect import RestError
from tests.integration.conftest import wait_until
from tests.integration.connect_lab import (
    CONNECTORS_ONLY,
    DC,
    WORKERS,
    admin_tls,
    connector_running,
    connector_status,
    declaring,
    rest,
    url,
)
from tests.integration.lab import Lab
from tests.integration.playbooks import playbook_process, recap, run_playbook

NAME = "connect-heartbeat"
LIMIT = CONNECTORS_ONLY


def state() -> str:
    return connector_status(NAME)["connector"]["state"]


def _config() -> dict:
    return rest(url(WORKERS[0]), "GET", f"/connectors/{NAME}/config", admin_tls())[1]


def test_a_config_typo_is_refused_by_connects_validation_and_nothing_changes():
    before = _config()
    proc = playbook_process("site.yml", *LIMIT, *declaring(NAME, config={"emit.heartbeats.interval.seconds": "five"}))
    assert proc.returncode != 0
    assert "nothing was changed" in proc.stdout and "emit.heartbeats.interval.seconds" in proc.stdout, proc.stdout[
        -3000:
    ]
    assert _config() == before
    # Positive control: a valid change goes through, and the declared one comes back.
    run_playbook("site.yml", *LIMIT, *declaring(NAME, config={"emit.heartbeats.interval.seconds": 6}))
    assert _config()["emit.heartbeats.interval.seconds"] == "6"
    run_playbook("site.yml", *LIMIT)
    assert _config() == before


def test_pause_stop_resume_and_a_deletion_only_when_named():
    try:
        for declared, connect_state in (("paused", "PAUSED"), ("stopped", "STOPPED")):
            run_playbook("site.yml", *LIMIT, *declaring(NAME, state=declared))
            wait_until(f"the connector {connect_state}", lambda s=connect_state: state() == s, 60)
            again = recap(run_playbook("site.yml", *LIMIT, *declaring(NAME, state=declared)))
            assert again[WORKERS[0].name]["changed"] == 0, again
        # Absent without the run naming it: refused, and the connector is still there.
        proc = playbook_process("site.yml", *LIMIT, *declaring(NAME, state="absent"))
        assert proc.returncode != 0 and "kafka_connectors_allow_delete" in proc.stdout
        assert state() == "STOPPED"
        run_playbook(
            "site.yml",
            *LIMIT,
            *declaring(NAME, state="absent"),
            "-e",
            json.dumps({"kafka_connectors_allow_delete": [NAME]}),
        )
        try:
            connector_status(NAME)
            raise AssertionError("the connector is still there after a confirmed deletion")
        except RestError as exc:
            assert exc.status == 404
    finally:
        # The declared state again: created anew, running.
        run_playbook("site.yml", *LIMIT)
    wait_until("the connector to run again", lambda: connector_running(NAME), timeout=120)


def _worker_starts() -> dict[str, str]:
    return {w.name: Lab().unit_started(w, "kafka-connect") for w in WORKERS}


def _heartbeat_config() -> dict[str, str]:
    """MirrorHeartbeatConnector on dc1 itself: a built-in connector whose task needs a
    transactional id (exactly-once source support) that the workers' principal is not granted."""
    bootstrap = Lab().client_conf(DC)["bootstrap.servers"]
    return {
        "connector.class": "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector",
        "source.cluster.alias": DC,
        "target.cluster.alias": DC,
        "source.cluster.bootstrap.servers": bootstrap,
        "target.cluster.bootstrap.servers": bootstrap,
        "tasks.max": "1",
    }


def test_the_roll_refuses_while_a_task_failed_and_passes_its_gate_once_nothing_failed():
    tls = admin_tls()
    name = "kafkakit-failing-probe"
    before = _worker_starts()
    rest(url(WORKERS[0]), "POST", "/connectors", tls, {"name": name, "config": _heartbeat_config()})
    try:
        # The task fails at once: its transactional id is not the workers' principal's to use.
        def failed_task() -> str:
            try:
                status = rest(url(WORKERS[0]), "GET", f"/connectors/{name}/status", tls)[1]
            except RestError as exc:  # no status yet, right after the creation
                assert exc.status == 404, exc
                return ""
            return next((t.get("trace", "") for t in status["tasks"] if t["state"] == "FAILED"), "")

        wait_until("the probe's task to fail", lambda: bool(failed_task()), timeout=120)
        assert "TransactionalIdAuthorizationException" in failed_task()
        proc = playbook_process("ops/rolling-restart.yml", "-e", "restart_service=kafka_connect", "-e", f"roll_dc={DC}")
        assert proc.returncode != 0, "the Connect roll started with a failed task"
        assert "refusing to roll kafka_connect" in proc.stdout
        assert f"task {name}-0 FAILED on" in proc.stdout
        assert "-e roll_allow_unhealthy=true" in proc.stdout
        assert _worker_starts() == before, "a worker was restarted anyway"
    finally:
        rest(url(WORKERS[0]), "DELETE", f"/connectors/{name}", tls)
    # Positive control: with nothing failed the same roll passes its gate and names every worker in
    # its order (its health gate alone; the roll itself, restarting one worker at a time under
    # load, is the scenario tests/integration/scenarios/test_connect_cdc.py).
    out = run_playbook(
        "ops/rolling-restart.yml",
        "-e",
        "restart_service=kafka_connect",
        "-e",
        f"roll_dc={DC}",
        "-e",
        "roll_check_only=true",
    )
    assert f"roll of kafka_connect: order {','.join(w.name for w in WORKERS)}" in out
    assert _worker_starts() == before
