"""SCRAM users as code against the real cluster, in every data centre: create, change a
password, no-op, remove. (Every login kept by a KRaft broker that replays its whole metadata log
after a removal is the faults scenario's: tests/integration/scenarios/test_metadata_replay.py.)"""

from __future__ import annotations

import uuid

import pytest

from kafkakit.cluster.scram_users import (
    AdminScramStore,
    ScramPlan,
    login_checker,
)
from tests.integration.conftest import wait_until
from tests.integration.users import apply_one

pytestmark = pytest.mark.every_dc


def test_a_password_changes_once_and_then_nothing_changes(admin, client_conf):
    name = f"temp-{uuid.uuid4().hex[:8]}"
    bootstrap = client_conf["bootstrap.servers"]
    settings = {k: v for k, v in client_conf.items() if k != "bootstrap.servers"}
    can_login = login_checker(bootstrap, settings)
    store = AdminScramStore(admin)

    def apply(password: str, state: str = "present") -> ScramPlan:
        return apply_one(store, can_login, name, password, state)

    assert apply("first-password-1").created == [name]
    assert can_login(name, "first-password-1", "SCRAM-SHA-512")
    assert not apply("first-password-1").changed

    assert apply("second-password-2").updated == [name]
    assert can_login(name, "second-password-2", "SCRAM-SHA-512")
    assert not can_login(name, "first-password-1", "SCRAM-SHA-512")
    assert not apply("second-password-2").changed

    assert apply("second-password-2", state="absent").removed == [name]
    # Each broker drops the credential when the change reaches it (ZooKeeper's notification, or
    # the KRaft metadata log).
    wait_until("the removed user refused", lambda: not can_login(name, "second-password-2", "SCRAM-SHA-512"), 60)
