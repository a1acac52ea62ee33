"""The guard of ops/recover-zookeeper.yml (kafkakit.guards.operations); that the server does not serve
and that its ensemble has a quorum is read from the servers (tests/integration/test_recover.py)."""

from __future__ import annotations

from kafkakit.guards.operations import zookeeper_recover_refusal

GROUPS = {"zookeeper": ["dc1-kafka1", "dc1-kafka2", "dc1-kafka3"], "kafka_broker": ["dc2-kafka1"]}


def test_recovery_goes_ahead_when_the_server_is_named() -> None:
    assert zookeeper_recover_refusal("dc1-kafka2", "dc1-kafka2", GROUPS) == ""


def test_without_confirmation_it_says_what_it_touches_and_how_to_confirm() -> None:
    why = zookeeper_recover_refusal("dc1-kafka2", None, GROUPS)
    assert why.startswith("refusing to recover dc1-kafka2")
    assert "sets its snapshots and transaction logs aside" in why
    assert why.endswith("-e recover_confirm=dc1-kafka2")


def test_a_confirmation_naming_another_server_is_refused() -> None:
    why = zookeeper_recover_refusal("dc1-kafka2", "dc1-kafka3", GROUPS)
    assert "recover_confirm=dc1-kafka3 does not name dc1-kafka2" in why


def test_a_host_that_is_no_zookeeper_server_or_none_is_refused() -> None:
    assert "is not a zookeeper host" in zookeeper_recover_refusal("dc2-kafka1", "dc2-kafka1", GROUPS)
    assert "-e recover_host=<host>" in zookeeper_recover_refusal("", "", GROUPS)
