"""The failover and shutdown scenarios' steps in order, with the cluster and the hosts faked:
what is killed or stopped, where the topic goes, that everything is started again and deleted."""

import time

import pytest

from kafkakit.bench import failover as failover_mod
from kafkakit.bench import scenarios
from kafkakit.bench.layout import led_by, spread
from kafkakit.bench.nodes import Context, data_centre
from kafkakit.rules.inventory import HostRecord, build_inventory


def host(name, dc, i, role, **ids):
    return HostRecord(name, dc, f"{dc}-az{i}", f"10.0.{dc[-1]}.{i}", (role,), **ids)


INVENTORY = build_inventory(
    [host(f"dc1-kafka{i}", "dc1", i, "kafka_broker", broker_id=i) for i in (1, 2, 3)]
    + [host(f"dc2-kafka{i}", "dc2", i, "kafka_broker", broker_id=i) for i in (1, 2)]
    + [host(f"dc2-controller{i}", "dc2", i, "kafka_controller", controller_id=100 + i) for i in (1, 2, 3)]
)


class Hosts:
    """A HostRun that records every command and answers `systemctl show` with `result`."""

    def __init__(self, result="success"):
        self.commands: list[tuple[str, list[str]]] = []
        self.result = result

    def __call__(self, host, argv):
        self.commands.append((host, argv))
        return f"{self.result}\n" if argv[:2] == ["systemctl", "show"] else ""


@pytest.fixture
def faked(monkeypatch):
    """The cluster side of both modules faked; returns what they were asked to do."""
    seen = {"created": [], "deleted": [], "started": []}
    for mod in (failover_mod, scenarios):
        monkeypatch.setattr(mod, "create_laid_out", lambda _ctx, t, a, c: seen["created"].append((t, a, dict(c))))
        monkeypatch.setattr(mod, "delete_topics_retrying", lambda _conf, topics: seen["deleted"].extend(topics))
        monkeypatch.setattr(mod, "start_again", lambda _ctx, host, unit: seen["started"].append((host, unit)))
        monkeypatch.setattr(mod, "elect_preferred_leaders", lambda _conf: "")
    return seen


def ctx(dc, run):
    return Context(data_centre(INVENTORY, dc), {"bootstrap.servers": "x:9093"}, run, 9094, "t-1")


def test_zookeeper_failover_kills_the_controller_broker_and_writes_elsewhere(monkeypatch, faked):
    def produce(_conf, _topic, _rate, log, stop):
        while not stop.is_set():
            for _ in range(20):
                log.on_delivery(None, None)
            time.sleep(0.002)

    # What the brokers' metadata names as controller after the kill: the killed broker 1, then
    # none, then broker 2. The probes wait for metadata naming another controller than broker 1.
    named = [1, -1, 2]

    def first_write(_conf, prefix, made, _timeout):
        assert named == [], f"probes began while the metadata still named {named[0]}"
        made.append(f"{prefix}-0")
        return time.monotonic()

    monkeypatch.setattr(failover_mod, "produce_steadily", produce)
    monkeypatch.setattr(failover_mod, "first_metadata_write", first_write)
    monkeypatch.setattr(failover_mod, "active_controller", lambda *_a: 1)
    monkeypatch.setattr(failover_mod, "zookeeper_controller", lambda _conf: named.pop(0))
    hosts = Hosts()
    figures = failover_mod.failover(ctx("dc1", hosts))
    [(topic, assignment, config)] = faked["created"]
    assert assignment == spread(6, [2, 3], 2) and config == {"min.insync.replicas": "2"}
    assert hosts.commands == [("dc1-kafka1", ["systemctl", "kill", "--signal=SIGKILL", "kafka"])]
    assert faked["started"] == [("dc1-kafka1", "kafka")]
    assert faked["deleted"] == [topic, f"{topic}-probe-0"] and topic == "bench-kvz-failover-zookeeper-t-1"
    assert set(figures) == {"ack_gap_s", "metadata_write_s", "failed_sends"}
    assert 0 <= figures["ack_gap_s"] < 1 and figures["failed_sends"] == 0


def test_kraft_failover_kills_the_quorum_leader_and_uses_both_brokers(monkeypatch, faked):
    monkeypatch.setattr(failover_mod, "active_controller", lambda *_a: 102)
    monkeypatch.setattr(failover_mod, "produce_steadily", lambda *_a: None)
    monkeypatch.setattr(failover_mod, "wait_for", lambda what, *_a: (_ for _ in ()).throw(TimeoutError(what)))
    hosts = Hosts()
    with pytest.raises(TimeoutError, match="acks before the kill"):
        failover_mod.failover(ctx("dc2", hosts))
    assert faked["created"][0][1] == spread(6, [1, 2], 2)
    # Nothing was killed, so nothing is started; the topic goes all the same.
    assert hosts.commands == [] and faked["started"] == [] and faked["deleted"] == [faked["created"][0][0]]


def shutdown_fakes(monkeypatch, leader):
    monkeypatch.setattr(scenarios, "admin_from_conf", lambda _conf: object())
    monkeypatch.setattr(scenarios, "leaders", lambda _admin, topics: {topics[0]: [leader] * 300})
    monkeypatch.setattr(scenarios, "wait_brokers_healthy", lambda _conf, _dc: None)


def test_shutdown_stops_a_broker_leading_every_partition_then_starts_it(monkeypatch, faked):
    shutdown_fakes(monkeypatch, leader=1)
    hosts = Hosts()
    figures = scenarios.shutdown(ctx("dc2", hosts))
    [(topic, assignment, _)] = faked["created"]
    assert assignment == led_by(300, 1, [1, 2])
    assert [argv for _, argv in hosts.commands] == [
        ["systemctl", "stop", "kafka"],
        ["systemctl", "show", "--property=Result", "--value", "kafka"],
        ["systemctl", "start", "kafka"],
    ]
    assert {host for host, _ in hosts.commands} == {"dc2-kafka1"}
    assert faked["started"] == [] and faked["deleted"] == [topic] and set(figures) == {"stop_s", "restart_s"}


def test_zookeeper_shutdown_spares_the_controller(monkeypatch, faked):
    shutdown_fakes(monkeypatch, leader=2)
    monkeypatch.setattr(scenarios, "zookeeper_controller", lambda _conf: 1)
    hosts = Hosts()
    scenarios.shutdown(ctx("dc1", hosts))
    assert faked["created"][0][1] == led_by(300, 2, [1, 2, 3])
    assert {host for host, _ in hosts.commands} == {"dc1-kafka2"}


def test_a_stop_that_timed_out_fails_the_run_and_starts_the_broker_again(monkeypatch, faked):
    shutdown_fakes(monkeypatch, leader=1)
    with pytest.raises(RuntimeError, match="not a clean controlled shutdown"):
        scenarios.shutdown(ctx("dc2", Hosts(result="timeout")))
    assert faked["started"] == [("dc2-kafka1", "kafka")] and len(faked["deleted"]) == 1


def test_cli_refuses_a_data_centre_of_the_other_mode(tmp_path, capsys):
    import yaml

    (tmp_path / "hosts.yml").write_text(yaml.safe_dump(INVENTORY))
    (tmp_path / "client.conf").write_text("bootstrap.servers=x:9093\n")
    argv = ["partitions", "--inventory", str(tmp_path / "hosts.yml"), "--client-conf", str(tmp_path / "client.conf")]
    assert scenarios.main([*argv, "--dc", "dc1", "--mode", "kraft"]) == 2
    assert "dc1 runs zookeeper mode, not kraft" in capsys.readouterr().err
