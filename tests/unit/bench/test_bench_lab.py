"""make bench's lab wiring: the BENCH listener as a per-broker dynamic overlay (none of it in the
broker role or server.properties), its bootstrap list, the anonymous principal's ACLs, playbook
timings and the extra report sections."""

from __future__ import annotations

import argparse
from concurrent.futures import Future
from types import SimpleNamespace

import jinja2
import pytest
import yaml
from confluent_kafka import KafkaException
from confluent_kafka.admin import AlterConfigOpType

from kafkakit.bench import __main__ as bench_main
from kafkakit.bench import lab
from kafkakit.cluster import listeners as broker_listeners
from kafkakit.cluster.acls import AclKey
from kafkakit.cluster.listeners import ListenerError, overlay
from kafkakit.rules.inventory import HostRecord, build_inventory
from tests.unit.support.bench_fakes import FIXTURES
from tests.unit.support.bench_template import ROOT, render

BENCH = ("BENCH", "PLAINTEXT", "10.213.7.11:9095")

# --- the production role knows nothing of the bench -----------------------------------------


def test_the_broker_template_renders_the_deployed_configuration_without_a_plaintext_listener():
    # The fixture is the render of the template before the bench existed: what every lab runs.
    rendered = render()
    assert rendered == (FIXTURES / "server.properties.dc1-kafka1").read_text()
    settings = [line for line in rendered.splitlines() if line and not line.startswith("#")]
    assert [line for line in settings if "BENCH" in line or "PLAINTEXT" in line] == []


def test_no_bench_variable_or_block_in_any_role():
    mentions = [
        str(path.relative_to(ROOT))
        for path in sorted((ROOT / "roles").rglob("*"))
        if path.is_file() and path.suffix != ".md" and "bench" in path.read_text(errors="replace").lower()
    ]
    assert mentions == []
    assert "kafka_bench" not in (ROOT / "docs/variables.md").read_text()


# --- the overlay: per-broker dynamic listener settings --------------------------------------


def static_listeners() -> dict[str, str]:
    """The three settings as the broker role's server.properties gives them."""
    props = dict(line.split("=", 1) for line in render().splitlines() if "=" in line and not line.startswith("#"))
    return {key: props[key] for key in broker_listeners.KEYS}


def done(value: object = None, error: Exception | None = None) -> Future:
    future: Future = Future()
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(value)
    return future


class FakeBroker:
    """One broker's listener settings behind confluent-kafka's admin calls, with Kafka's rules:
    a dynamic value wins over server.properties; a change is checked as a whole (every advertised
    listener is a listener, every listener has a protocol, INTERNAL stays advertised, an existing
    listener keeps its protocol) and shows in describe only `lag` describes after the request."""

    def __init__(
        self, static: dict[str, str] | None = None, lag: int = 0, refuse: str = "", torn: bool = False
    ) -> None:
        self.static = dict(static or static_listeners())
        self.dynamic: dict[str, str] = {}
        self.pending: list[tuple[int, dict[str, str]]] = []
        self.lag, self.refuse = lag, refuse
        # torn: the describe that first sees a change reads the new sources with the old values,
        # as a ZooKeeper-mode broker answers while it applies the change.
        self.torn = torn
        self.alters: list[dict[str, str | None]] = []

    def effective(self, dynamic: dict[str, str]) -> dict[str, str]:
        return {**self.static, **dynamic}

    def describe_configs(self, resources, request_timeout=None):
        [resource] = resources
        assert resource.name == "1"
        self.pending = [(n - 1, d) for n, d in self.pending]
        values = self.effective(self.dynamic)
        for _, applied in [p for p in self.pending if p[0] < 0]:
            self.dynamic = applied
        self.pending = [p for p in self.pending if p[0] >= 0]
        if not self.torn or values == self.effective(self.dynamic):
            values = self.effective(self.dynamic)
        entries = {
            key: SimpleNamespace(value=value, source=2 if key in self.dynamic else 4) for key, value in values.items()
        }
        entries["num.io.threads"] = SimpleNamespace(value="8", source=5)
        return {resource: done(entries)}

    def incremental_alter_configs(self, resources, request_timeout=None):
        [resource] = resources
        ops = {
            e.name: (e.value if e.incremental_operation == AlterConfigOpType.SET else None)
            for e in resource.incremental_configs
        }
        self.alters.append(ops)
        if self.refuse:
            return {resource: done(error=KafkaException(self.refuse))}
        dynamic = {k: v for k, v in {**self.dynamic, **ops}.items() if v is not None}
        new, old = self.effective(dynamic), self.effective(self.dynamic)

        def names(key: str, conf: dict[str, str]) -> dict[str, str]:
            return {i.split(":", 1)[0]: i for i in conf[key].split(",")}

        protocols = {n: i.split(":", 1)[1] for n, i in names("listener.security.protocol.map", new).items()}
        old_protocols = {n: i.split(":", 1)[1] for n, i in names("listener.security.protocol.map", old).items()}
        problems = [
            not set(names("advertised.listeners", new)) <= set(names("listeners", new)),
            not set(names("listeners", new)) <= set(protocols),
            "INTERNAL" not in names("advertised.listeners", new),
            any(protocols[n] != old_protocols[n] for n in set(names("listeners", old)) & set(names("listeners", new))),
        ]
        if any(problems):
            return {resource: done(error=KafkaException(f"invalid listener settings {new}"))}
        self.pending.append((self.lag, dynamic))
        return {resource: done(None)}


def test_on_adds_the_bench_plaintext_listener_and_keeps_the_deployed_ones():
    broker = FakeBroker()
    outcome = overlay(broker, 1, *BENCH, present=True)
    assert outcome.changed and len(broker.alters) == 1
    assert outcome.after == {
        "listeners": "INTERNAL://10.213.7.11:9091,CLIENT://10.213.7.11:9093,BENCH://10.213.7.11:9095",
        "advertised.listeners": "INTERNAL://10.213.7.11:9091,CLIENT://10.213.7.11:9093,BENCH://10.213.7.11:9095",
        "listener.security.protocol.map": "INTERNAL:SSL,CLIENT:SASL_SSL,BENCH:PLAINTEXT",
    }
    # All three in one request (Kafka checks them together), as dynamic per-broker values.
    assert set(broker.alters[0]) == set(broker_listeners.KEYS) == set(broker.dynamic)
    assert outcome.before == static_listeners()


def test_on_twice_changes_nothing_and_off_returns_exactly_to_server_properties():
    broker = FakeBroker()
    overlay(broker, 1, *BENCH, present=True)
    again = overlay(broker, 1, *BENCH, present=True)
    assert not again.changed and len(broker.alters) == 1
    off = overlay(broker, 1, *BENCH, present=False)
    assert off.changed and broker.alters[-1] == dict.fromkeys(broker_listeners.KEYS)
    assert broker.dynamic == {} and off.after == static_listeners()
    assert not overlay(broker, 1, *BENCH, present=False).changed and len(broker.alters) == 2


def test_on_with_another_port_moves_the_listener():
    broker = FakeBroker()
    overlay(broker, 1, *BENCH, present=True)
    moved = overlay(broker, 1, "BENCH", "PLAINTEXT", "10.213.7.11:9096", present=True)
    assert moved.changed and moved.after["listeners"].endswith(",BENCH://10.213.7.11:9096")
    assert moved.after["listeners"].count("BENCH") == 1


def test_check_mode_reports_the_change_and_sends_nothing():
    broker = FakeBroker()
    outcome = overlay(broker, 1, *BENCH, present=True, check_mode=True)
    assert outcome.changed and broker.alters == [] and broker.dynamic == {}
    assert outcome.after["listener.security.protocol.map"].endswith(",BENCH:PLAINTEXT")


def test_the_change_is_awaited_until_the_broker_reports_it():
    broker = FakeBroker(lag=2)
    outcome = overlay(broker, 1, *BENCH, present=True, interval=0)
    assert "BENCH://10.213.7.11:9095" in outcome.after["listeners"]
    off = overlay(broker, 1, *BENCH, present=False, interval=0)
    assert off.after == static_listeners()


def test_off_waits_while_the_broker_reports_its_old_listeners_with_the_new_sources():
    broker = FakeBroker(lag=1, torn=True)
    overlay(broker, 1, *BENCH, present=True, interval=0)
    # The describe after the delete shows BENCH with a static source: a change being applied, not
    # a listener of server.properties.
    off = overlay(broker, 1, *BENCH, present=False, interval=0)
    assert off.changed and broker.dynamic == {} and off.after == static_listeners()


def test_a_change_the_broker_never_applies_fails_with_the_broker_named():
    broker = FakeBroker(lag=1000)
    with pytest.raises(ListenerError, match="broker 1: listener BENCH missing"):
        overlay(broker, 1, *BENCH, present=True, settle=0.05, interval=0.01)


def test_kafkas_refusal_is_the_error():
    raft = "Advertised listeners cannot be altered when using a Raft-based metadata quorum."
    with pytest.raises(ListenerError, match="broker 1: .*Raft-based"):
        overlay(FakeBroker(refuse=raft), 1, *BENCH, present=True)


def test_off_refuses_a_bench_listener_of_server_properties():
    extra = {"listener.security.protocol.map": ",BENCH:PLAINTEXT"}
    static = {key: value + extra.get(key, ",BENCH://10.213.7.11:9095") for key, value in static_listeners().items()}
    with pytest.raises(ListenerError, match="server.properties"):
        overlay(FakeBroker(static), 1, *BENCH, present=False)


SERVER_LINES = [
    "listeners=INTERNAL://10.213.7.11:9091,CLIENT://10.213.7.11:9093",
    "advertised.listeners=INTERNAL://10.213.7.11:9091,CLIENT://10.213.7.11:9093",
]


def test_static_names_are_the_listener_names_of_server_properties():
    assert broker_listeners.static_names(SERVER_LINES) == {"INTERNAL", "CLIENT"}
    assert broker_listeners.static_names([*SERVER_LINES, "listener.security.protocol.map=BENCH:PLAINTEXT"]) == {
        "INTERNAL",
        "CLIENT",
    }
    assert "BENCH" in broker_listeners.static_names(["listeners=CLIENT://a:1, bench://a:9095"])


def test_off_with_server_properties_deletes_all_three_keys_whatever_the_sources_say():
    # Every key reported static (a describe read while the broker applied an earlier change),
    # while server.properties has no BENCH: an overlay, so all three keys are deleted.
    with_bench = {key: value + ",BENCH://10.213.7.11:9095" for key, value in static_listeners().items()}
    with_bench["listener.security.protocol.map"] = (
        static_listeners()["listener.security.protocol.map"] + ",BENCH:PLAINTEXT"
    )
    current = broker_listeners.BrokerListeners(with_bench, frozenset())
    static = broker_listeners.static_names(SERVER_LINES)
    assert broker_listeners.plan(current, "BENCH", "PLAINTEXT", "", False, static) == dict.fromkeys(
        broker_listeners.KEYS
    )
    # Positive control: without server.properties the sources decide, and refuse.
    with pytest.raises(ListenerError, match="server.properties"):
        broker_listeners.plan(current, "BENCH", "PLAINTEXT", "", False)
    # Nothing to do when BENCH is not there.
    assert (
        broker_listeners.plan(
            broker_listeners.BrokerListeners(static_listeners()), "BENCH", "PLAINTEXT", "", False, static
        )
        == {}
    )


def test_off_refuses_a_bench_listener_that_server_properties_holds():
    extra = {"listener.security.protocol.map": ",BENCH:PLAINTEXT"}
    static = {key: value + extra.get(key, ",BENCH://10.213.7.11:9095") for key, value in static_listeners().items()}
    lines = [f"{key}={static[key]}" for key in ("listeners", "advertised.listeners")]
    broker = FakeBroker(static)
    with pytest.raises(ListenerError, match="in the broker's server.properties"):
        overlay(broker, 1, *BENCH, present=False, static=broker_listeners.static_names(lines))
    assert broker.alters == []


def test_off_with_server_properties_ends_on_server_properties_after_a_torn_read():
    broker = FakeBroker(lag=1, torn=True)
    static = broker_listeners.static_names(SERVER_LINES)
    overlay(broker, 1, *BENCH, present=True, interval=0, static=static)
    off = overlay(broker, 1, *BENCH, present=False, interval=0, static=static)
    assert off.changed and broker.dynamic == {} and off.after == static_listeners()
    assert not overlay(broker, 1, *BENCH, present=False, interval=0, static=static).changed


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

    site = ["site.yml"]
    [t] = lab.time_playbooks([("no-op `site.yml`", site)], 3, run, say=lambda _m: None)
    assert calls[0][:3] == ["ansible-playbook", "-i", "../inventories/local"] and calls[0][3:] == site
    assert len(t.seconds) == 2 and t.changed == [0, 3] and t.errors == ["run 3: exit 2: fatal: boom"]
    section = lab.render_timings_section([t], cold_lab_seconds=412.0)
    assert "| cold `make lab`" in section and "| 412 |" in section
    assert "not a no-op" in section


def test_the_timed_playbooks_exist_and_site_yml_gets_no_bench_variables(monkeypatch):
    # The BENCH listener is a dynamic overlay site.yml never sees: its no-op run needs no -e.
    seen = []
    monkeypatch.setattr(lab, "time_playbooks", lambda playbooks, *_a, **_k: seen.extend(playbooks) or [])
    args = argparse.Namespace(
        mm2_runs=0,
        timing_runs=1,
        dc="dc1",
        ansible_dir=ROOT / "ansible",
        ansible_playbook="ansible-playbook",
        cold_lab_seconds=None,
        lab_vars=None,
    )
    bench_main.lab_sections(args, say=lambda _m: None)
    assert seen == [
        ("no-op `site.yml`", ["site.yml"]),
        ("`ops/rolling-restart.yml -e roll_dc=dc1`", ["ops/rolling-restart.yml", "-e", "roll_dc=dc1"]),
    ]
    assert all((ROOT / "ansible" / argv[0]).is_file() for _, argv in seen)
    assert "--bench-port" not in bench_main._parser().format_help()
    # A lab deployed with extra variables (make's LAB_VARS) is timed with them: still a no-op.
    seen.clear()
    bench_main.lab_sections(argparse.Namespace(**{**vars(args), "lab_vars": ROOT / "fast.yml"}), say=print)
    assert [argv for _, argv in seen] == [
        ["site.yml", "-e", f"@{ROOT / 'fast.yml'}"],
        ["ops/rolling-restart.yml", "-e", "roll_dc=dc1", "-e", f"@{ROOT / 'fast.yml'}"],
    ]


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

PLAYBOOK = ROOT / "ansible/lab/bench-listener.yml"


def test_bench_listener_playbook_sets_the_overlay_from_the_controller_without_the_broker_role():
    [play] = yaml.safe_load(PLAYBOOK.read_text())
    assert play["hosts"] == "kafka_broker:&{{ bench_dc | default('dc1') }}"
    # Not the broker role: only kafka_common's defaults (bootstrap list, admin client settings).
    assert play["roles"] == ["kafka_common"]
    assert [key for task in play["tasks"] for key in task if key.endswith(("include_role", "import_role"))] == []
    [step, proof] = [task for task in play["tasks"] if "kafka_broker_listener" in task]
    args = step["kafka_broker_listener"]
    assert step["delegate_to"] == "localhost"
    assert (args["name"], args["protocol"], args["broker_id"]) == ("BENCH", "PLAINTEXT", "{{ broker_id }}")
    assert args["address"] == "{{ private_ip }}:{{ bench_port }}"
    state = jinja2.Template(args["state"])
    assert [state.render(bench_listener=s) for s in ("on", "off")] == ["present", "absent"]
    # Then it waits for the port to open (on) or close (off).
    [wait] = [task for task in play["tasks"] if "ansible.builtin.wait_for" in task]
    state = jinja2.Template(wait["ansible.builtin.wait_for"]["state"])
    assert [state.render(bench_listener=s) for s in ("on", "off")] == ["started", "stopped"]
    # Off ends by reading every broker again: BENCH there in any form fails the bench.
    assert proof["check_mode"] is True and proof["kafka_broker_listener"]["state"] == "absent"
    assert (proof["when"], proof["delegate_to"]) == ("bench_listener == 'off'", "localhost")
    assert proof["kafka_broker_listener"]["broker_id"] == "{{ broker_id }}"
    failed = jinja2.Environment().compile_expression(proof["failed_when"])
    gone = {"changed": False, "listeners": static_listeners(), "static": ["CLIENT", "INTERNAL"]}
    assert failed(bench_listener_gone=gone) is False
    assert failed(bench_listener_gone={**gone, "changed": True}) is True
    with_bench = {**static_listeners(), "listeners": static_listeners()["listeners"] + ",BENCH://10.213.7.11:9095"}
    assert failed(bench_listener_gone={**gone, "listeners": with_bench}) is True
    assert failed(bench_listener_gone={**gone, "static": ["BENCH", "CLIENT", "INTERNAL"]}) is True
    assert failed(bench_listener_gone={"failed": True, "msg": "listener BENCH is in the broker's server.properties"})
    # Both module calls get server.properties' listener lines, read on the broker (no other line).
    [read] = [task for task in play["tasks"] if "ansible.builtin.command" in task]
    assert read["ansible.builtin.command"].startswith("grep -E '^(advertised[.])?listeners=' ")
    assert read["register"] == "bench_server_listeners" and read["check_mode"] is False
    assert play["tasks"].index(read) < play["tasks"].index(step)
    for task in (step, proof):
        assert task["kafka_broker_listener"]["server_properties"] == "{{ bench_server_listeners.stdout_lines }}"
