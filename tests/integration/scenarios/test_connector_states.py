"""Connectors as code, the lifecycle of the lab's heartbeat connector (roles/kafka_connect): paused,
then stopped, each with changed=0 on a second run; declared absent it is refused until the run
names it, then deleted; declared again it runs anew."""

from __future__ import annotations

import json

from kafkakit.cluster.connect import RestError, request
from tests.integration.conftest import wait_until
from tests.integration.connect_lab import CONNECTORS_ONLY, WORKERS, admin_tls, connector_running, declaring, url
from tests.integration.playbooks import playbook_process, recap, run_playbook

NAME = "connect-heartbeat"
LIMIT = CONNECTORS_ONLY


def with_heartbeat(**changes: object) -> list[str]:
    """-e arguments declaring the lab's connectors with the heartbeat's entry changed."""
    return declaring(NAME, **changes)


def status() -> dict:
    return request(url(WORKERS[0]), "GET", f"/connectors/{NAME}/status", admin_tls())[1]


def running() -> bool:
    return connector_running(NAME)


def test_pause_stop_resume_and_a_deletion_only_when_named():
    try:
        for state, connect_state in (("paused", "PAUSED"), ("stopped", "STOPPED")):
            run_playbook("site.yml", *LIMIT, *with_heartbeat(state=state))
            wait_until(
                f"the connector {connect_state}", lambda s=connect_state: status()["connector"]["state"] == s, 60
            )
            again = recap(run_playbook("site.yml", *LIMIT, *with_heartbeat(state=state)))
            assert again[WORKERS[0].name]["changed"] == 0, again
        # Absent without the run naming it: refused, and the connector is still there.
        proc = playbook_process("site.yml", *LIMIT, *with_heartbeat(state="absent"))
        assert proc.returncode != 0 and "kafka_connectors_allow_delete" in proc.stdout
        assert status()["connector"]["state"] == "STOPPED"
        run_playbook(
            "site.yml",
            *LIMIT,
            *with_heartbeat(state="absent"),
            "-e",
            json.dumps({"kafka_connectors_allow_delete": [NAME]}),
        )
        try:
            status()
            raise AssertionError("the connector is still there after a confirmed deletion")
        except RestError as exc:
            assert exc.status == 404
    finally:
        # The declared state again: created anew, running.
        run_playbook("site.yml", *LIMIT)
    wait_until("the connector to run again", running, timeout=120)
