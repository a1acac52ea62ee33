"""The bench's laid-out topics pass confluent-kafka's own request checks, made before anything is
sent (the lab found the bench's first form refused there)."""

from __future__ import annotations

from confluent_kafka.admin import AdminClient, NewTopic

from kafkakit.bench.nodes import laid_out_topic, preferred_election

# Nothing listens there: only the client-side checks of create_topics run.
NOWHERE = {"bootstrap.servers": "127.0.0.1:9", "socket.timeout.ms": "100"}


def test_a_laid_out_topic_is_accepted_by_the_client() -> None:
    topic = laid_out_topic("bench-x", [[1, 2], [2, 3], [3, 1]], {"min.insync.replicas": "2"})
    futures = AdminClient(NOWHERE).create_topics([topic], request_timeout=0.5, operation_timeout=0.5)
    assert set(futures) == {"bench-x"}


def test_the_client_refuses_an_assignment_without_its_count() -> None:
    """The control: the check this guards against is real (the bench's first form)."""
    try:
        AdminClient(NOWHERE).create_topics([NewTopic("bench-y", replica_assignment=[[1], [2], [3]])])
    except ValueError as exc:
        assert "mutually exclusive" in str(exc)
    else:
        raise AssertionError("confluent-kafka accepted a replica assignment without a partition count")


def test_the_preferred_election_is_accepted_by_the_client() -> None:
    """confluent-kafka 2.16's elect_leaders raises on timeout arguments; the bench sends none."""
    assert preferred_election(AdminClient(NOWHERE)).cancel() in (True, False)
