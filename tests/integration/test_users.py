"""SCRAM users as code against the real cluster, in every data centre: create, change a
password, no-op, remove."""

from __future__ import annotations

import time
import uuid

import pytest

from kafkakit.scram_users import AdminScramStore, apply_users, login_checker, parse_users

pytestmark = pytest.mark.every_dc


def test_a_password_changes_once_and_then_nothing_changes(admin, client_conf):
    name = f"temp-{uuid.uuid4().hex[:8]}"
    bootstrap = client_conf["bootstrap.servers"]
    settings = {k: v for k, v in client_conf.items() if k != "bootstrap.servers"}
    can_login = login_checker(bootstrap, settings)
    store = AdminScramStore(admin)

    def apply(password: str, state: str = "present"):  # noqa: ANN202
        users = parse_users([{"name": name, "password": password, "state": state}], ["admin"])
        return apply_users(store, users, can_login, protected=["admin"])

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
    deadline = time.monotonic() + 60
    while can_login(name, "second-password-2", "SCRAM-SHA-512"):
        assert time.monotonic() < deadline, "a removed user could still log in after 60 s"
        time.sleep(1)
