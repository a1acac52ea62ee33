"""leader-failover in the plan: the two cases, the spare broker the KRaft data centre of the lab
needs for them, their selection, their group, `make bench`'s wiring, and the report's section."""

from pathlib import Path

import pytest
import yaml

from kafkakit.bench.__main__ import main, write_outputs
from kafkakit.bench.leader_cases import SpareSettings, case_name, leader_cases, spares_needed
from kafkakit.bench.leader_report import aim, render_leader_section, spares_of
from kafkakit.bench.modes import ModeTarget, ScenarioSettings, mode_cases
from kafkakit.bench.plan import Endpoint, build_plan, comparisons, select
from kafkakit.bench.report import Machine
from kafkakit.bench.runner import run_plan
from kafkakit.bench.stats import summarize
from tests.unit.support.bench_fakes import FakeRunner

ROOT = Path(__file__).resolve().parents[3]
LAB = yaml.safe_load((ROOT / "ansible/lab/lab-config.yml").read_text())
ZK = ModeTarget("zookeeper", "dc1", "/lab/dc1/client.conf", "/lab/dc1/client.properties", "10.0.0.11:9093")
KRAFT = ModeTarget("kraft", "dc2", "/lab/dc2/client.conf", "/lab/dc2/client.properties", "10.0.0.21:9093")
SETTINGS = ScenarioSettings(inventory="/lab/hosts.yml", python="python3")
SPARE = SpareSettings(python="python3", inventory="/lab/hosts.yml", lab_vars="/lab/fast.yml")
CASES = leader_cases([KRAFT, ZK], LAB, settings=SETTINGS, spare=SPARE)
LABELS = {"zookeeper": "dc1, Kafka 3.9.2", "kraft": "dc2, Kafka 4.3.1"}


def arg(command, option):
    return command[command.index(option) + 1]


# --- the spare ----------------------------------------------------------------------------------


def test_the_labs_kraft_data_centre_needs_its_spare_and_the_zookeeper_one_none():
    assert spares_needed(LAB, "dc2") == ["dc2-kafka3"] and spares_needed(LAB, "dc1") == []
    spare = next(h for h in LAB["lab_spare_hosts"] if h["name"] == "dc2-kafka3")
    taken = {h["ip"] for h in LAB["lab_hosts"] + LAB["lab_spare_hosts"] + LAB["lab_dc3_hosts"] if h is not spare}
    dc2_racks = {h["rack"] for h in LAB["lab_hosts"] if h["dc"] == "dc2" and "kafka_broker" in h["roles"]}
    assert spare["ip"] not in taken and spare["rack"] not in dc2_racks and spare["broker_id"] == 3


def test_a_data_centre_without_enough_spares_is_one_clear_error():
    lab = {**LAB, "lab_spare_hosts": [h for h in LAB["lab_spare_hosts"] if h["dc"] != "dc2"]}
    with pytest.raises(ValueError, match="needs 3 brokers in dc2, which has 2: add 1 more kafka_broker host"):
        spares_needed(lab, "dc2")
    three = {"lab_hosts": [{"name": f"b{i}", "dc": "dc9", "roles": ["kafka_broker"]} for i in range(3)]}
    assert spares_needed(three, "dc9") == []


# --- the cases ------------------------------------------------------------------------------------


def test_one_case_per_mode_zookeeper_first_in_a_group_of_their_own():
    assert [c.name for c in CASES] == ["leader-failover/zookeeper", "leader-failover/kraft"]
    assert {(c.tool, c.group) for c in CASES} == {("leader-failover", "leader-failover")}
    for case, target in zip(CASES, (ZK, KRAFT), strict=True):
        cmd = case.command(0, "r-1")
        assert cmd[:4] == ["python3", "-m", "kafkakit.bench.scenarios", "leader-failover"]
        assert (arg(cmd, "--dc"), arg(cmd, "--mode"), arg(cmd, "--tag")) == (target.dc, target.mode, "r-1")
        assert arg(cmd, "--restart-after") == "10" and arg(cmd, "--client-conf") == target.client_conf


def test_only_the_kraft_case_brings_the_spare_and_takes_it_away():
    zk, kraft = CASES
    assert zk.setup == zk.teardown == ()
    ((up,), (down,)) = kraft.setup, kraft.teardown
    assert up[:5] == ("python3", "-m", "kafkakit.bench.spare", "up", "dc2-kafka3")
    assert down[:5] == ("python3", "-m", "kafkakit.bench.spare", "down", "dc2-kafka3")
    for command in (up, down):
        assert arg(command, "--dc") == "dc2" and arg(command, "--client-conf") == KRAFT.client_conf
        assert (
            arg(command, "--keep-topics-not-prefixed") == "bench-lf-" and arg(command, "--inventory") == SPARE.inventory
        )
    # The spare is deployed with the variables the lab was deployed with.
    assert arg(up, "--lab-vars") == "/lab/fast.yml" and "--lab-vars" not in down
    assert spares_of(kraft) == ["dc2-kafka3"] and spares_of(zk) == []


def test_selected_by_their_prefix_not_by_the_mode_comparison_and_never_paired_by_a_ratio():
    sasl = Endpoint("SASL_SSL", "b1:9093", "/etc/kafka/client.properties")
    cases = build_plan([sasl]) + mode_cases([ZK, KRAFT], settings=SETTINGS) + CASES
    assert select(cases, ["leader-failover"]) == CASES
    assert [c.name for c in select(cases, ["leader-failover/kraft"])] == ["leader-failover/kraft"]
    assert not {c.name for c in select(cases, ["kraft-vs-zk"])} & {c.name for c in CASES}
    assert not [c for c in comparisons(cases) if {c.numerator, c.denominator} & {x.name for x in CASES}]


def test_needs_one_data_centre_of_each_mode():
    with pytest.raises(ValueError, match="one data centre of each mode"):
        leader_cases([KRAFT, KRAFT], LAB)


def test_the_spares_come_and_go_around_the_groups_rounds_only():
    ran: list[list[str]] = []
    kraft_vs_zk = [c for c in mode_cases([ZK, KRAFT], settings=SETTINGS) if c.tool == "shutdown"]
    fake = FakeRunner(scenarios={("leader-failover", m): [FIGURES[m]] for m in ("zookeeper", "kraft")})

    def run(command):
        ran.append(command)
        return "" if "kafkakit.bench.spare" in command else fake(command)

    results = run_plan([*CASES, *kraft_vs_zk], run, repetitions=1, records=10, tag="t")
    assert [c[3] for c in ran] == ["shutdown", "shutdown", "up", "leader-failover", "leader-failover", "down"]
    assert all(m.ok for m in results)


# --- the report -----------------------------------------------------------------------------------

FIGURES = {
    "zookeeper": {
        "ack_gap_s": 14.2, "any_ack_gap_s": 14.3, "elected_s": 14.0, "isr_back_s": 12.5, "restarted_s": 10.0,
        "sent": 9000.0, "acked": 9000.0, "failed": 0.0, "duplicated": 0.0, "lost": 0.0,
        "cfg_zookeeper_session_timeout_ms": 18000.0, "cfg_zookeeper_tick_ms": 2000.0,
        "cfg_replica_lag_time_max_ms": 30000.0,
    },
    "kraft": {
        "ack_gap_s": 8.1, "any_ack_gap_s": 8.2, "elected_s": 7.9, "isr_back_s": 9.0, "restarted_s": 10.0,
        "sent": 8000.0, "acked": 8000.0, "failed": 0.0, "duplicated": 0.0, "lost": 0.0,
        "cfg_broker_session_timeout_ms": 9000.0, "cfg_broker_heartbeat_interval_ms": 2000.0,
        "cfg_replica_lag_time_max_ms": 30000.0,
    },
}  # fmt: skip


def summaries_of(per_mode):
    return {case_name(m): {k: summarize(v) for k, v in figures.items()} for m, figures in per_mode.items()}


def test_the_aim_is_met_in_every_run_by_the_median_or_not():
    assert aim("kraft", summarize([4.0, 5.0, 5.9])).endswith("meets the aim in every run of 6 s.")
    assert "meets the aim by the median, not in every run" in aim("kraft", summarize([4.0, 5.0, 7.0]))
    said = aim("zookeeper", summarize([13.0, 14.0, 16.0]))
    assert said.startswith(
        "ZooKeeper: the lost leader's partition waited 14.0 s (the median of 3 runs; at most 16.0 s)"
    )
    assert said.endswith("does not meet the aim of 6 s.")
    assert "no successful run" in aim("kraft", None)


def test_the_section_has_the_windows_the_accounting_the_settings_and_what_host_means():
    summaries = summaries_of({m: {k: [v] for k, v in f.items()} for m, f in FIGURES.items()})
    text = render_leader_section(CASES, summaries, LABELS)
    assert text.startswith("## A leader's host lost (leader-failover)")
    assert "KRaft: dc2, Kafka 4.3.1, with the spare broker(s) dc2-kafka3 added for the case" in text
    assert "a podman container booting systemd" in text and "half-open" in text
    row = next(line for line in text.splitlines() if "the lost leader's partition |" in line)
    assert row == (
        "| longest window without an ack, the lost leader's partition | 14.2 s (14.2–14.2, 1 runs) "
        "| 8.10 s (8.10–8.10, 1 runs) | **0.57** |"
    )
    sent = next(line for line in text.splitlines() if line.startswith("| records sent"))
    assert sent == "| records sent | 9000 (9000–9000, 1 runs) | 8000 (8000–8000, 1 runs) | – |"  # no ratio of counts
    assert "- Every acknowledged record was read back, none twice, in every successful run." in text
    assert "zookeeper.session.timeout.ms (as the ensemble grants it) 18000 ms; ZooKeeper's tickTime 2000 ms" in text
    assert "KRaft: broker.session.timeout.ms (the controllers') 9000 ms; broker.heartbeat.interval.ms 2000 ms" in text


def test_a_lost_or_doubled_record_and_settings_that_changed_between_runs_are_said():
    zk = {k: [v, v, v] for k, v in FIGURES["zookeeper"].items()}
    # One run of three lost records: said, though the median lost none.
    zk["lost"], zk["cfg_zookeeper_session_timeout_ms"] = [0.0, 0.0, 3.0], [18000.0, 6000.0, 6000.0]
    text = render_leader_section(CASES, summaries_of({"zookeeper": zk}), LABELS)
    assert "- Not every acknowledged record came back exactly once: ZooKeeper lost up to 3." in text
    assert "as the ensemble grants it) varied, 6000–18000" in text
    assert "KRaft: not read (no successful run)." in text


def test_no_section_without_the_cases():
    assert render_leader_section(mode_cases([ZK, KRAFT], settings=SETTINGS), {}, LABELS) == ""


def test_the_report_places_the_section_after_the_mode_comparison(tmp_path):
    fake = FakeRunner(scenarios={("leader-failover", m): [FIGURES[m]] * 2 for m in ("zookeeper", "kraft")})
    spare_free = [c for c in CASES if not c.setup]  # the fake runner knows no spare commands
    measurements = run_plan(spare_free, fake, repetitions=2, records=10)
    machine = Machine("2", "23.5 GiB", "Test CPU", "2026-12-05 10:00 UTC")
    write_outputs(
        spare_free, measurements, out=tmp_path, repetitions=2, records=10, seconds=None, machine=machine,
        chart=False, mode_labels=LABELS,
    )  # fmt: skip
    text = (tmp_path / "report.md").read_text()
    assert "## A leader's host lost (leader-failover)" in text and "## Producer" not in text
    assert "ZooKeeper: the lost leader's partition waited 14.2 s" in text


# --- `make bench` and the command line --------------------------------------------------------------


def test_cli_lists_both_cases_and_the_spare_with_client_dir(tmp_path, capsys):
    for dc in ("dc1", "dc2"):
        (tmp_path / dc).mkdir()
        (tmp_path / dc / "client.properties").write_text(f"bootstrap.servers={dc}-kafka1:9093\n")
    argv = ["--list", "--client-dir", str(tmp_path), "--only", "leader-failover", "--lab-vars", "fast.yml"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "leader-failover/zookeeper" in out and "leader-failover/kraft" in out and "kraft-vs-zk" not in out
    assert "kafkakit.bench.spare up dc2-kafka3" in out and "kafkakit.bench.spare down dc2-kafka3" in out


def test_cli_refuses_to_run_the_spare_without_the_image_tag(tmp_path, capsys):
    for dc in ("dc1", "dc2"):
        (tmp_path / dc).mkdir()
        for name in ("client.properties", "client.conf"):
            (tmp_path / dc / name).write_text(f"bootstrap.servers={dc}-kafka1:9093\n")
    (tmp_path / "hosts.yml").write_text("all: {}\n")
    argv = ["--bootstrap", "b1:9093", "--client-dir", str(tmp_path), "--only", "leader-failover/kraft"]
    argv += ["--image-tag-file", str(tmp_path / "no-image.tag"), "--out", str(tmp_path / "out")]
    assert main(argv) == 2
    assert "no-image.tag is missing: the leader-failover case's spare broker needs it" in capsys.readouterr().err


def test_make_bench_passes_the_lab_files_and_lab_vars_and_make_lab_deploys_with_them():
    makefile = (ROOT / "Makefile").read_text()
    bench = makefile[makefile.index("\nbench:") :].split("\n\n")[0]
    assert "--lab-config ansible/lab/lab-config.yml --image-tag-file build/lab-image.tag" in bench
    assert "$(if $(LAB_VARS),--lab-vars $(abspath $(LAB_VARS)))" in bench
    site = makefile[makefile.index("\nsite:") :].split("\n\n")[0]
    assert "site.yml $(if $(LAB_VARS),-e @$(abspath $(LAB_VARS)))" in site
    default_cases = makefile[makefile.index("BENCH_CASES ?=") :].split("\nBENCH_ZK_DC")[0]
    assert "leader-failover" not in default_cases  # asked for by name until it has run on a lab
