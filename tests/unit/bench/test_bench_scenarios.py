"""The kraft-vs-zk scenarios' offline parts: the failover window from ack times, replica
layouts, the result line, the inventory view, the quorum leader and the metadata-write probe."""

import threading
import time
from concurrent.futures import Future

import pytest
from confluent_kafka import KafkaError, KafkaException

from kafkakit.bench import failover
from kafkakit.bench.acks import AckLog, longest_ack_gap
from kafkakit.bench.layout import data_brokers, led_by, spread
from kafkakit.bench.nodes import Context, data_centre, host_runner, quorum_leader
from kafkakit.bench.parsers import ParseError, format_scenario, parse_scenario
from kafkakit.bench.scenarios import logs_present, replica_dirs
from kafkakit.rules.inventory import HostRecord, build_inventory

# --- the failover window --------------------------------------------------------------------


def test_longest_gap_between_acks():
    # The fault at 10.0; acks every 5 ms, then nothing from 10.1 to 12.6.
    acks = [10.0 + i * 0.005 for i in range(21)] + [12.6, 12.605, 12.61]
    assert longest_ack_gap(acks, 10.0, 12.7) == pytest.approx(2.5)


def test_gap_counts_from_the_fault_and_to_the_end_of_the_window():
    assert longest_ack_gap([13.0, 13.1], 10.0, 13.2) == pytest.approx(3.0)  # kill until the first ack
    assert longest_ack_gap([10.1, 10.2], 10.0, 15.0) == pytest.approx(4.8)  # last ack until the end


def test_gap_ignores_acks_outside_the_window_and_their_order():
    acks = [9.0, 9.5, 11.0, 10.5, 20.0]
    assert longest_ack_gap(acks, 10.0, 12.0) == pytest.approx(1.0)


def test_no_ack_in_the_window_is_the_whole_window():
    assert longest_ack_gap([], 3.0, 7.5) == 7.5 - 3.0
    with pytest.raises(ValueError, match="before it starts"):
        longest_ack_gap([], 5.0, 4.0)


def test_ack_log_keeps_times_and_errors():
    log = AckLog()
    before = time.monotonic()
    log.on_delivery(None, None)
    log.on_delivery(KafkaError(KafkaError._MSG_TIMED_OUT), None)
    assert len(log.acked) == 1 and log.acked[0] >= before and log.count_after(before - 1) == 1
    assert log.failed and "MSG_TIMED_OUT" in log.failed[0].upper()


# --- layouts --------------------------------------------------------------------------------


def test_spread_leads_round_robin_on_the_given_brokers():
    assert spread(4, [2, 3], 2) == [[2, 3], [3, 2], [2, 3], [3, 2]]
    assert spread(3, [1, 2, 3], 2) == [[1, 2], [2, 3], [3, 1]]
    with pytest.raises(ValueError):
        spread(1, [1], 2)


def test_led_by_puts_one_broker_first_everywhere():
    layout = led_by(5, 2, [1, 2, 3])
    assert [r[0] for r in layout] == [2] * 5 and [r[1] for r in layout] == [1, 3, 1, 3, 1]
    with pytest.raises(ValueError):
        led_by(1, 1, [1])


def test_data_brokers_leave_the_controller_out():
    assert data_brokers([3, 1, 2], avoid=1, count=2) == [2, 3]
    assert data_brokers([1, 2], avoid=None, count=2) == [1, 2]
    with pytest.raises(ValueError):
        data_brokers([1, 2], avoid=1, count=2)


# --- the result line ------------------------------------------------------------------------


def test_result_line_round_trip_among_other_output():
    line = format_scenario("failover", {"ack_gap_s": 0.0123, "metadata_write_s": 18.5, "failed_sends": 0.0})
    result = parse_scenario(f"WARN something\n{line}\nbye\n")
    assert result.scenario == "failover"
    assert result.metrics() == {"ack_gap_s": 0.0123, "metadata_write_s": 18.5, "failed_sends": 0.0}
    with pytest.raises(ParseError):
        parse_scenario("Traceback (most recent call last):\n  boom\n")


# --- the lab's hosts ------------------------------------------------------------------------

INVENTORY = build_inventory(
    [
        HostRecord("dc1-kafka2", "dc1", "dc1-az2", "10.0.0.12", ("zookeeper", "kafka_broker"), broker_id=2),
        HostRecord("dc1-kafka1", "dc1", "dc1-az1", "10.0.0.11", ("zookeeper", "kafka_broker"), broker_id=1),
        HostRecord("dc2-kafka1", "dc2", "dc2-az1", "10.0.0.21", ("kafka_broker",), broker_id=1),
        HostRecord("dc2-kafka2", "dc2", "dc2-az2", "10.0.0.22", ("kafka_broker",), broker_id=2),
        HostRecord("dc2-controller1", "dc2", "dc2-az1", "10.0.0.31", ("kafka_controller",), controller_id=101),
        HostRecord("dc2-controller2", "dc2", "dc2-az2", "10.0.0.32", ("kafka_controller",), controller_id=102),
    ]
)
STATUS = """ClusterId:              abc
LeaderId:               102
LeaderEpoch:            7
CurrentVoters:          [{"id": 101}, {"id": 102}]
"""


def test_data_centres_from_the_inventory():
    dc1, dc2 = data_centre(INVENTORY, "dc1"), data_centre(INVENTORY, "dc2")
    assert dc1.mode == "zookeeper" and dc1.brokers == {1: "dc1-kafka1", 2: "dc1-kafka2"} and dc1.controllers == {}
    assert dc2.mode == "kraft" and dc2.controllers == {101: "dc2-controller1", 102: "dc2-controller2"}
    assert dc2.ips["dc2-controller2"] == "10.0.0.32"
    with pytest.raises(ValueError, match="no kafka_broker"):
        data_centre(INVENTORY, "dc9")


def test_quorum_leader_asks_each_controller_until_one_answers():
    dc2 = data_centre(INVENTORY, "dc2")
    asked = []

    def run(host, argv):
        asked.append((host, argv[argv.index("--bootstrap-controller") + 1], argv[-1]))
        if host == "dc2-controller1":
            raise RuntimeError("exit 1: connection refused")
        return STATUS

    assert quorum_leader(run, dc2, 9094) == 102
    assert asked == [
        ("dc2-controller1", "10.0.0.31:9094", "--status"),
        ("dc2-controller2", "10.0.0.32:9094", "--status"),
    ]


class _Partition:
    def __init__(self, pid, replicas):
        self.id, self.replicas = pid, replicas


class _Topic:
    def __init__(self, replicas):
        self.partitions = {i: _Partition(i, r) for i, r in enumerate(replicas)}


class _Admin:
    def __init__(self, topics):
        self.topics = topics

    def list_topics(self, timeout):
        return self


def test_the_logs_a_delete_waits_for_are_each_replicas_on_its_broker():
    admin = _Admin({"t": _Topic([[1, 2], [2, 1]]), "u": _Topic([[2, 1]]), "other": _Topic([[3, 1]])})
    wanted = replica_dirs(admin, ["t", "u"])
    assert wanted == {1: {"t-0", "t-1", "u-0"}, 2: {"t-0", "t-1", "u-0"}}

    listings = {"dc1-kafka1": "t-0\nt-1\nu-0\nmeta.properties\n", "dc1-kafka2": "t-0\nu-0\n"}
    asked = []

    def run(host, argv):
        asked.append((host, argv))
        return listings[host]

    ctx = Context(data_centre(INVENTORY, "dc1"), {}, run, 9094, "0")
    assert not logs_present(ctx, wanted, "/var/lib/kafka/data")  # dc1-kafka2 lacks t-1
    assert ("dc1-kafka2", ["ls", "-1", "/var/lib/kafka/data"]) in asked
    listings["dc1-kafka2"] += "t-1\n"
    assert logs_present(ctx, wanted, "/var/lib/kafka/data")  # control: every log there


def test_host_runner_prefixes_the_host_and_raises_on_failure():
    run = host_runner("echo on")
    assert run("dc1-kafka1", ["systemctl", "stop", "kafka"]) == "on dc1-kafka1 systemctl stop kafka\n"
    with pytest.raises(RuntimeError, match="exit 1"):
        host_runner("false")("dc1-kafka1", [])


# --- the metadata-write probe ---------------------------------------------------------------


class FakeAdmin:
    """create_topics answers per attempt: ('fail', s), ('ok', s) after s seconds, or ('hang', s)."""

    plan: list[tuple[str, float]] = []
    made: list[str] = []

    def create_topics(self, topics, **_kwargs):
        (topic,) = topics
        FakeAdmin.made.append(topic.topic)
        outcome, delay = FakeAdmin.plan.pop(0)
        future: Future = Future()

        def finish():
            if outcome == "ok":
                future.set_result(None)
            else:
                future.set_exception(KafkaException(KafkaError(KafkaError._TIMED_OUT)))

        threading.Timer(delay, finish).start()
        return {topic.topic: future}


def test_probe_counts_the_first_attempt_to_succeed_even_one_held_before(monkeypatch):
    monkeypatch.setattr(failover, "PROBE_EVERY", 0.05)
    monkeypatch.setattr(failover, "PROBE_TIMEOUT", 2.0)
    monkeypatch.setattr(failover, "admin_from_conf", lambda _conf: FakeAdmin())
    # The first attempt is held and answered at 0.3 s; the later ones fail fast.
    FakeAdmin.plan = [("ok", 0.3)] + [("fail", 0.01)] * 100
    FakeAdmin.made = []
    names: list[str] = []
    start = time.monotonic()
    written = failover.first_metadata_write({}, "probe", names, timeout=5)
    assert 0.25 <= written - start < 0.6
    assert names == FakeAdmin.made and names[0] == "probe-0" and len(names) > 1


def test_probe_gives_up_at_its_timeout(monkeypatch):
    monkeypatch.setattr(failover, "PROBE_EVERY", 0.05)
    monkeypatch.setattr(failover, "PROBE_TIMEOUT", 0.1)
    monkeypatch.setattr(failover, "admin_from_conf", lambda _conf: FakeAdmin())
    FakeAdmin.plan = [("fail", 0.01)] * 100
    with pytest.raises(TimeoutError, match="no topic could be created"):
        failover.first_metadata_write({}, "probe", [], timeout=0.3)


def test_an_existing_topic_counts_as_created():
    done: Future = Future()
    done.set_exception(KafkaException(KafkaError(KafkaError.TOPIC_ALREADY_EXISTS)))
    failed: Future = Future()
    failed.set_exception(KafkaException(KafkaError(KafkaError.NOT_CONTROLLER)))
    assert failover._created(done) and not failover._created(failed)
