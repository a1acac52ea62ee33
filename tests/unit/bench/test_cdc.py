"""The cdc case (issue #48): the commit pacing and its SQL, what a Debezium record says, the
percentiles and figures of a run, the Spark job's batches, the case in the plan, its runs through
run_plan and its report section; the lab side's commands with the lab faked."""

import json
import math
import os
import subprocess

import pytest

from kafkakit.bench import cdc_run
from kafkakit.bench.__main__ import main, write_outputs
from kafkakit.bench.cdc import (
    Arrival,
    CdcTarget,
    Change,
    SparkBatches,
    WriterPlan,
    case_name,
    cdc_case,
    cdc_figures,
    check_tag,
    checkpoint_command,
    count_sql,
    covered,
    first_arrivals,
    insert_of,
    pacing,
    parse_checkpoint,
    percentile,
    rate_since,
    render_cdc_section,
    spark_visible_ms,
    writer_sql,
)
from kafkakit.bench.parsers import format_scenario, parse_scenario
from kafkakit.bench.plan import Endpoint, build_plan, comparisons, select
from kafkakit.bench.report import Machine
from kafkakit.bench.runner import run_plan

TAG = "bench-cdc-20261203-0"
TARGET = CdcTarget(inventory="/lab/hosts.yml", client_dir="/lab", python="python3")
CASE = cdc_case(TARGET)
MACHINE = Machine("2", "23.5 GiB", "Test CPU", "2026-12-03 10:00 UTC")


def arg(command, option):
    return command[command.index(option) + 1]


# --- pacing and SQL ---------------------------------------------------------------------------


def test_pacing_500_rows_a_second_is_10_rows_every_20_ms():
    plan = pacing(500, 60)
    assert plan == WriterPlan(10, 0.02, 3000)
    assert plan.rows == 30000 and plan.rate == pytest.approx(500)


def test_pacing_keeps_one_row_a_transaction_below_the_commit_ceiling():
    plan = pacing(30, 10)
    assert plan.rows_per_transaction == 1 and plan.interval_s == pytest.approx(1 / 30) and plan.transactions == 300


def test_pacing_of_an_awkward_rate_keeps_the_rate_exactly_and_the_duration_nearly():
    plan = pacing(525, 60)
    assert plan.rows_per_transaction == 11  # 10 a transaction would be 52.5 commits/s
    assert plan.rate == pytest.approx(525)
    assert plan.transactions * plan.interval_s == pytest.approx(60, abs=plan.interval_s)


@pytest.mark.parametrize("rate, seconds", [(0, 60), (500, 0), (-1, 60)])
def test_pacing_refuses_nothing_to_do(rate, seconds):
    with pytest.raises(ValueError):
        pacing(rate, seconds)


def test_writer_sql_commits_each_transaction_on_the_schedule():
    sql = writer_sql(pacing(500, 60), TAG)
    assert sql.startswith("DO $$") and sql.endswith("$$")
    assert "FOR i IN 0..2999 LOOP" in sql
    assert "t0 + i * interval '20000 microseconds' - clock_timestamp()" in sql
    assert f"INSERT INTO public.orders (customer, amount) SELECT '{TAG}', 1 FROM generate_series(1, 10);" in sql
    # The sleep comes before the insert and the commit after it, inside the loop.
    loop = sql[sql.index("LOOP") : sql.index("END LOOP")]
    assert loop.index("pg_sleep") < loop.index("INSERT") < loop.index("COMMIT;")


@pytest.mark.parametrize("tag", ["x'; DROP TABLE orders; --", "Upper", "", "a" * 64, "with space"])
def test_a_tag_that_could_break_out_of_its_literal_is_refused(tag):
    with pytest.raises(ValueError):
        writer_sql(pacing(10, 1), tag)
    with pytest.raises(ValueError):
        count_sql(tag)


def test_count_sql_counts_the_runs_rows():
    assert count_sql(TAG) == f"SELECT count(*) FROM public.orders WHERE customer = '{TAG}'"
    assert check_tag(TAG) == TAG


# --- what a record says -----------------------------------------------------------------------


def envelope(row_id=7, customer=TAG, op="c", commit=1764756000123, capture=1764756000150):
    """A record value as Connect's JsonConverter (schemas enabled) writes Debezium's envelope."""
    after = {"id": row_id, "customer": customer, "amount": "1.00", "status": "new"}
    payload = {
        "before": None,
        "after": None if op == "d" else after,
        "source": {"version": "3.6.1.Final", "connector": "postgresql", "name": "shop", "ts_ms": commit,
                   "db": "shop", "schema": "public", "table": "orders", "txId": 812, "lsn": 40265432},
        "transaction": None,
        "op": op,
        "ts_ms": capture,
    }  # fmt: skip
    schema = {"type": "struct", "name": "shop.public.orders.Envelope"}
    return json.dumps({"schema": schema, "payload": payload}).encode()


def test_an_insert_of_the_run_gives_its_id_commit_time_and_capture_time():
    assert insert_of(envelope(), TAG) == Change(7, 1764756000123, 1764756000150)
    assert insert_of(envelope().decode(), TAG) == Change(7, 1764756000123, 1764756000150)


@pytest.mark.parametrize(
    "value",
    [None, envelope(customer="load-1234abcd"), envelope(op="u"), envelope(op="r"), envelope(customer=f"{TAG}-1")],
)
def test_anything_but_an_insert_of_the_run_is_no_change_of_it(value):
    assert insert_of(value, TAG) is None


def arrival(row_id, commit, received, partition=0, offset=None, record=None, capture=None):
    change = Change(row_id, commit, commit + 5 if capture is None else capture)
    record = commit + 10 if record is None else record
    return Arrival(change, partition, row_id if offset is None else offset, record, received)


def test_first_arrivals_keep_each_rows_first_and_count_the_repeats():
    a, b, again = arrival(1, 0, 10.0), arrival(2, 0, 11.0), arrival(1, 0, 50.0, offset=9)
    rows, repeats = first_arrivals([a, b, again])
    assert rows == [a, b] and repeats == 1


# --- percentiles and figures ------------------------------------------------------------------


def test_percentile_is_nearest_rank():
    values = list(range(100, 0, -1))  # 1..100, unsorted
    assert percentile(values, 50) == 50
    assert percentile(values, 99) == 99
    assert percentile(values, 100) == 100
    assert percentile([3.0, 1.0, 2.0], 50) == 2.0
    assert percentile([7.0], 99) == 7.0


@pytest.mark.parametrize("values, q", [([], 50), ([1.0], 0), ([1.0], 101)])
def test_percentile_refuses_no_values_or_a_rank_outside_0_100(values, q):
    with pytest.raises(ValueError):
        percentile(values, q)


def test_rate_since_counts_what_follows_the_start():
    # 10 rows at the start open the interval; 20 more over the next 2 s.
    assert rate_since(1000.0, [1000.0] * 10 + [2000.0] * 10 + [3000.0] * 10) == pytest.approx(10.0)
    assert math.isnan(rate_since(1000.0, [1000.0, 1000.0]))  # no interval


def steady_run():
    """200 rows, 10 per commit every 20 ms (500 rows/s); row i read (i % 100) + 1 ms after its
    commit; the record stamped 3 ms and Debezium 2 ms after the commit; rows 0 and 1 read twice."""
    base = 1764756000000
    out = []
    for i in range(200):
        commit = base + (i // 10) * 20
        out.append(arrival(i, commit, commit + (i % 100) + 1.0, partition=i % 3, offset=i, record=commit + 3,
                           capture=commit + 2))  # fmt: skip
    return out + [arrival(0, base, base + 400.0), arrival(1, base, base + 401.0)]


def test_figures_of_a_steady_run():
    figures = cdc_figures(steady_run())
    assert figures["rows"] == 200 and figures["duplicated"] == 2
    # Latencies 1..100 ms, twice each: nearest rank.
    assert figures["kafka_p50_ms"] == 50 and figures["kafka_p99_ms"] == 99
    assert figures["record_p50_ms"] == figures["record_p99_ms"] == 3
    assert figures["capture_p50_ms"] == 2
    # 190 rows after the first commit, the last one 380 ms after it.
    assert figures["commit_rows_per_sec"] == pytest.approx(190 / 0.38)
    # The last arrival (the first of each row only): row 199, committed at +380 ms, read 100 ms later.
    assert figures["rows_per_sec"] == pytest.approx(200 / 0.48)
    assert not any(k.startswith("spark") for k in figures)


def test_a_run_with_no_row_has_no_figures():
    with pytest.raises(ValueError, match="no row"):
        cdc_figures([])


def test_spark_figures_time_each_row_by_the_first_batch_that_read_it():
    rows = [arrival(i, 1000, 1100.0, partition=0, offset=i) for i in range(10)]
    # Batch 4 read offsets 0-4 and committed at 1500; batch 5 offsets 5-9 at 2000; batch 6 (none of
    # them) at 2500; batch 3 ended before the run.
    batches = SparkBatches(ends={3: {0: 0}, 4: {0: 5}, 5: {0: 10}, 6: {0: 12}},
                           committed_ms={3: 900.0, 4: 1500.0, 5: 2000.0, 6: 2500.0})  # fmt: skip
    figures = cdc_figures(rows, batches)
    assert figures["spark_rows"] == 10
    assert figures["spark_p50_ms"] == 500 and figures["spark_p99_ms"] == 1000


def test_a_row_whose_first_batch_has_not_committed_is_not_timed_by_a_later_one():
    batches = SparkBatches(ends={4: {0: 5}, 5: {0: 10}}, committed_ms={5: 2000.0})
    assert spark_visible_ms(arrival(1, 1000, 1100.0, offset=2), batches) is None
    assert spark_visible_ms(arrival(7, 1000, 1100.0, offset=7), batches) == 2000.0
    assert spark_visible_ms(arrival(7, 1000, 1100.0, partition=2, offset=7), batches) is None


def test_covered_needs_committed_batches_up_to_every_partitions_end():
    batches = SparkBatches(ends={0: {0: 10, 1: 4}, 1: {0: 12, 1: 9, 2: 0}}, committed_ms={0: 1.0})
    assert covered(batches, {0: 10, 1: 4})
    assert not covered(batches, {0: 12})  # batch 1 read that far, but has not committed
    assert covered(batches, {2: 0})  # nothing to read
    assert not covered(SparkBatches({}, {}), {0: 1})


# --- the Spark job's checkpoint ---------------------------------------------------------------


def test_parse_checkpoint_reads_offsets_and_commit_times():
    text = "\n".join([
        'offsets/0 {"shop.public.orders":{"2":40,"1":35,"0":41}}',
        'offsets/1 {"batchWatermarkMs":0,"batchTimestampMs":1764756000000}',  # not written whole yet
        "commits/0 1764756001.250000000",
        "cdc: unrelated noise",
        "",
    ])  # fmt: skip
    batches = parse_checkpoint(text)
    assert batches.ends == {0: {0: 41, 1: 35, 2: 40}}
    assert batches.committed_ms == {0: pytest.approx(1764756001250.0)}


def test_the_checkpoint_command_prints_what_the_parser_reads(tmp_path):
    """The shell command run on a folder laid out as Spark's checkpoint is (hidden .crc and
    temporary files beside the logs), here instead of on the Spark master."""
    (tmp_path / "offsets").mkdir()
    (tmp_path / "commits").mkdir()
    for batch, ends in ((0, {"0": 41, "1": 35, "2": 40}), (1, {"0": 50, "1": 35, "2": 44})):
        meta = json.dumps({"batchWatermarkMs": 0, "batchTimestampMs": 1764756000000 + batch})
        (tmp_path / "offsets" / str(batch)).write_text(f"v1\n{meta}\n{json.dumps({'shop.public.orders': ends})}")
        (tmp_path / "offsets" / f".{batch}.crc").write_text("x")
    (tmp_path / "offsets" / ".2.3f1c.tmp").write_text("v1\n")
    (tmp_path / "commits" / "0").write_text('v1\n{"nextBatchWatermarkMs":0}')
    os.utime(tmp_path / "commits" / "0", (1764756001.5, 1764756001.5))
    out = subprocess.run(["sh", "-c", checkpoint_command(str(tmp_path))], capture_output=True, text=True, check=True)
    batches = parse_checkpoint(out.stdout)
    assert batches.ends == {0: {0: 41, 1: 35, 2: 40}, 1: {0: 50, 1: 35, 2: 44}}
    assert batches.committed_ms == {0: pytest.approx(1764756001500.0, abs=1)}
    missing = subprocess.run(["sh", "-c", checkpoint_command(str(tmp_path / "none"))], capture_output=True, text=True)
    assert missing.returncode == 0 and missing.stdout == ""


# --- the case in the plan and in run_plan ------------------------------------------------------


def test_the_case_runs_cdc_run_with_the_rate_the_length_and_the_runs_tag():
    assert CASE.name == case_name(500) == "cdc-500" and CASE.tool == "cdc" and CASE.mode == ""
    cmd = CASE.command(0, "20261203-1")
    assert cmd[:3] == ["python3", "-m", "kafkakit.bench.cdc_run"]
    assert arg(cmd, "--rate") == "500" and arg(cmd, "--seconds") == "60" and arg(cmd, "--tag") == "20261203-1"
    assert arg(cmd, "--inventory") == "/lab/hosts.yml" and arg(cmd, "--client-dir") == "/lab"
    assert arg(cmd, "--dc") == "dc1" and arg(cmd, "--host-exec") == "podman exec"
    assert "--no-spark" not in cmd
    assert "--no-spark" in cdc_case(CdcTarget("/i", "/c", spark=False, rate=50)).command(0, "r")


def test_the_case_is_selected_by_name_and_pairs_with_no_client_case():
    cases = build_plan([Endpoint("SASL_SSL", "b1:9093", "/etc/kafka/client.properties")]) + [CASE]
    assert select(cases, ["cdc-500"]) == [CASE] and select(cases, ["cdc-*"]) == [CASE]
    assert not [c for c in comparisons(cases) if CASE.name in (c.numerator, c.denominator)]


def cdc_runner(figures):
    """A runner answering cdc_run's command lines with result lines, in order."""
    queue = list(figures)
    calls = []

    def run(command):
        calls.append(command)
        assert "kafkakit.bench.cdc_run" in command, command
        return "record timestamps: CreateTime\n" + format_scenario("cdc", queue.pop(0)) + "\n"

    return run, calls


def run_figures(rows_per_sec, kafka_p99, spark_p99=None):
    out = {"rows_per_sec": rows_per_sec, "kafka_p50_ms": 40.0, "kafka_p99_ms": kafka_p99, "rows": 30000.0}
    return out | ({"spark_p50_ms": 2100.0, "spark_p99_ms": spark_p99} if spark_p99 else {})


def test_runs_without_warm_up_and_medians_over_the_rounds(tmp_path):
    run, calls = cdc_runner([run_figures(497.0, 310.0, 4100.0), run_figures(480.0, 250.0), run_figures(499.0, 900.0)])
    results = run_plan([CASE], run, repetitions=3, records=1000, tag="t")
    assert [arg(c, "--tag") for c in calls] == ["t-0", "t-1", "t-2"]  # the measured runs only
    assert all(m.ok and m.records == 0 for m in results)
    outcome = write_outputs([CASE], results, out=tmp_path, repetitions=3, records=None, seconds=20, machine=MACHINE,
                            chart=False)  # fmt: skip
    per = outcome.summaries[CASE.name]
    assert per["rows_per_sec"].median == 497.0 and per["kafka_p99_ms"].median == 310.0
    assert per["spark_p99_ms"].n == 1
    text = outcome.report.read_text()
    assert "## Change data capture" in text
    assert "| rows/s, commit → read from Kafka (achieved) | 497 | 480–499 | 3 |" in text
    assert "| commit → Spark batch committed, p99 ms | 4100 | 4100–4100 | 1 |" in text
    assert "source.ts_ms" in text and "CreateTime" in text


def test_a_failed_run_is_a_failed_measurement():
    def run(command):
        raise RuntimeError("exit 1: psql on dc1-source-db exited 2")

    (m,) = run_plan([CASE], run, repetitions=1, records=10, tag="t")
    assert not m.ok and "psql" in m.error


def test_a_result_line_with_an_interval_below_zero_still_parses():
    line = format_scenario("cdc", {"record_p50_ms": -1.0, "rows_per_sec": 500.0})
    assert parse_scenario(line).values == {"record_p50_ms": -1.0, "rows_per_sec": 500.0}


def test_no_section_without_a_cdc_case_and_a_row_for_a_case_without_results():
    assert render_cdc_section([], {}) == ""
    assert "(no successful run)" in render_cdc_section([CASE], {})


# --- the command line ---------------------------------------------------------------------------


def test_cli_lists_the_case_with_client_dir(tmp_path, capsys):
    argv = ["--list", "--client-dir", str(tmp_path), "--only", "cdc-*", "--cdc-rate", "200", "--cdc-seconds", "30"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "cdc-200\n" in out and "kafkakit.bench.cdc_run" in out and "--seconds 30" in out
    assert "kraft-vs-zk" not in out


def test_cli_without_client_dir_says_why_there_is_no_cdc_case(capsys):
    assert main(["--list", "--only", "cdc-500"]) == 2
    assert "--client-dir" in capsys.readouterr().err


def test_cli_refuses_to_run_the_case_without_the_lab_files(tmp_path, capsys):
    (tmp_path / "hosts.yml").write_text("all: {}\n")
    (tmp_path / "dc1").mkdir()
    (tmp_path / "dc1" / "client.conf").write_text("bootstrap.servers=b1:9093\n")
    argv = ["--bootstrap", "b1:9093", "--client-dir", str(tmp_path), "--only", "cdc-500", "--out", str(tmp_path / "o")]
    assert main([*argv, "--mm2-runs", "0", "--timing-runs", "0"]) == 2
    assert "source-db.env is missing" in capsys.readouterr().err


# --- the lab side, faked ----------------------------------------------------------------------

INVENTORY = {
    "all": {
        "children": {
            "dc1": {"hosts": {"dc1-source-db": {"private_ip": "10.0.0.46"}, "dc1-spark-master": {}}},
            "dc2": {"hosts": {"dc2-source-db": {}}},
            "source_db": {"hosts": {"dc2-source-db": {}, "dc1-source-db": {}}},
            "spark_master": {"hosts": {"dc1-spark-master": {}}},
        }
    }
}


def test_member_is_the_groups_host_in_the_data_centre():
    assert cdc_run.member(INVENTORY, "source_db", "dc1") == "dc1-source-db"
    assert cdc_run.member(INVENTORY, "spark_master", "dc1") == "dc1-spark-master"
    with pytest.raises(ValueError, match="no spark_master host in data centre 'dc2'"):
        cdc_run.member(INVENTORY, "spark_master", "dc2")


def lab_files(tmp_path, password="s3cr3t-Pw salt=abc"):
    (tmp_path / "dc1").mkdir()
    secret = tmp_path / "secrets" / "source-db-owner"
    secret.parent.mkdir()
    secret.write_text(password)
    (tmp_path / "dc1" / "source-db.env").write_text(
        "# Written by ansible/lab/source-db.yml.\nSOURCE_DB_HOST=10.0.0.46\nSOURCE_DB_PORT=5432\n"
        f"SOURCE_DB_NAME=shop\nSOURCE_DB_USER=shop\nSOURCE_DB_PASSWORD_FILE={secret}\n"
    )
    return cdc_run.source_db(tmp_path, "dc1", "dc1-source-db")


def test_psql_runs_on_the_database_host_with_the_password_in_its_environment_only(tmp_path, monkeypatch):
    db = lab_files(tmp_path)
    seen = {}

    def fake_run(command, **kwargs):
        seen["command"], seen["env"] = command, kwargs["env"]
        return subprocess.CompletedProcess(command, 0, "30000\n", "")

    monkeypatch.setattr(cdc_run.subprocess, "run", fake_run)
    assert cdc_run.psql(db, "podman exec", count_sql(TAG), timeout=5) == "30000\n"
    command = seen["command"]
    assert command[:5] == ["podman", "exec", "--env", "PGPASSWORD", "dc1-source-db"]
    assert "host=10.0.0.46 port=5432 dbname=shop user=shop sslmode=require" in command
    assert arg(command, "-c") == count_sql(TAG) and "ON_ERROR_STOP=1" in command
    assert seen["env"]["PGPASSWORD"] == "s3cr3t-Pw"
    assert not [a for a in command if "s3cr3t" in a]


def test_a_failed_psql_says_so_without_the_password(tmp_path, monkeypatch):
    db = lab_files(tmp_path)
    monkeypatch.setattr(
        cdc_run.subprocess, "run", lambda command, **kw: subprocess.CompletedProcess(command, 2, "", "FATAL: no")
    )
    with pytest.raises(RuntimeError, match="exited 2: FATAL: no") as failure:
        cdc_run.psql(db, "podman exec", "SELECT 1", timeout=5)
    assert "s3cr3t" not in str(failure.value)


class Master:
    """A HostRun for the Spark master: the checkpoint grows by one committed batch per look."""

    def __init__(self):
        self.commands = []
        self.looks = 0

    def __call__(self, host, argv):
        self.commands.append((host, argv))
        if argv[:2] == ["sh", "-c"] and "offsets/" in argv[2]:
            self.looks += 1
            lines = [f'offsets/{b} {{"shop.public.orders":{{"0":{10 * (b + 1)}}}}}' for b in range(self.looks)]
            return "\n".join(lines + [f"commits/{b} {1000 + b}.5" for b in range(self.looks)]) + "\n"
        if argv[:2] == ["systemctl", "is-active"]:
            return "active\n"
        return ""


def test_the_spark_run_is_a_transient_unit_waited_for_and_removed(monkeypatch):
    monkeypatch.setattr(cdc_run, "SPARK_POLL", 0)
    master = Master()
    spark = cdc_run.SparkRun(master, "dc1-spark-master", TAG)
    spark.start()
    host, argv = master.commands[0]
    assert host == "dc1-spark-master" and argv[:3] == ["systemd-run", f"--unit={TAG}", "--collect"]
    assert arg(argv, "--trigger") == "2 seconds" and arg(argv, "--source") == "shop.public.orders"
    assert arg(argv, "--checkpoints") == f"/srv/spark/bench/{TAG}/checkpoints"
    batches = spark.wait_covered({0: 30}, timeout=5, what="the test")
    assert master.looks == 3 and batches.ends[2] == {0: 30} and batches.committed_ms[2] == 1002500.0
    spark.remove()
    stop, remove = (a for _, a in master.commands[-2:])
    assert stop == ["systemctl", "stop", TAG] and remove == ["rm", "-rf", f"/srv/spark/bench/{TAG}"]
