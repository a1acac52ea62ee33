"""The lab's source database and its change data capture as the tests reach them: psql on the
database host (ansible/lab/source-db.yml wrote build/lab/<dc>/source-db.env), the connector
orders-cdc through the REST API, rows committed at a steady rate, and their changes read back from
the connector's topic."""

from __future__ import annotations

import json
import shlex
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from confluent_kafka import Consumer, TopicPartition

from tests.integration import connect_lab
from tests.integration.conftest import wait_until
from tests.integration.connect_lab import DC
from tests.integration.lab import CLIENT_DIR, ROOT, Lab, properties

if TYPE_CHECKING:
    from tests.integration.spark_lab import CdcJob

LAB = Lab()
CONNECTOR = "orders-cdc"
TOPIC = "shop.public.orders"
DB = LAB.members("source_db", DC)[0]


def env() -> dict[str, str]:
    """build/lab/<dc>/source-db.env, what ansible/lab/source-db.yml writes for people."""
    return properties((CLIENT_DIR / DC / "source-db.env").read_text())


def secret(name: str) -> str:
    return (ROOT / "build/lab/secrets" / name).read_text().split()[0]


def psql_command(user: str = "shop", sslmode: str = "require") -> str:
    """psql on the database host as `user`, over TCP to the database's address (`sslmode` as libpq
    takes it): unaligned, tuples only, stopping at the first error."""
    e = env()
    password = secret("source-db-owner" if user == e["SOURCE_DB_USER"] else "source-db-capture")
    conninfo = (
        f"host={e['SOURCE_DB_HOST']} port={e['SOURCE_DB_PORT']} dbname={e['SOURCE_DB_NAME']}"
        f" user={user} sslmode={sslmode}"
    )
    return f"PGPASSWORD={shlex.quote(password)} psql -X -q -t -A -v ON_ERROR_STOP=1 {shlex.quote(conninfo)}"


def psql(sql: str, *, user: str = "shop", sslmode: str = "require") -> tuple[int, str]:
    """The exit code of `sql` run that way, and what psql printed."""
    out = LAB.testinfra(DB).run(f"{psql_command(user, sslmode)} -c {shlex.quote(sql)}")
    return out.rc, (out.stdout + out.stderr).strip()


def superuser(sql: str) -> str:
    """`sql` as the database's superuser on its socket (what an inspection of roles needs)."""
    return LAB.testinfra(DB).check_output(f"runuser -u postgres -- psql -X -q -t -A -d shop -c {shlex.quote(sql)}")


FILLER = "public.kafkakit_wal_filler"


def write_wal_elsewhere(rows: int, pad: int = 0) -> None:
    """WAL the connector is not sent: `rows` rows (each with `pad` bytes) written to a table outside
    the publication, then truncated. drop_wal_filler() removes the table."""
    superuser(
        f"CREATE TABLE IF NOT EXISTS {FILLER} (n integer, pad text);"
        f" INSERT INTO {FILLER} SELECT n, repeat('x', {pad}) FROM generate_series(1, {rows}) n;"
        f" TRUNCATE {FILLER}"
    )


def drop_wal_filler() -> None:
    superuser(f"DROP TABLE IF EXISTS {FILLER}")


def connector_running() -> bool:
    return connect_lab.connector_running(CONNECTOR)


def topic_ends(consumer: Consumer) -> list[TopicPartition]:
    partitions = consumer.list_topics(TOPIC, timeout=20).topics[TOPIC].partitions
    return [
        TopicPartition(TOPIC, p, consumer.get_watermark_offsets(TopicPartition(TOPIC, p), timeout=20)[1])
        for p in partitions
    ]


@dataclass
class Changes:
    """The change events of the connector's topic from given offsets on, read committed."""

    consumer: Consumer
    events: list[tuple[str, int, dict]] = field(default_factory=list)  # (op, id, row)

    @classmethod
    def from_now(cls, lab: Lab, tag: str) -> Changes:
        c = Consumer(
            {
                **lab.client_conf(DC),
                "group.id": f"kafkakit-cdc-probe-{tag}",
                "isolation.level": "read_committed",
                "enable.auto.commit": "false",
            }
        )
        c.assign(topic_ends(c))
        return cls(c)

    def poll(self) -> None:
        for m in self.consumer.consume(500, timeout=1):
            if m.error() is None and m.value() is not None:
                payload = json.loads(m.value())["payload"]
                # A delete's `before` holds the key only (replica identity default).
                row = payload["after"] or payload["before"]
                self.events.append((payload["op"], row["id"], row))

    def ops(self, ids: set[int]) -> Counter[tuple[str, int]]:
        return Counter((op, i) for op, i, _ in self.events if i in ids)

    def created(self, ids: set[int]) -> tuple[set[int], int]:
        """Of `ids`, those whose insert the topic holds, and how many inserts it holds twice or more."""
        counts = self.ops(ids)
        return {i for op, i in counts if op == "c"}, sum(n - 1 for (op, _), n in counts.items() if op == "c")

    def wait_created(self, ids: set[int], timeout: float = 300) -> None:
        """Until the topic holds the insert of every one of `ids`."""

        def all_arrived() -> bool:
            self.poll()
            return self.created(ids)[0] >= ids

        wait_until("every committed row in the topic", all_arrived, timeout=timeout)

    def close(self) -> None:
        self.consumer.close()


class RowWriter:
    """Commits rows into orders one statement (one transaction) at a time at a steady rate, from
    one psql session on the database host fed by a shell loop, each row tagged; stop() ends the
    loop and returns the ids PostgreSQL committed with the tag."""

    def __init__(self, rate_per_s: int = 20) -> None:
        self.tag = f"load-{uuid.uuid4().hex[:8]}"
        self.stop_file = f"/tmp/{self.tag}.stop"
        self.rate = rate_per_s
        self.host = LAB.testinfra(DB)

    def start(self) -> RowWriter:
        insert = f"INSERT INTO orders (customer, amount) VALUES ('{self.tag}', 1);"
        loop = f"while [ ! -e {self.stop_file} ]; do echo {shlex.quote(insert)}; sleep {1 / self.rate:.3f}; done"
        script = f"({loop}) | {psql_command()} > /tmp/{self.tag}.log 2>&1"
        self.host.check_output(f"nohup bash -c {shlex.quote(script)} > /dev/null 2>&1 & echo started")
        return self

    def committed(self) -> set[int]:
        out = superuser(f"SELECT id FROM orders WHERE customer = '{self.tag}'")
        return {int(i) for i in out.split()}

    def stop(self) -> set[int]:
        self.host.check_output(f"touch {self.stop_file}")
        deadline = time.monotonic() + 30
        while self.host.run(f"pgrep -f {shlex.quote(self.stop_file)}").rc == 0:
            assert time.monotonic() < deadline, "the row writer did not stop"
            time.sleep(0.5)
        log = self.host.check_output(f"cat /tmp/{self.tag}.log")
        assert log == "", f"the row writer's psql failed: {log[-2000:]}"
        return self.committed()


def wait_job_past(job: CdcJob, changes: Changes, timeout: float = 300) -> None:
    """Until the Spark job's last finished micro-batch read up to where the topic ends now."""
    ends = {tp.partition: tp.offset for tp in topic_ends(changes.consumer)}

    def past() -> bool:
        assert job.active(), job.journal()
        read = job.read_up_to()
        return all(read.get(p, -1) >= end for p, end in ends.items())

    wait_until("the Spark job past the changes", past, timeout=timeout)


def retained_wal(slot: str) -> int:
    """Bytes of WAL the database keeps for `slot`: from its restart_lsn to the current position."""
    return int(
        superuser(f"SELECT pg_current_wal_lsn() - restart_lsn FROM pg_replication_slots WHERE slot_name = '{slot}'")
    )


def wal_position() -> int:
    return int(superuser("SELECT pg_current_wal_lsn() - '0/0'::pg_lsn"))
