"""Kafka Connect under change-data-capture load: rows committed in the lab's PostgreSQL at a steady
rate while the Connect workers roll during a roll of dc1's brokers, while the Debezium plugin is
changed to an older release and back (each change rolling the workers once), and while the
connector is stopped long enough for its replication slot to hold more WAL than the lab's limit
(the alert fires, then clears once it is resumed): every committed row arrives in the connector's
topic, the duplicates are counted. An idle captured table's slot keeps its retained WAL under the
limit while another table writes past it. And the connector removed through connectors as code: refused
until named, then its replication slot dropped with it, and declared again it starts anew (its
offsets were reset), its snapshot reading the rows committed while it was gone."""

from __future__ import annotations

import json
import threading
import time

from kafkakit.cluster.connect import RestError
from tests.integration.accounting import account, step
from tests.integration.cdc_lab import (
    CONNECTOR,
    DB,
    LAB,
    Changes,
    RowWriter,
    connector_running,
    drop_wal_filler,
    psql,
    retained_wal,
    superuser,
    wal_position,
    write_wal_elsewhere,
)
from tests.integration.conftest import wait_until
from tests.integration.connect_lab import (
    CONNECTORS_ONLY,
    DC,
    WORKERS,
    admin_tls,
    connector_status,
    declaring,
    rest,
    url,
)
from tests.integration.lab import Lab
from tests.integration.playbooks import playbook_process, restart_order, run_playbook
from tests.integration.prometheus import Prometheus

PLUGIN = "debezium-postgres"
PINNED = "3.6.1.Final"  # inventories/local/group_vars/dc1.yml
OLDER = "3.6.0.Final"  # its lock file is in ansible/artifacts; `make artifacts` builds both


def _under_load(lab: Lab, what: str, action) -> tuple[set[int], Changes]:  # noqa: ANN001 - a callable
    """Rows committed at a steady rate around `action()`, then read back: the ids committed and
    what the topic holds of them. Fails naming every committed row that did not arrive."""
    wait_until("orders-cdc and its task to run", connector_running, timeout=180)
    writer = RowWriter()
    changes = Changes.from_now(lab, writer.tag)
    try:
        writer.start()
        wait_until("rows flowing", lambda: len(writer.committed()) >= 50, timeout=60)
        action()
        wait_until("orders-cdc and its task to run again", connector_running, timeout=180)
        # Some more rows on the recovered cluster, so the recovery is under load too.
        settled = len(writer.committed())
        wait_until("rows after the recovery", lambda: len(writer.committed()) >= settled + 50, timeout=60)
        ids = writer.stop()
        try:
            changes.wait_created(ids)
        finally:
            arrived, duplicated = changes.created(ids)
            account(
                f"{what}: rows committed {len(ids)}, arrived {len(arrived & ids)}, "
                f"missing {len(ids - arrived)}, duplicated {duplicated}"
            )
    finally:
        changes.close()
    return ids, changes


def test_a_connect_roll_during_a_broker_roll_under_cdc_load_loses_no_committed_row(lab: Lab):
    """dc1's broker roll, and once its first broker has restarted, the Connect roll beside it."""
    rolls: dict[str, str] = {}

    def both_rolls() -> None:
        brokers = lab.brokers(DC)
        before = {b.name: LAB.unit_started(b) for b in brokers}

        def broker_roll() -> None:
            rolls["brokers"] = run_playbook("ops/rolling-restart.yml", "-e", f"roll_dc={DC}")

        thread = threading.Thread(target=broker_roll)
        with step("dc1's broker roll, the Connect roll beside it"):
            thread.start()
            try:
                wait_until(
                    "the broker roll's first restart",
                    lambda: any(LAB.unit_started(b) != before[b.name] for b in brokers),
                    timeout=300,
                )
                rolls["connect"] = run_playbook(
                    "ops/rolling-restart.yml", "-e", "restart_service=kafka_connect", "-e", f"roll_dc={DC}"
                )
            finally:
                thread.join(900)
        assert "brokers" in rolls, "the broker roll failed"

    _under_load(lab, "the Connect roll during dc1's broker roll", both_rolls)
    assert restart_order(rolls["connect"], unit="kafka-connect") == [w.name for w in WORKERS]
    assert sorted(restart_order(rolls["brokers"])) == sorted(b.name for b in lab.brokers(DC))


def _plugins(version: str) -> list[str]:
    return ["-e", json.dumps({"kafka_connect_plugins": [{"name": PLUGIN, "version": version}]})]


def _installed() -> dict[str, list[str]]:
    return {w.name: LAB.testinfra(w).check_output("ls /opt/kafka-connect/plugins").split() for w in WORKERS}


def _served_version() -> str:
    plugins = rest(url(WORKERS[0]), "GET", "/connector-plugins", admin_tls())[1]
    return next(p["version"] for p in plugins if p["class"].startswith("io.debezium.connector.postgresql"))


def test_a_plugin_version_change_rolls_the_workers_once_each_and_loses_no_committed_row(lab: Lab):
    outputs: dict[str, str] = {}

    def older_then_pinned() -> None:
        for version in (OLDER, PINNED):
            with step(f"the plugin to {version}"):
                before = {w.name: LAB.unit_started(w, "kafka-connect") for w in WORKERS}
                outputs[version] = run_playbook("site.yml", "--limit", "kafka_connect:localhost", *_plugins(version))
                # The new version's directory alone, on every worker, and Connect serving it.
                assert _installed() == {w.name: [f"{PLUGIN}-{version}"] for w in WORKERS}
                wait_until("orders-cdc to run on the new plugin", connector_running, timeout=180)
                assert _served_version() == version
                # One roll for the install and the removal: each worker restarted once.
                assert restart_order(outputs[version], unit="kafka-connect") == [w.name for w in WORKERS]
                assert all(LAB.unit_started(w, "kafka-connect") != before[w.name] for w in WORKERS)

    try:
        _under_load(lab, f"the plugin {PINNED} -> {OLDER} -> {PINNED}", older_then_pinned)
    finally:
        if _installed() != {w.name: [f"{PLUGIN}-{PINNED}"] for w in WORKERS}:
            run_playbook("site.yml", "--limit", "kafka_connect:localhost")


SLOT_ALERT = "PostgresReplicationSlotRetainsWal"


def _connector_state() -> str:
    return connector_status(CONNECTOR)["connector"]["state"]


def test_a_stopped_connectors_slot_fires_the_wal_alert_then_clears_and_no_row_is_lost(lab: Lab):
    """orders-cdc stopped through Connect's own API while rows are committed and another table writes
    WAL: its slot passes the lab's limit (64 MiB, monitoring_alert_slot_retained_wal_bytes) and the
    alert fires; resumed, the connector confirms its way forward and the alert clears."""
    prometheus = Prometheus(lab.hosts[lab.groups["monitoring"][0]].ip)
    slot = {"slot_name": "dbz_orders", "instance": "dc1-source-db"}
    # The control: the slot is watched and under its limit before the connector stops.
    wait_until("the slot scraped", lambda: prometheus.query('pg_replication_slots_active{slot_name="dbz_orders"}'), 90)
    assert not prometheus.firing(SLOT_ALERT, **slot)

    def stopped_then_resumed() -> None:
        with step("orders-cdc stopped, 80 MiB of WAL elsewhere, until the alert fires"):
            rest(url(WORKERS[0]), "PUT", f"/connectors/{CONNECTOR}/stop", admin_tls())
            try:
                wait_until("orders-cdc stopped", lambda: _connector_state() == "STOPPED", 60)
                write_wal_elsewhere(600000, pad=100)
                wait_until("the retained-WAL alert to fire", lambda: prometheus.firing(SLOT_ALERT, **slot), 240)
            finally:
                rest(url(WORKERS[0]), "PUT", f"/connectors/{CONNECTOR}/resume", admin_tls())
                drop_wal_filler()
        with step("orders-cdc resumed, until the alert clears"):
            wait_until("the alert to clear", lambda: not prometheus.firing(SLOT_ALERT, **slot), 300)

    _under_load(lab, "orders-cdc stopped past the slot's WAL limit, then resumed", stopped_then_resumed)


SLOT = "dbz_orders"  # and the publication's name, inventories/local/group_vars/dc1.yml


def _slots() -> list[str]:
    return superuser(f"SELECT active FROM pg_replication_slots WHERE slot_name = '{SLOT}'").split()


def _gone() -> bool:
    try:
        _connector_state()
    except RestError as exc:
        return exc.status == 404
    return False


def test_a_confirmed_deletion_drops_the_connectors_slot_and_declared_again_it_starts_anew(lab: Lab):
    """orders-cdc declared absent: refused until the run names it, the refusal naming its slot; named,
    the connector goes and its slot with it (the publication is the database owner's and stays);
    declared again, it starts with no offsets, so its snapshot reads the rows committed meanwhile."""
    wait_until("orders-cdc and its task to run", connector_running, timeout=180)
    wait_until("orders-cdc streaming from its slot", lambda: _slots() == ["t"], 120)
    absent = declaring(CONNECTOR, state="absent")
    proc = playbook_process("site.yml", *CONNECTORS_ONLY, *absent)
    assert proc.returncode != 0, proc.stdout[-3000:]
    assert f"its replication slot {SLOT} in {DB.ip}:5432/shop" in proc.stdout, proc.stdout[-3000:]
    assert connector_running() and _slots() == ["t"]
    changes = Changes.from_now(lab, "recreated")
    try:
        with step("the confirmed deletion"):
            run_playbook(
                "site.yml", *CONNECTORS_ONLY, *absent, "-e", json.dumps({"kafka_connectors_allow_delete": [CONNECTOR]})
            )
        assert _gone() and _slots() == []
        assert superuser(f"SELECT count(*) FROM pg_publication WHERE pubname = '{SLOT}'") == "1"
        rc, out = psql(
            "INSERT INTO orders (customer, amount) SELECT 'while-gone', n FROM generate_series(1, 25) AS n RETURNING id"
        )
        assert rc == 0, out
        ids = {int(i) for i in out.split()}
    finally:
        with step("declared again, until its snapshot is read"):
            run_playbook("site.yml", *CONNECTORS_ONLY)
            wait_until("orders-cdc and its task to run again", connector_running, timeout=180)
    try:

        def snapshot_read() -> bool:
            changes.poll()
            return {i for op, i, _ in changes.events if op == "r"} >= ids

        wait_until("the new connector's snapshot of the rows committed while it was gone", snapshot_read, 300)
        # Its slot made again; streamed from once the snapshot is done.
        wait_until("the new connector streaming from its own slot", lambda: _slots() == ["t"], 120)
        account(
            f"orders-cdc deleted and declared again: rows committed while gone {len(ids)}, "
            f"read by the new connector's snapshot {len({i for op, i, _ in changes.events if op == 'r'} & ids)}, "
            f"snapshot records {sum(1 for op, _, _ in changes.events if op == 'r')}"
        )
    finally:
        changes.close()


def test_an_idle_captured_tables_slot_keeps_its_retained_wal_bounded(lab: Lab):
    """orders idle for minutes while another table writes one and a half times the lab's
    retained-WAL limit: the heartbeat's row (heartbeat.action.query) is the only captured change, and with it the
    connector confirms its way forward, so the slot's retained WAL stays under the limit throughout
    and the alert never fires. The control is the stopped connector's test above: the same writes
    with the slot not advancing fire the alert."""
    prometheus = Prometheus(lab.hosts[lab.groups["monitoring"][0]].ip)
    labels = {"slot_name": SLOT, "instance": "dc1-source-db"}
    limit = int(lab.group_vars(DC)["monitoring_alert_slot_retained_wal_bytes"])
    wait_until("orders-cdc and its task to run", connector_running, timeout=180)
    wait_until("the slot under the limit", lambda: retained_wal(SLOT) < limit, 120)
    orders_before = superuser("SELECT count(*), coalesce(max(id), 0) FROM orders")
    start = wal_position()
    samples: list[int] = []
    with step("orders idle, WAL written elsewhere (about 4 MiB every 10 s) until past 1.5 times the limit"):
        try:
            while wal_position() - start < 1.5 * limit:
                tick = time.monotonic() + 10  # paced: the load of a busy database, not a flood
                write_wal_elsewhere(30000, pad=100)
                samples.append(retained_wal(SLOT))
                assert not prometheus.firing(SLOT_ALERT, **labels)
                time.sleep(max(0.0, tick - time.monotonic()))
        finally:
            drop_wal_filler()
    with step("a minute more of heartbeats, the slot still sampled"):
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            samples.append(retained_wal(SLOT))
            time.sleep(5)
    written = wal_position() - start
    account(
        f"orders idle: WAL written {written / 2**20:.0f} MiB, the slot's retained WAL sampled {len(samples)} times,"
        f" at most {max(samples) / 2**20:.1f} MiB, at the end {samples[-1] / 2**20:.1f} MiB"
        f" (limit {limit / 2**20:.0f} MiB)"
    )
    assert superuser("SELECT count(*), coalesce(max(id), 0) FROM orders") == orders_before, "orders was not idle"
    assert max(samples) < limit, samples
    assert not prometheus.firing(SLOT_ALERT, **labels)
