"""kraft-vs-zk: the cases in the plan, their selection, and their runs through run_plan."""

import pytest

from kafkakit.bench.__main__ import main
from kafkakit.bench.modes import ModeTarget, ScenarioSettings, case_name, mode_cases
from kafkakit.bench.plan import Endpoint, build_plan, comparisons, select
from kafkakit.bench.runner import run_plan
from tests.unit.support.bench_fakes import FakeRunner

ZK = ModeTarget("zookeeper", "dc1", "/lab/dc1/client.conf", "/lab/dc1/client.properties", "10.0.0.11:9093")
KRAFT = ModeTarget("kraft", "dc2", "/lab/dc2/client.conf", "/lab/dc2/client.properties", "10.0.0.21:9093")
SETTINGS = ScenarioSettings(inventory="/lab/hosts.yml", python="python3")
CASES = mode_cases([KRAFT, ZK], settings=SETTINGS)
SASL = Endpoint("SASL_SSL", "b1:9093", "/etc/kafka/client.properties")


def by_name(cases):
    return {c.name: c for c in cases}


def arg(command, option):
    return command[command.index(option) + 1]


def test_one_case_per_kind_and_mode_zookeeper_first():
    assert [c.name for c in CASES] == [
        f"kraft-vs-zk/{kind}/{mode}"
        for kind in ("partitions", "failover", "shutdown", "throughput")
        for mode in ("zookeeper", "kraft")
    ]
    assert [c.mode for c in CASES] == ["zookeeper", "kraft"] * 4


def test_scenario_commands_name_the_data_centre_and_the_run():
    case = by_name(CASES)["kraft-vs-zk/failover/kraft"]
    assert case.tool == "failover"
    cmd = case.command(0, "20260101-2")
    assert cmd[:4] == ["python3", "-m", "kafkakit.bench.scenarios", "failover"]
    assert arg(cmd, "--dc") == "dc2" and arg(cmd, "--mode") == "kraft"
    assert arg(cmd, "--client-conf") == KRAFT.client_conf and arg(cmd, "--inventory") == "/lab/hosts.yml"
    assert arg(cmd, "--host-exec") == "podman exec" and arg(cmd, "--tag") == "20260101-2"


def normalised(case, target):
    """The command line with what names the data centre replaced."""
    out = []
    for a in case.command(9, "r"):
        for old, new in ((target.bootstrap, "B"), (target.client_properties, "P"), (target.mode, "M")):
            a = a.replace(old, new)
        out.append(a)
    return out


def test_throughput_cases_are_alike_but_for_the_data_centre():
    cases = by_name(CASES)
    zk, kraft = cases["kraft-vs-zk/throughput/zookeeper"], cases["kraft-vs-zk/throughput/kraft"]
    for case, target in ((zk, ZK), (kraft, KRAFT)):
        assert case.tool == "producer" and case.record_size == 1024
        cmd = case.command(5000, "r1")
        assert arg(cmd, "--topic") == f"bench-kvz-throughput-{target.mode}-r1"
        assert {f"bootstrap.servers={target.bootstrap}", "acks=all", "linger.ms=20"} <= set(cmd)
        assert cmd[-2:] == ["--producer.config", target.client_properties]
        (create,), (delete,) = case.before("r1"), case.after("r1")
        assert arg(create, "--topic") == arg(delete, "--topic") == arg(cmd, "--topic")
        assert arg(create, "--replication") == "2" and arg(create, "--partitions") == "6"
        assert [create[i + 1] for i, a in enumerate(create) if a == "--config"][0] == "min.insync.replicas=2"
        assert "--delete" in delete and arg(delete, "--command-config") == target.client_properties
    assert normalised(zk, ZK) == normalised(kraft, KRAFT)


def test_needs_one_data_centre_of_each_mode():
    with pytest.raises(ValueError, match="one data centre of each mode"):
        mode_cases([ZK, ZK])


def test_a_kind_selects_both_modes_and_the_prefix_selects_all():
    cases = build_plan([SASL]) + CASES
    assert [c.name for c in select(cases, ["kraft-vs-zk/partitions"])] == [
        "kraft-vs-zk/partitions/zookeeper",
        "kraft-vs-zk/partitions/kraft",
    ]
    assert select(cases, ["kraft-vs-zk"]) == CASES
    assert [c.name for c in select(cases, ["kraft-vs-zk/*/kraft"])] == [c.name for c in CASES if c.mode == "kraft"]
    # The path rule does not widen ordinary names.
    assert [c.name for c in select(cases, ["latency-sasl_ssl-100"])] == ["latency-sasl_ssl-100"]


def test_no_client_ratio_pairs_a_mode_case():
    cases = build_plan([SASL]) + CASES
    names = {c.name for c in CASES}
    assert not [c for c in comparisons(cases) if {c.numerator, c.denominator} & names]


def test_scenarios_run_without_warm_up_interleaved_zookeeper_then_kraft():
    picked = [c for c in CASES if c.tool == "partitions"]
    fake = FakeRunner(
        scenarios={
            ("partitions", "zookeeper"): [{"create_s": s, "delete_s": 4.0} for s in (20.0, 12.0, 16.0)],
            ("partitions", "kraft"): [{"create_s": s, "delete_s": 2.0} for s in (3.0, 2.0, 4.0)],
        }
    )
    results = run_plan(picked, fake, repetitions=3, records=1000, tag="t")
    assert len(fake.calls) == 6  # no set-up, no warm-up, no teardown: the measured runs only
    assert [(m.case, m.repetition) for m in results] == [(c.name, rep) for rep in range(3) for c in picked]
    assert [arg(c, "--tag") for c in fake.calls] == ["t-0", "t-0", "t-1", "t-1", "t-2", "t-2"]
    zk = [m.metrics["create_s"] for m in results if m.case.endswith("zookeeper")]
    assert zk == [20.0, 12.0, 16.0] and all(m.ok and m.records == 0 for m in results)


def test_a_failed_scenario_run_is_a_failed_measurement():
    picked = [c for c in CASES if c.tool == "shutdown"]
    results = run_plan(picked, FakeRunner(fail_on="--mode kraft"), repetitions=1, records=10, tag="t")
    assert [m.ok for m in results] == [True, False]


def test_throughput_pair_sends_as_many_records_as_each_other_not_as_the_client_cases():
    from kafkakit.bench.plan import make_case

    client = make_case("producer", SASL)
    zk, kraft = (c for c in CASES if c.name.startswith("kraft-vs-zk/throughput/"))
    fake = FakeRunner(rates={client.topic: [9000.0] + [1.0] * 3, zk.topic: [1000.0, 1.0], kraft.topic: [3000.0, 1.0]})
    results = run_plan([client, zk, kraft], fake, repetitions=1, seconds=10)
    records = {m.case: m.records for m in results}
    assert records[zk.name] == records[kraft.name] == 30000  # equal_sizes' middle of 10000 and 30000
    assert records[client.name] == 90000


def test_cli_lists_the_cases_with_client_dir(tmp_path, capsys):
    for dc in ("dc1", "dc2"):
        (tmp_path / dc).mkdir()
        (tmp_path / dc / "client.properties").write_text(f"bootstrap.servers={dc}-kafka1:9093\n")
    assert main(["--list", "--client-dir", str(tmp_path), "--only", "kraft-vs-zk/throughput"]) == 0
    out = capsys.readouterr().out
    assert case_name("throughput", "kraft") in out and "bootstrap.servers=dc2-kafka1:9093" in out
    assert "before:   " in out and "kafkakit.bench.scenarios topic" in out
    assert "kraft-vs-zk/partitions" not in out


def test_cli_without_client_dir_says_why_there_is_no_kraft_vs_zk(capsys):
    assert main(["--list", "--only", "kraft-vs-zk"]) == 2
    assert "--client-dir" in capsys.readouterr().err


def test_cli_refuses_to_run_kraft_vs_zk_without_the_lab_files(tmp_path, capsys):
    argv = ["--bootstrap", "b1:9093", "--client-dir", str(tmp_path), "--only", "kraft-vs-zk/partitions"]
    assert main([*argv, "--mm2-runs", "0", "--timing-runs", "0", "--out", str(tmp_path / "out")]) == 2
    assert "hosts.yml is missing" in capsys.readouterr().err
