"""Connectors as code, the lifecycle of the lab's heartbeat connector (roles/kafka_connect): paused,
then stopped, each with changed=0 on a second run; declared absent it is refused until the run
names it, then deleted; declared again it runs anew."""

from __future__ import annotations

import json

from kafkakit.cluster.connect import RestError
from tests.integration.conftest import wait_until
from tests.integration.connect_lab import CONNECTORS_ONLY, WORKERS, connector_running, connector_status, declaring
from tests.integration.playbooks import playbook_process, recap, run_playbook

NAME = "connect-heartbeat"
LIMIT = CONNECTORS_ONLY


def state() -> str:
    return connector_status(NAME)["connector"]["state"]


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
