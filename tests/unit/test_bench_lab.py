"""make bench's lab wiring: the BENCH listener in server.properties, its bootstrap list, the
anonymous principal's ACLs, playbook timings and the extra report sections."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from kafkakit.acls import AclKey
from kafkakit.bench import lab
from kafkakit.inventory import HostRecord, build_inventory
from tests.unit.bench_fakes import FIXTURES
from tests.unit.bench_template import ROOT, render

# --- server.properties ----------------------------------------------------------------------


def test_template_with_port_0_renders_exactly_as_before_the_bench_listener():
    # The fixture is the render of the template as it was before kafka_bench_plaintext_port.
    assert render() == (FIXTURES / "server.properties.port0").read_text()
    assert render(kafka_bench_plaintext_port="0") == render()


def test_template_with_a_port_adds_the_bench_plaintext_listener_and_nothing_else():
    before = render().splitlines()
    after = render(kafka_bench_plaintext_port=9095).splitlines()
    changed = {line.split("=", 1)[0]: line for line in after if line not in before}
    assert changed == {
        "listeners": "listeners=INTERNAL://10.213.7.11:9091,CLIENT://10.213.7.11:9093,BENCH://10.213.7.11:9095",
        "advertised.listeners": (
            "advertised.listeners=INTERNAL://10.213.7.11:9091,CLIENT://10.213.7.11:9093,BENCH://10.213.7.11:9095"
        ),
        "listener.security.protocol.map": "listener.security.protocol.map=INTERNAL:SSL,CLIENT:SASL_SSL,BENCH:PLAINTEXT",
        "# BENCH: a PLAINTEXT listener for `make bench` only (ansible/lab/bench-listener.yml), removed after it.": (
            "# BENCH: a PLAINTEXT listener for `make bench` only (ansible/lab/bench-listener.yml), removed after it."
        ),
    }
    removed = [line.split("=", 1)[0] for line in before if line not in after]
    assert removed == ["listeners", "advertised.listeners", "listener.security.protocol.map"]
    # Inter-broker traffic stays on the mTLS listener.
    assert "inter.broker.listener.name=INTERNAL" in after


def test_the_port_is_a_documented_role_default_of_0():
    defaults = yaml.safe_load((ROOT / "roles/kafka_broker/defaults/main.yml").read_text())
    specs = yaml.safe_load((ROOT / "roles/kafka_broker/meta/argument_specs.yml").read_text())
    spec = specs["argument_specs"]["main"]["options"]["kafka_bench_plaintext_port"]
    assert defaults["kafka_bench_plaintext_port"] == 0
    assert spec["type"] == "int" and spec["default"] == 0 and "make bench" in spec["description"]


# --- endpoints ------------------------------------------------------------------------------


def lab_inventory() -> dict:
    hosts = [
        HostRecord(f"dc1-kafka{i}", "dc1", f"dc1-az{i}", f"10.0.1.{i}", ("kafka_broker",), broker_id=i)
        for i in (1, 2, 3)
    ]
    hosts += [
        HostRecord("dc1-spark-master", "dc1", "dc1-az1", "10.0.1.40", ("spark_master",)),
        HostRecord("dc2-kafka1", "dc2", "dc2-az1", "10.0.2.1", ("kafka_broker", "zookeeper"), broker_id=1),
        HostRecord("dc2-mm2-1", "dc2", "dc2-az1", "10.0.2.5", ("mirrormaker",)),
    ]
    return build_inventory(hosts)


def test_plaintext_bootstrap_is_the_dc_brokers_on_the_bench_port():
    assert lab.plaintext_bootstrap(lab_inventory(), "dc1", 9095) == "10.0.1.1:9095,10.0.1.2:9095,10.0.1.3:9095"
    assert lab.plaintext_bootstrap(lab_inventory(), "dc2", 9096) == "10.0.2.1:9096"


def test_plaintext_bootstrap_refuses_a_dc_without_brokers_and_port_0():
    with pytest.raises(ValueError, match="no kafka_broker"):
        lab.plaintext_bootstrap(lab_inventory(), "dc3", 9095)
    with pytest.raises(ValueError, match="> 0"):
        lab.plaintext_bootstrap(lab_inventory(), "dc1", 0)


def test_cli_reads_the_inventory_file_and_a_properties_key(tmp_path, capsys):
    inv = tmp_path / "hosts.yml"
    inv.write_text(yaml.safe_dump(lab_inventory()))
    props = tmp_path / "client.properties"
    props.write_text("# Ansible managed\nbootstrap.servers=10.0.1.1:9093,10.0.1.2:9093\nsecurity.protocol=SASL_SSL\n")
    assert lab.main(["plaintext-bootstrap", str(inv), "--dc", "dc1", "--port", "9095"]) == 0
    assert lab.main(["property", str(props), "bootstrap.servers"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "10.0.1.1:9095,10.0.1.2:9095,10.0.1.3:9095",
        "10.0.1.1:9093,10.0.1.2:9093",
    ]
    assert lab.main(["property", str(props), "sasl.jaas.config"]) == 1


# --- ACLs -----------------------------------------------------------------------------------


class FakeAclStore:
    def __init__(self, existing: set[AclKey] | None = None) -> None:
        self.bindings = set(existing or ())
        self.created: list[AclKey] = []
        self.deleted: list[AclKey] = []

    def list(self) -> set[AclKey]:
        return set(self.bindings)

    def create(self, keys):
        self.created += keys
        self.bindings |= set(keys)

    def delete(self, keys):
        self.deleted += keys
        self.bindings -= set(keys)


OTHER = AclKey("User:team-a", "topic", "team-a.", "prefixed", "ALL", "ALLOW", "*")


def test_bench_acls_allow_only_the_anonymous_principal_on_bench_prefixes():
    keys = lab.bench_acl_keys()
    assert {k.principal for k in keys} == {"User:ANONYMOUS"}
    assert {k.permission for k in keys} == {"ALLOW"} and {k.pattern_type for k in keys} == {"prefixed"}
    assert {(k.resource_type, k.name) for k in keys} == {
        ("topic", "bench-"),
        ("group", "bench-"),
        ("group", "test-group-"),
    }


def test_acls_are_deleted_exactly_as_created_and_others_are_left_alone():
    keys = lab.bench_acl_keys()
    before = keys[0]  # one binding was already there: not ours to delete
    store = FakeAclStore({OTHER, before})
    with lab.granted(store, keys, say=lambda _m: None) as created:
        assert created == keys[1:]
        assert store.bindings == {OTHER, *keys}
    assert store.deleted == store.created == keys[1:]
    assert store.bindings == {OTHER, before}


def test_acls_are_deleted_when_the_bench_fails():
    store = FakeAclStore({OTHER})
    with pytest.raises(RuntimeError), lab.granted(store, lab.bench_acl_keys(), say=lambda _m: None):
        raise RuntimeError("broker unreachable")
    assert store.deleted == lab.bench_acl_keys()
    assert store.bindings == {OTHER}


# --- timings and MM2 ------------------------------------------------------------------------

RECAP = """PLAY RECAP *********
dc1-kafka1                 : ok=40   changed={a}    unreachable=0    failed=0    skipped=3    rescued=0    ignored=0
dc1-kafka2                 : ok=38   changed={b}    unreachable=0    failed=0    skipped=3    rescued=0    ignored=0
"""


def test_playbooks_are_timed_with_their_recap():
    calls: list[list[str]] = []
    outputs = iter([(0, RECAP.format(a=0, b=0)), (0, RECAP.format(a=1, b=2)), (2, "fatal: boom")])

    def run(argv: list[str]) -> tuple[int, str]:
        calls.append(argv)
        return next(outputs)

    site = ["site.yml", "-e", lab.bench_port_extra_vars(9095, "dc1")]
    [t] = lab.time_playbooks([("no-op `site.yml`", site)], 3, run, say=lambda _m: None)
    assert calls[0][:3] == ["ansible-playbook", "-i", "../inventories/local"] and calls[0][3:] == site
    assert len(t.seconds) == 2 and t.changed == [0, 3] and t.errors == ["run 3: exit 2: fatal: boom"]
    section = lab.render_timings_section([t], cold_lab_seconds=412.0)
    assert "| cold `make lab`" in section and "| 412 |" in section
    assert "not a no-op" in section


def test_site_extra_var_sets_the_port_for_the_bench_dc_only():
    extra = json.loads(lab.bench_port_extra_vars(9095, "dc1"))
    assert extra == {"kafka_bench_plaintext_port": "{{ 9095 if dc == 'dc1' else 0 }}"}


def test_mirror_runs_add_throughput_and_survive_a_failed_run(tmp_path):
    for dc in ("dc1", "dc2"):
        (tmp_path / dc).mkdir()
        (tmp_path / dc / "client.conf").write_text(f"bootstrap.servers={dc}:9093\nsecurity.protocol=SASL_SSL\n")
    seen = []

    def measure(source, target, alias, prefix, rate, seconds):
        seen.append((source["bootstrap.servers"], target["bootstrap.servers"], alias, prefix, rate, seconds))
        if len(seen) == 2:
            raise RuntimeError("no mirrored topic")
        return {"received": 30000.0, "span_s": 40.0, "p50_ms": 800.0, "p95_ms": 900.0, "p99_ms": 950.0}

    runs = lab.mirror_runs(
        tmp_path,
        source="dc1",
        target="dc2",
        prefix="mirror-bench-",
        rate=1000,
        seconds=30,
        runs=2,
        measure=measure,
        say=lambda _m: None,
    )
    assert seen[0] == ("dc1:9093", "dc2:9093", "dc1", "mirror-bench-", 1000, 30)
    assert runs[0]["records_per_sec"] == 750.0 and "error" in runs[1]
    section = lab.render_mirror_section(runs, source="dc1", target="dc2", rate=1000, seconds=30)
    assert "1 of 2 runs succeeded" in section and "| throughput, records/s mirrored | 750 |" in section


# --- the playbook ---------------------------------------------------------------------------


def test_bench_listener_playbook_targets_dc1_brokers_with_the_role():
    [play] = yaml.safe_load((ROOT / "ansible/lab/bench-listener.yml").read_text())
    assert play["hosts"] == "kafka_broker:&dc1"
    [role] = play["roles"]
    assert role["role"] == "kafka_broker" and "kafka_bench_plaintext_port" in role["vars"]


@pytest.mark.skipif(not shutil.which("yamllint", path=str(Path(sys.executable).parent)), reason="no yamllint")
def test_bench_listener_playbook_is_lint_clean():
    bindir = Path(sys.executable).parent
    subprocess.run([bindir / "yamllint", "-s", "ansible/lab/bench-listener.yml"], cwd=ROOT, check=True)
    env = {
        **os.environ,
        "ANSIBLE_CONFIG": "ansible.cfg",
        "PYTHONPATH": str(ROOT / "src"),
        "PYTHONWARNINGS": "ignore::DeprecationWarning",
    }
    done = subprocess.run(
        [bindir / "ansible-lint", "--profile", "production", "-q", "lab/bench-listener.yml"],
        cwd=ROOT / "ansible",
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
