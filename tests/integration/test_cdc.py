"""Change data capture from the lab's PostgreSQL (ansible/lab/source-db.yml) through Debezium's
connector orders-cdc (inventories/local/group_vars/dc1.yml): the database speaks TLS only and lets
its capture user do only what capture needs, from the Connect workers only; the connector holds a
reference to the database's password, never the password; rows committed in PostgreSQL (an
insert, an update, a delete) are read back from the connector's topic by a plain consumer, and
become the current rows of the Spark job spark-jobs/cdc.py (its lag behind the database
scraped); the heartbeat moves the slot on while the captured table is idle, and the slot's retained
WAL is scraped. The Connect worker running the connector's task SIGKILLed while rows are committed
at a steady rate: every committed row reaches the topic once and Spark's rows, none twice. Each
refusal beside its positive control; and a second run of source-db.yml changes nothing."""

from __future__ import annotations

import json
import re
import time
import uuid
from collections import Counter
from collections.abc import Iterator

import pytest

from kafkakit.monitoring.prometheus import POSTGRES_EXPORTER_PORT
from tests.integration.accounting import account
from tests.integration.cdc_lab import (
    CONNECTOR,
    TOPIC,
    Changes,
    RowWriter,
    connector_running,
    drop_wal_filler,
    psql,
    secret,
    superuser,
    wait_job_past,
    wal_position,
    write_wal_elsewhere,
)
from tests.integration.conftest import wait_until
from tests.integration.connect_lab import WORKERS, admin_tls, connector_status, rest, url
from tests.integration.lab import Host, Lab
from tests.integration.playbooks import recap, run_playbook
from tests.integration.prometheus import Prometheus, http_get, scrape_password
from tests.integration.spark_lab import CdcJob, SparkCluster

SLOT = "dbz_orders"


def test_a_second_run_of_the_source_database_changes_nothing():
    stats = recap(run_playbook("lab/source-db.yml"))
    assert stats and {h: s["changed"] for h, s in stats.items() if s["changed"]} == {}, stats


def test_the_database_takes_clients_on_tls_only():
    rc, out = psql("SELECT 1", sslmode="disable")
    assert rc != 0 and "no encryption" in out, out
    # Positive control: the same login over TLS.
    assert psql("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()") == (0, "t")


def test_the_capture_user_may_replicate_and_read_the_published_table_and_nothing_else():
    flags = superuser(
        "SELECT rolreplication, rolsuper, rolcreatedb, rolcreaterole FROM pg_roles WHERE rolname = 'debezium'"
    )
    assert flags == "t|f|f|f", flags
    privileges = superuser(
        "SELECT has_table_privilege('debezium', 'public.orders', 'SELECT'),"
        " has_table_privilege('debezium', 'public.orders', 'INSERT'),"
        " has_table_privilege('debezium', 'public.orders', 'DELETE')"
    )
    assert privileges == "t|f|f", privileges
    assert superuser("SELECT pubname FROM pg_publication_tables WHERE tablename = 'orders'") == "dbz_orders"
    # From a host that is not a Connect worker (the database's own address) the capture user is
    # refused; the owner, from the same host, is let in (the control).
    rc, out = psql("SELECT 1", user="debezium")
    assert rc != 0 and "no pg_hba.conf entry" in out, out
    assert psql("SELECT 1")[0] == 0


def test_the_connector_holds_a_reference_to_the_database_password_never_the_password():
    wait_until("orders-cdc and its task to run", connector_running, timeout=180)
    password = secret("source-db-capture")
    answers = [
        rest(url(w), "GET", path, admin_tls())[1]
        for w in WORKERS
        for path in (f"/connectors/{CONNECTOR}", f"/connectors/{CONNECTOR}/config", "/connectors?expand=info")
    ]
    text = json.dumps(answers)
    assert password not in text
    assert "${file:/etc/kafka-connect/secrets/orders-cdc.properties:database.password}" in text


def commit_changes(changes: Changes, tag: str, rows: int) -> tuple[set[int], int, int]:
    """`rows` inserts tagged `tag`, the first row updated to paid and the second deleted, then
    until the consumer has read every one of those changes: (the ids, the paid one, the gone one)."""
    rc, out = psql(
        f"INSERT INTO orders (customer, amount) SELECT '{tag}', n FROM generate_series(1, {rows}) AS n RETURNING id"
    )
    assert rc == 0, out
    ids = {int(i) for i in out.split()}
    paid, gone = sorted(ids)[:2]
    rc, out = psql(f"UPDATE orders SET status = 'paid' WHERE id = {paid}; DELETE FROM orders WHERE id = {gone}")
    assert rc == 0, out
    expected = {("c", i) for i in ids} | {("u", paid), ("d", gone)}

    def all_arrived() -> bool:
        changes.poll()
        return set(changes.ops(ids)) >= expected

    wait_until("every committed change in the topic", all_arrived, timeout=120)
    return ids, paid, gone


def test_rows_committed_in_postgresql_arrive_in_the_connectors_topic(lab: Lab):
    wait_until("orders-cdc and its task to run", connector_running, timeout=180)
    tag = f"cdc-{uuid.uuid4().hex[:8]}"
    changes = Changes.from_now(lab, tag)
    try:
        ids, paid, gone = commit_changes(changes, tag, 20)
    finally:
        changes.close()
    created = [row for op, i, row in changes.events if op == "c" and i in ids]
    assert sorted(row["amount"] for row in created) == sorted(f"{n}.00" for n in range(1, 21)), created
    assert all(row["customer"] == tag for row in created)
    assert [row["status"] for op, i, row in changes.events if op == "u" and i == paid] == ["paid"]


def slot_lsn(column: str) -> int:
    """The slot's `column` (restart_lsn, confirmed_flush_lsn) as a byte position."""
    return int(superuser(f"SELECT {column} - '0/0'::pg_lsn FROM pg_replication_slots WHERE slot_name = '{SLOT}'"))


def test_the_heartbeat_moves_the_slot_on_while_the_captured_table_is_idle():
    wait_until("orders-cdc and its task to run", connector_running, timeout=180)
    # WAL the connector is not sent: rows of a table outside the publication (orders gets none).
    write_wal_elsewhere(50000)
    try:
        target = wal_position()
        assert slot_lsn("confirmed_flush_lsn") < target  # what the heartbeat must move on
        # A heartbeat every 10 s writes its row; the connector confirms its position, and the
        # database may recycle the WAL before it.
        wait_until("the slot confirmed past the idle stretch", lambda: slot_lsn("confirmed_flush_lsn") >= target, 90)
    finally:
        drop_wal_filler()
    beat = superuser("SELECT now() - beat < interval '1 minute' FROM public.debezium_heartbeat WHERE id = 1")
    assert beat == "t", beat


def test_the_slots_retained_wal_is_scraped_from_the_databases_exporter(lab: Lab):
    monitor = lab.hosts[lab.groups["monitoring"][0]]
    exporter = f"https://{monitor.ip}:{POSTGRES_EXPORTER_PORT}/metrics"
    status, body = http_get(exporter, ("prometheus", scrape_password()))
    assert status == 200, status
    samples = re.findall(r"^pg_replication_slots_pg_wal_lsn_diff\{([^}]*)\} (\S+)$", body, re.MULTILINE)
    assert [v for labels, v in samples if f'slot_name="{SLOT}"' in labels], body[-2000:]
    # Its login is required (the control above had it).
    assert http_get(exporter)[0] == 401
    prometheus = Prometheus(monitor.ip)
    expr = f'pg_replication_slots_active{{job="postgres",instance="dc1-source-db",dc="dc1",slot_name="{SLOT}"}}'
    wait_until("the slot scraped, and active", lambda: [r["value"][1] for r in prometheus.query(expr)] == ["1"], 90)


def scraped(prometheus: Prometheus, spark: SparkCluster, job: CdcJob, metric: str) -> float | None:
    """The job's `metric` as Prometheus scraped it from the master's node exporter."""
    expr = f'{metric}{{job="node",instance="{spark.master.name}",topic="{job.source}",output="{job.output}"}}'
    found = prometheus.query(expr)
    return float(found[0]["value"][1]) if found else None


@pytest.fixture(scope="module")
def cdc_job(spark: SparkCluster) -> Iterator[CdcJob]:
    """One run of spark-jobs/cdc.py on the connector's topic for the tests below: each reads its own
    rows (by their customer tag) from the job's output while it runs. Its start and first batch are
    most of a test's time, so the two tests share them."""
    job = CdcJob(spark, TOPIC)
    try:
        job.start()
        yield job
    finally:
        job.remove()


def test_committed_changes_become_sparks_current_rows(lab: Lab, spark: SparkCluster, cdc_job: CdcJob):
    """spark-jobs/cdc.py on the connector's topic: inserts, an update and a delete committed in
    PostgreSQL end as the rows the database holds now (the deleted one gone, the updated one
    changed), whatever the topic held before. Prometheus has the job's lag behind the database
    (its --metrics-file): positive, at most the time since the commits, and the newest commit the
    output holds at or after the rows'."""
    wait_until("orders-cdc and its task to run", connector_running, timeout=180)
    job = cdc_job
    tag = f"spark-cdc-{uuid.uuid4().hex[:8]}"
    changes = Changes.from_now(lab, tag)
    prometheus = Prometheus(lab.hosts[lab.groups["monitoring"][0]].ip)
    try:
        # What the topic held before first: the last batch with changes is then this test's.
        wait_job_past(job, changes)
        before = time.time()
        ids, paid, gone = commit_changes(changes, tag, 10)
        wait_job_past(job, changes)
        # The lag cannot exceed the time since the commits (one clock: the lab is one machine).
        bound = time.time() - before
        # now() is the insert's transaction start: at or before the commit time Debezium reports.
        epoch_ms = "floor(extract(epoch FROM max(created_at)) * 1000)::bigint"
        committed_ms = int(superuser(f"SELECT {epoch_ms} FROM orders WHERE customer = '{tag}'"))

        def applied() -> bool:
            newest = scraped(prometheus, spark, job, "kafkakit_cdc_source_commit_timestamp_seconds")
            return newest is not None and round(newest * 1000) >= committed_ms

        wait_until("the output's newest commit scraped, at or after the rows'", applied, timeout=90)
        lag = scraped(prometheus, spark, job, "kafkakit_cdc_lag_seconds")
        # The newest version the job wrote whole; no change reaches the topic while it is read.
        rows = {row["id"]: row for row in job.dump() if row.get("customer") == tag}
    finally:
        changes.close()
    expected = {i: superuser(f"SELECT status FROM orders WHERE id = {i}") for i in ids - {gone}}
    assert {i: row["status"] for i, row in rows.items()} == expected
    assert expected[paid] == "paid" and gone not in rows
    # Debezium's commit times are whole milliseconds: the lag may read up to one more.
    assert lag is not None and 0 < lag <= bound + 0.001, (lag, bound)


def task_worker() -> Host:
    """The Connect worker running orders-cdc's task (its status names it by address:port)."""
    status = connector_status(CONNECTOR)
    address = status["tasks"][0]["worker_id"].rsplit(":", 1)[0]
    return next(w for w in WORKERS if w.ip == address)


def test_a_worker_sigkilled_under_steady_commits_loses_no_row_in_kafka_or_in_spark(lab: Lab, cdc_job: CdcJob):
    """Rows committed at a steady rate while the worker running the connector's task is SIGKILLed
    (systemd starts it again): every committed row reaches the topic once (exactly-once source)
    and Spark's output (spark-jobs/cdc.py, keyed by the primary key)."""
    wait_until("orders-cdc and its task to run", connector_running, timeout=180)
    job = cdc_job
    writer = RowWriter()
    changes = Changes.from_now(lab, writer.tag)
    try:
        writer.start()
        wait_until("rows flowing", lambda: len(writer.committed()) >= 50, timeout=60)
        victim = task_worker()
        started = lab.unit_started(victim, "kafka-connect")
        lab.testinfra(victim).check_output("systemctl kill --signal=SIGKILL kafka-connect")
        wait_until("the killed worker started again", lambda: lab.unit_started(victim, "kafka-connect") != started, 60)
        wait_until("orders-cdc and its task to run again", connector_running, timeout=180)
        settled = len(writer.committed())
        wait_until("rows after the recovery", lambda: len(writer.committed()) >= settled + 50, timeout=60)
        ids = writer.stop()
        changes.wait_created(ids)
        wait_job_past(job, changes)
        in_spark = Counter(row["id"] for row in job.dump() if row.get("customer") == writer.tag)
    finally:
        changes.close()
    in_kafka, duplicated = changes.created(ids)
    account(
        f"worker {victim.name} SIGKILLed: rows committed {len(ids)}, in Kafka {len(in_kafka & ids)}"
        f" (duplicated {duplicated}), in Spark {len(set(in_spark) & ids)}, missing in Kafka {len(ids - in_kafka)},"
        f" missing in Spark {len(ids - set(in_spark))}"
    )
    assert ids - in_kafka == set() and duplicated == 0
    assert set(in_spark) == ids and max(in_spark.values()) == 1
