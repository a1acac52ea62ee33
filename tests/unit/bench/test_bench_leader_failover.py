"""leader-failover, one run (kafkakit.bench.leader_failover): the layout, what the metadata must
show before an election or a return counts, the figures and the accounting, the settings read
from the hosts, and a whole run's steps with the cluster and the hosts faked."""

import time

import pytest

from kafkakit.bench import leader_failover as lf
from kafkakit.bench.acks import PartitionAcks
from kafkakit.bench.layout import spread
from kafkakit.bench.nodes import Context, data_centre
from kafkakit.rules.inventory import HostRecord, build_inventory


def host(name, dc, i, roles, **ids):
    return HostRecord(name, dc, f"{dc}-az{i}", f"10.0.{dc[-1]}.{i}", roles, **ids)


INVENTORY = build_inventory(
    [host(f"dc1-kafka{i}", "dc1", i, ("zookeeper", "kafka_broker"), broker_id=i, zookeeper_id=i) for i in (1, 2, 3)]
    + [host(f"dc2-kafka{i}", "dc2", i, ("kafka_broker",), broker_id=i) for i in (1, 2, 3)]
    + [host(f"dc2-controller{i}", "dc2", i, ("kafka_controller",), controller_id=100 + i) for i in (1, 2, 3)]
)


# --- the layout -----------------------------------------------------------------------------------


def test_the_lost_broker_leads_partition_0_and_each_broker_leads_one():
    victim, assignment = lf.layout([3, 1, 2], None)
    assert victim == 1 and assignment == [[1, 2, 3], [2, 3, 1], [3, 1, 2]]
    assert [replicas[0] for replicas in assignment] == [1, 2, 3]


def test_the_zookeeper_controller_is_not_the_one_lost():
    victim, assignment = lf.layout([1, 2, 3], 1)
    assert victim == 2 and assignment == spread(3, [2, 1, 3], 3)
    # More brokers: the lost one and the next ones by id (the controller may lead another partition).
    assert lf.layout([4, 3, 2, 1], 2) == (1, spread(3, [1, 2, 3], 3))


def test_three_brokers_are_needed():
    with pytest.raises(ValueError, match="3 brokers needed"):
        lf.layout([1, 2], None)


# --- the metadata watch ----------------------------------------------------------------------------

BEFORE = {0: (1, (1, 2, 3)), 1: (2, (2, 3, 1)), 2: (3, (3, 1, 2))}
ELECTED = {0: (2, (2, 3)), 1: (2, (2, 3)), 2: (3, (3, 2))}
BACK = {0: (2, (2, 3, 1)), 1: (2, (2, 3, 1)), 2: (3, (3, 2, 1))}


def test_an_election_then_a_return_after_the_start():
    watch = lf.Watch(victim=1)
    watch.see(1.0, BEFORE, None)
    watch.see(1.1, {0: (-1, (2, 3)), 1: (2, (2, 3)), 2: (3, (3, 2))}, None)  # leaderless: not an election
    assert watch.elected_at is None and watch.left_isr
    watch.see(1.2, {0: (2, (2, 3))}, None)  # a partial answer is no observation
    watch.see(1.3, ELECTED, None)
    assert watch.elected_at == 1.3 and not watch.done
    watch.see(5.0, {**ELECTED, 0: (2, (2, 3, 1))}, 4.0)  # back in one ISR only
    assert watch.back_at is None
    watch.see(6.0, BACK, 4.0)
    watch.see(7.0, BACK, 4.0)
    assert (watch.elected_at, watch.back_at, watch.done) == (1.3, 6.0, True)


def test_an_isr_that_still_names_the_broker_before_its_session_ends_is_no_return():
    # ZooKeeper mode, default session: the start (10 s) comes before the controller drops the broker,
    # whose metadata then still shows it leading and in every ISR.
    watch = lf.Watch(victim=1)
    watch.see(11.0, BEFORE, 10.0)
    assert watch.back_at is None and not watch.left_isr
    watch.see(19.0, ELECTED, 10.0)
    watch.see(30.0, BACK, 10.0)
    assert (watch.elected_at, watch.back_at) == (19.0, 30.0)


def test_a_return_seen_before_the_start_does_not_count():
    watch = lf.Watch(victim=1)
    watch.see(1.0, ELECTED, None)
    watch.see(2.0, BACK, None)
    assert watch.back_at is None
    watch.see(3.0, BACK, 2.5)
    assert watch.back_at == 3.0


# --- figures and accounting ------------------------------------------------------------------------


class Msg:
    def __init__(self, partition, number):
        self._partition, self._value = partition, str(number).encode()

    def partition(self):
        return self._partition

    def value(self):
        return self._value


def acks_at(log, when, partition, number):
    log.acks.append((when, partition))
    log.numbers.append(number)


def test_the_accounting_counts_extra_copies_and_acknowledged_records_not_read():
    assert lf.accounting([0, 1, 2, 3], [0, 1, 1, 1, 2, 3, 3]) == (3, 0)
    assert lf.accounting([0, 1, 2, 3], [0, 2, 9]) == (0, 2)
    assert lf.accounting([], []) == (0, 0)


def test_figures_from_a_run_the_victims_partition_stalled_longer_than_the_others():
    log = PartitionAcks()
    n = 0
    for step in range(0, 1000):  # 10 s of acks every 10 ms, round-robin over the partitions
        t = step / 100
        partition = n % 3
        stalled = 1.0 <= t < 6.0 if partition == 0 else 1.0 <= t < 3.0
        if not stalled:
            acks_at(log, 100 + t, partition, n)
        n += 1
    log.sent, log.failed = n + 5, ["KafkaError{code=_MSG_TIMED_OUT}"] * 5
    watch = lf.Watch(victim=1, elected_at=100 + 5.5, left_isr=True, back_at=100 + 8.0)
    figures = lf.figures(log, 100.5, 100 + 5.0, watch, 100 + 9.5, read=[*log.numbers, 7])
    assert figures["ack_gap_s"] == pytest.approx(5.0, abs=0.05)
    assert figures["any_ack_gap_s"] == pytest.approx(2.0, abs=0.05)
    assert figures["elected_s"] == pytest.approx(5.0) and figures["isr_back_s"] == pytest.approx(3.0)
    assert figures["restarted_s"] == pytest.approx(4.5)
    assert (figures["sent"], figures["acked"], figures["failed"]) == (n + 5, len(log.numbers), 5)
    assert (figures["duplicated"], figures["lost"]) == (1 if 7 in log.numbers else 0, 0)


def test_the_acks_log_keeps_partitions_and_numbers():
    log = PartitionAcks()
    log.on_delivery(None, Msg(2, 41))
    log.on_delivery(None, Msg(0, 42))
    log.on_delivery("broker down", Msg(1, 43))
    assert log.numbers == [41, 42] and log.failed == ["broker down"]
    assert len(log.times()) == 2 and len(log.times(0)) == 1 and log.count_after(0.0, 2) == 1


# --- the settings in effect ------------------------------------------------------------------------


def test_a_zookeeper_brokers_session_is_what_the_ensemble_grants():
    server = lf.properties("# x\nzookeeper.session.timeout.ms=3000\nssl.keystore.password=secret\n")
    assert lf.zookeeper_settings(server, lf.properties("tickTime=2000\n")) == {
        "cfg_zookeeper_session_timeout_ms": 4000.0,  # below 2 ticks: ZooKeeper gives 4000
        "cfg_zookeeper_tick_ms": 2000.0,
        "cfg_replica_lag_time_max_ms": 30000.0,
    }
    settings = lf.zookeeper_settings({}, {"tickTime": "1000", "minSessionTimeout": "5000"})
    assert settings["cfg_zookeeper_session_timeout_ms"] == 18000.0 and settings["cfg_zookeeper_tick_ms"] == 1000.0


def test_the_kraft_lease_comes_from_the_controller_and_the_heartbeat_from_the_broker():
    server = {"broker.heartbeat.interval.ms": "1000", "broker.session.timeout.ms": "1", "replica.lag.time.max.ms": "1"}
    assert lf.kraft_settings(server, {"broker.session.timeout.ms": "4000"}) == {
        "cfg_broker_session_timeout_ms": 4000.0,
        "cfg_broker_heartbeat_interval_ms": 1000.0,
        "cfg_replica_lag_time_max_ms": 1.0,
    }
    assert lf.kraft_settings({}, {})["cfg_broker_session_timeout_ms"] == 9000.0


# --- a whole run, faked ----------------------------------------------------------------------------


class Hosts:
    """A HostRun recording every command; `cat` answers with the files given."""

    def __init__(self, files):
        self.commands: list[tuple[str, list[str]]] = []
        self.files = files

    def __call__(self, host, argv):
        self.commands.append((host, argv))
        return self.files.get((host, argv[1]), "") if argv[0] == "cat" else ""

    def systemctl(self):
        return [(h, argv[1:]) for h, argv in self.commands if argv[0] == "systemctl"]

    def issued(self, verb):
        return any(argv[:2] == ["systemctl", verb] for _, argv in self.commands)


@pytest.fixture
def faked(monkeypatch):
    """The cluster faked around the hosts: the metadata follows what the hosts were told."""
    seen = {"created": [], "deleted": [], "started": [], "hosts": None}
    monkeypatch.setattr(lf, "create_laid_out", lambda _ctx, t, a, c: seen["created"].append((t, a, dict(c))))
    monkeypatch.setattr(lf, "delete_topics_retrying", lambda _conf, topics: seen["deleted"].extend(topics))
    monkeypatch.setattr(lf, "start_again", lambda _ctx, h, unit: seen["started"].append((h, unit)))
    monkeypatch.setattr(lf, "elect_preferred_leaders", lambda _conf: "")
    monkeypatch.setattr(lf, "admin_from_conf", lambda _conf: object())
    monkeypatch.setattr(lf, "read_numbers", lambda _conf, _topic, _n: list(seen["log"].numbers))
    monkeypatch.setattr(lf, "WATCH_EVERY", 0.005)
    monkeypatch.setattr(lf, "WARMUP_SECONDS", 0.1)
    monkeypatch.setattr(lf, "TAIL_SECONDS", 0.1)

    def produce(_conf, _topic, partitions, _rate, log, stop):
        seen["log"] = log
        while not stop.is_set():
            n = log.sent
            log.sent += 1
            log.on_delivery(None, Msg(n % partitions, n))
            time.sleep(0.0005)

    monkeypatch.setattr(lf, "produce_round_robin", produce)

    def states(_admin, _topic):
        victim = seen["victim"]
        hosts = seen["hosts"]
        others = [b for b in (1, 2, 3) if b != victim]
        if not hosts.issued("kill"):
            return {0: (victim, (victim, *others)), 1: (others[0], (1, 2, 3)), 2: (others[1], (1, 2, 3))}
        isr = (*others, victim) if hosts.issued("start") else tuple(others)
        return {0: (others[0], isr), 1: (others[0], isr), 2: (others[1], isr)}

    monkeypatch.setattr(lf, "partition_states", states)
    return seen


def ctx(dc, run):
    return Context(data_centre(INVENTORY, dc), {"bootstrap.servers": "x:9093"}, run, 9094, "t-1")


def test_a_zookeeper_run_kills_stops_and_starts_a_broker_that_is_not_the_controller(monkeypatch, faked):
    monkeypatch.setattr(lf, "zookeeper_controller", lambda _conf: 1)
    hosts = Hosts({("dc1-kafka2", lf.SERVER_PROPERTIES): "zookeeper.session.timeout.ms=6000\n",
                   ("dc1-kafka1", lf.ZOO_CFG): "tickTime=1000\n"})  # fmt: skip
    faked["hosts"], faked["victim"] = hosts, 2
    figures = lf.leader_failover(ctx("dc1", hosts), restart_after=0.05)
    [(topic, assignment, config)] = faked["created"]
    assert topic == "bench-lf-zookeeper-t-1" and assignment == spread(3, [2, 1, 3], 3)
    assert config == {"min.insync.replicas": "2"}
    assert hosts.systemctl() == [
        ("dc1-kafka2", ["kill", "--signal=SIGKILL", "kafka"]),
        ("dc1-kafka2", ["stop", "kafka"]),
        ("dc1-kafka2", ["start", "kafka"]),
    ]
    # The files are read before the kill; the data centre is healthy again and the topic gone after.
    assert [i for i, (_, argv) in enumerate(hosts.commands) if argv[0] == "cat"] == [0, 1]
    assert faked["started"] == [("dc1-kafka2", "kafka")] and faked["deleted"] == [topic]
    assert figures["cfg_zookeeper_session_timeout_ms"] == 6000.0 and figures["cfg_zookeeper_tick_ms"] == 1000.0
    assert figures["restarted_s"] >= 0.05 and 0 <= figures["elected_s"] < figures["restarted_s"]
    assert figures["isr_back_s"] >= 0 and figures["sent"] >= figures["acked"] > 0
    assert (figures["failed"], figures["duplicated"], figures["lost"]) == (0, 0, 0)


def test_a_kraft_run_reads_the_lease_on_a_controller(monkeypatch, faked):
    monkeypatch.setattr(lf, "zookeeper_controller", lambda _conf: pytest.fail("no ZooKeeper controller in KRaft"))
    hosts = Hosts({("dc2-controller1", lf.CONTROLLER_PROPERTIES): "broker.session.timeout.ms=4000\n"})
    faked["hosts"], faked["victim"] = hosts, 1
    figures = lf.leader_failover(ctx("dc2", hosts), restart_after=0.05)
    assert faked["created"][0][1] == spread(3, [1, 2, 3], 3)
    assert {h for h, _ in hosts.systemctl()} == {"dc2-kafka1"}
    assert figures["cfg_broker_session_timeout_ms"] == 4000.0 and figures["cfg_broker_heartbeat_interval_ms"] == 2000


def test_a_run_that_fails_before_the_kill_kills_nothing_and_deletes_its_topic(monkeypatch, faked):
    monkeypatch.setattr(lf, "zookeeper_controller", lambda _conf: 1)
    hosts = Hosts({})
    faked["hosts"], faked["victim"] = hosts, 3  # the metadata shows another leader than the one laid out
    monkeypatch.setattr(lf, "LEAD_WAIT", 0.2)
    with pytest.raises(TimeoutError, match="broker 2 leading partition 0 of bench-lf-zookeeper-t-1: not within"):
        lf.leader_failover(ctx("dc1", hosts), restart_after=0.05)
    assert hosts.systemctl() == [] and faked["started"] == [] and len(faked["deleted"]) == 1


def test_a_broker_that_never_returns_fails_the_run_and_is_started_again(monkeypatch, faked):
    monkeypatch.setattr(lf, "zookeeper_controller", lambda _conf: 1)
    monkeypatch.setattr(lf, "TIMEOUT", 0.3)
    hosts = Hosts({})
    faked["hosts"], faked["victim"] = hosts, 2
    after = {0: (1, (1, 3)), 1: (1, (1, 3)), 2: (3, (3, 1))}  # after the kill it never comes back
    before = {0: (2, (2, 1, 3)), 1: (1, (1, 2, 3)), 2: (3, (1, 2, 3))}
    monkeypatch.setattr(lf, "partition_states", lambda *_a: after if hosts.issued("kill") else before)
    with pytest.raises(TimeoutError, match="not back in every ISR"):
        lf.leader_failover(ctx("dc1", hosts), restart_after=0.05)
    assert hosts.issued("start") and faked["started"] == [("dc1-kafka2", "kafka")] and len(faked["deleted"]) == 1


def test_the_data_centre_names_its_zookeeper_servers():
    assert data_centre(INVENTORY, "dc1").zookeepers == ("dc1-kafka1", "dc1-kafka2", "dc1-kafka3")
    assert data_centre(INVENTORY, "dc2").zookeepers == ()


def test_the_cli_runs_it_with_the_delay_given_and_prints_the_result_line(monkeypatch, tmp_path, capsys):
    import yaml

    from kafkakit.bench import scenarios
    from kafkakit.bench.parsers import parse_scenario

    (tmp_path / "hosts.yml").write_text(yaml.safe_dump(INVENTORY))
    (tmp_path / "client.conf").write_text("bootstrap.servers=x:9093\n")
    monkeypatch.setattr(scenarios, "host_runner", lambda _prefix: None)
    monkeypatch.setattr(scenarios, "leader_failover", lambda c, after: {"ack_gap_s": after, "lost": 0.0})
    argv = [
        "leader-failover",
        "--inventory",
        str(tmp_path / "hosts.yml"),
        "--client-conf",
        str(tmp_path / "client.conf"),
    ]
    assert scenarios.main([*argv, "--dc", "dc2", "--mode", "kraft", "--restart-after", "3"]) == 0
    result = parse_scenario(capsys.readouterr().out)
    assert (result.scenario, result.values) == ("leader-failover", {"ack_gap_s": 3.0, "lost": 0.0})
