"""The leader-failover case's spare broker (kafkakit.bench.spare): which hosts may be one, the
steps that add it and those that take it away, and what stops the removal before it changes
anything. Playbooks, hosts and cluster faked."""

from pathlib import Path

import pytest
import yaml

from kafkakit.bench import spare
from kafkakit.bench.nodes import DataCentre

ROOT = Path(__file__).resolve().parents[3]
LAB = yaml.safe_load((ROOT / "ansible/lab/lab-config.yml").read_text())
IPS = {"dc2-kafka1": "10.0.2.1", "dc2-kafka2": "10.0.2.2", "dc2-kafka3": "10.0.2.3"}
IPS |= {f"dc2-controller{i}": f"10.0.2.3{i}" for i in (1, 2, 3)}
CONTROLLERS = {101: "dc2-controller1", 102: "dc2-controller2", 103: "dc2-controller3"}
WITH = DataCentre("dc2", {1: "dc2-kafka1", 2: "dc2-kafka2", 3: "dc2-kafka3"}, CONTROLLERS, IPS)
WITHOUT = DataCentre("dc2", {1: "dc2-kafka1", 2: "dc2-kafka2"}, CONTROLLERS, IPS)


def options(tmp_path, lab_vars=None):
    (tmp_path / "lab-image.tag").write_text("kafkakit-lab:abc123\n")
    return spare.Options(
        hosts=("dc2-kafka3",), dc="dc2", client_conf=tmp_path / "client.conf", inventory=tmp_path / "hosts.yml",
        lab_config=ROOT / "ansible/lab/lab-config.yml", image_tag_file=tmp_path / "lab-image.tag",
        ansible_dir=ROOT / "ansible", ansible_playbook="ansible-playbook", host_exec="podman exec",
        controller_port=9094, keep_prefix="bench-lf-", lab_vars=lab_vars,
    )  # fmt: skip


class Hosts:
    """A HostRun recording every command; the unregister tool fails on the hosts in `refusing`."""

    def __init__(self, refusing=(), message="exit 1: TimeoutException"):
        self.commands: list[tuple[str, list[str]]] = []
        self.refusing, self.message = set(refusing), message

    def __call__(self, host, argv):
        self.commands.append((host, argv))
        if spare.CLUSTER_TOOL in argv and host in self.refusing:
            raise RuntimeError(self.message)
        return ""


@pytest.fixture
def lab(monkeypatch):
    """Playbooks, the inventory as they leave it, and the cluster, faked."""
    seen = {"playbooks": [], "deleted": [], "healthy": [], "held": {}, "dc": WITHOUT}

    def run_playbook(_opts, *argv):
        seen["playbooks"].append(list(argv))
        if argv[0] == "lab/lab-up.yml":
            seen["dc"] = WITH if '"dc2-kafka3"' in argv[-1] else WITHOUT

    def delete(_conf, topics):
        seen["deleted"].extend(topics)
        seen["held"] = {}

    monkeypatch.setattr(spare, "run_playbook", run_playbook)
    monkeypatch.setattr(spare, "current", lambda _opts: seen["dc"])
    monkeypatch.setattr(spare, "replicas_on", lambda _conf, _ids: dict(seen["held"]))
    monkeypatch.setattr(spare, "delete_topics_retrying", delete)
    monkeypatch.setattr(spare, "wait_brokers_healthy", lambda _conf, dc: seen["healthy"].append(sorted(dc.brokers)))
    return seen


def test_a_spare_is_a_broker_of_lab_spare_hosts_in_the_data_centre():
    assert spare.spare_ids(LAB, ["dc2-kafka3"], "dc2") == {"dc2-kafka3": 3}
    for host, dc in (("dc2-controller4", "dc2"), ("dc1-kafka4", "dc2"), ("dc2-kafka9", "dc2")):
        with pytest.raises(
            ValueError, match=r"is not a spare broker of dc2 in lab_spare_hosts; those are \['dc2-kafka3'\]"
        ):
            spare.spare_ids(LAB, [host], dc)


def test_up_starts_the_host_deploys_only_it_with_the_labs_variables_and_waits_for_health(lab, tmp_path):
    spare.up(options(tmp_path, lab_vars=Path("/lab/fast.yml")), {})
    assert lab["playbooks"] == [
        ["lab/lab-up.yml", "-e", "lab_image=kafkakit-lab:abc123", "-e", '{"lab_spares": ["dc2-kafka3"]}'],
        ["site.yml", "--limit", "dc2-kafka3,localhost", "-e", "@/lab/fast.yml"],
    ]
    assert lab["healthy"] == [[1, 2, 3]]


def test_up_without_lab_variables_and_an_inventory_that_missed_it(lab, tmp_path, monkeypatch):
    monkeypatch.setattr(spare, "current", lambda _opts: WITHOUT)
    with pytest.raises(RuntimeError, match=r"does not name \['dc2-kafka3'\] as brokers of dc2"):
        spare.up(options(tmp_path), {})
    assert lab["playbooks"][1] == ["site.yml", "--limit", "dc2-kafka3,localhost"] and lab["healthy"] == []


def test_down_deletes_the_cases_topics_stops_unregisters_removes_and_waits(lab, tmp_path):
    lab["dc"], lab["held"] = WITH, {"bench-lf-kraft-t-0": [0, 1, 2]}
    hosts = Hosts(refusing={"dc2-controller1"})
    spare.down(options(tmp_path), {}, {"dc2-kafka3": 3}, hosts)
    assert lab["deleted"] == ["bench-lf-kraft-t-0"]
    stop, first, second = hosts.commands
    assert stop == ("dc2-kafka3", ["systemctl", "stop", "kafka"])
    # The first controller fails; the second does it, through its own CONTROLLER listener.
    assert first[0] == "dc2-controller1" and second[0] == "dc2-controller2"
    assert second[1] == [
        "/usr/local/bin/kafkakit-run", spare.CLUSTER_TOOL, "unregister", "--bootstrap-controller", "10.0.2.32:9094",
        "--command-config", "/etc/kafka/controller-client.properties", "--id", "3",
    ]  # fmt: skip
    assert lab["playbooks"] == [["lab/lab-up.yml", "-e", "lab_image=kafkakit-lab:abc123", "-e", '{"lab_spares": []}']]
    assert lab["healthy"] == [[1, 2]]


def test_down_refuses_a_spare_holding_another_topic_and_changes_nothing(lab, tmp_path):
    lab["dc"], lab["held"] = WITH, {"bench-lf-kraft-t-0": [0], "orders": [3]}
    hosts = Hosts()
    with pytest.raises(spare.Refused, match=r"dc2-kafka3 hold\(s\) replicas of \{'orders': \[3\]\}"):
        spare.down(options(tmp_path), {}, {"dc2-kafka3": 3}, hosts)
    assert hosts.commands == [] and lab["playbooks"] == [] and lab["deleted"] == []


def test_down_again_after_the_host_went_and_the_broker_is_no_longer_registered(lab, tmp_path):
    hosts = Hosts(refusing=set(CONTROLLERS.values()), message="exit 1: BrokerIdNotRegisteredException: not registered")
    spare.down(options(tmp_path), {}, {"dc2-kafka3": 3}, hosts)
    assert [argv[2] for _, argv in hosts.commands] == ["unregister"]  # no stop: the host is gone
    assert len(lab["playbooks"]) == 1 and lab["healthy"] == [[1, 2]]


def test_down_stops_before_removing_when_no_controller_unregisters_it(lab, tmp_path):
    lab["dc"] = WITH
    hosts = Hosts(refusing=set(CONTROLLERS.values()))
    with pytest.raises(RuntimeError, match="broker 3 could not be unregistered from dc2"):
        spare.down(options(tmp_path), {}, {"dc2-kafka3": 3}, hosts)
    assert lab["playbooks"] == []  # the stopped spare stays, for another run of down


def test_cli_says_why_it_refused(tmp_path, monkeypatch, capsys):
    (tmp_path / "client.conf").write_text("bootstrap.servers=x:9093\n")
    monkeypatch.setattr(spare, "down", lambda *_a: (_ for _ in ()).throw(spare.Refused("held: orders")))
    argv = ["down", "dc2-kafka3", "--dc", "dc2", "--client-conf", str(tmp_path / "client.conf")]
    assert spare.main([*argv, "--lab-config", str(ROOT / "ansible/lab/lab-config.yml")]) == 1
    assert "spare down: held: orders" in capsys.readouterr().err
