"""create_topics_retrying / delete_topics_retrying: which answers are retried with a fresh client,
which count as done, which fail at once, and what is left at the deadline (a fake admin, no network)."""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import Future
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import NewTopic

from kafkakit.cluster.admin import AdminRetryError, create_topics_retrying, delete_topics_retrying

CONF = {"bootstrap.servers": "127.0.0.1:1", "security.protocol": "SASL_SSL"}


def answer(outcome: int | None | type[BaseException]) -> Future:
    """A resolved admin future: None = success, an error code = that KafkaError."""
    future: Future = Future()
    if outcome is None:
        future.set_result(None)
    elif isinstance(outcome, int):
        future.set_exception(KafkaException(KafkaError(outcome)))
    else:
        future.set_exception(outcome())
    return future


class FakeAdmins:
    """make_admin for the helpers: admin number i answers script[i][topic] (success if absent)."""

    def __init__(self, *script: Mapping[str, Any]) -> None:
        self.script = list(script)
        self.made: list[Mapping[str, Any]] = []
        self.asked: list[list[str]] = []

    def __call__(self, conf: Mapping[str, Any]) -> FakeAdmins:
        self.made.append(conf)
        return self

    def _answers(self, names: list[str]) -> dict[str, Future]:
        self.asked.append(list(names))
        step = self.script[min(len(self.asked), len(self.script)) - 1]
        return {n: answer(step.get(n)) for n in names}

    def create_topics(self, topics: list[NewTopic]) -> dict[str, Future]:
        return self._answers([t.topic for t in topics])

    def delete_topics(self, names: list[str]) -> dict[str, Future]:
        return self._answers(names)


def create(admins: FakeAdmins, *names: str, timeout: float = 5.0) -> None:
    create_topics_retrying(CONF, [NewTopic(n, 1, 1) for n in names], timeout, interval=0, make_admin=admins)


def delete(admins: FakeAdmins, *names: str, timeout: float = 5.0) -> None:
    delete_topics_retrying(CONF, list(names), timeout, interval=0, make_admin=admins)


def test_a_first_success_makes_one_client_and_one_call() -> None:
    admins = FakeAdmins({})
    create(admins, "a", "b")
    assert admins.asked == [["a", "b"]]
    assert admins.made == [CONF]


@pytest.mark.parametrize(
    "code", [KafkaError.NOT_CONTROLLER, KafkaError.REQUEST_TIMED_OUT, KafkaError._TRANSPORT, KafkaError._TIMED_OUT]
)
def test_a_moved_controller_or_a_timeout_is_retried_with_a_fresh_client(code: int) -> None:
    admins = FakeAdmins({"a": code}, {})
    create(admins, "a")
    assert admins.asked == [["a"], ["a"]]
    assert len(admins.made) == 2


def test_only_the_failed_topics_are_asked_again() -> None:
    admins = FakeAdmins({"b": KafkaError.NOT_CONTROLLER}, {})
    delete(admins, "a", "b", "c")
    assert admins.asked == [["a", "b", "c"], ["b"]]


def test_a_future_that_timed_out_is_retried() -> None:
    admins = FakeAdmins({"a": TimeoutError}, {})
    delete(admins, "a")
    assert admins.asked == [["a"], ["a"]]


def test_an_existing_topic_counts_as_created() -> None:
    admins = FakeAdmins({"a": KafkaError.TOPIC_ALREADY_EXISTS})
    create(admins, "a")
    assert admins.asked == [["a"]]


def test_an_unknown_topic_counts_as_deleted() -> None:
    admins = FakeAdmins({"a": KafkaError.UNKNOWN_TOPIC_OR_PART})
    delete(admins, "a")
    assert admins.asked == [["a"]]


def test_done_codes_are_per_operation() -> None:
    # Deleting a topic that "already exists" or creating an "unknown" one is a real error.
    with pytest.raises(KafkaException) as info:
        delete(FakeAdmins({"a": KafkaError.TOPIC_ALREADY_EXISTS}), "a")
    assert info.value.args[0].code() == KafkaError.TOPIC_ALREADY_EXISTS
    with pytest.raises(KafkaException):
        create(FakeAdmins({"a": KafkaError.UNKNOWN_TOPIC_OR_PART}), "a")


def test_a_non_retriable_error_fails_at_once() -> None:
    admins = FakeAdmins({"a": KafkaError.TOPIC_AUTHORIZATION_FAILED}, {})
    with pytest.raises(KafkaException) as info:
        create(admins, "a")
    assert info.value.args[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert admins.asked == [["a"]]


def test_the_deadline_fails_with_the_last_error() -> None:
    admins = FakeAdmins({"a": KafkaError.NOT_CONTROLLER})
    with pytest.raises(AdminRetryError, match=r"create topics \['a'\].*NOT_CONTROLLER"):
        create(admins, "a", timeout=0.2)
    assert len(admins.asked) >= 2
