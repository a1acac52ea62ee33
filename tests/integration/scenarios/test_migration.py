"""ZooKeeper -> KRaft on a live cluster, with every message accounted for. dc3, a third data centre
in ZooKeeper mode (Kafka 3.9, three brokers over three racks, its own ensemble, the lab's users,
ACLs and topics, and the three controllers it migrates to), is started for this test and removed
after it, even when it fails; dc1 and dc2 are not touched.

Under a transactional producer (idempotent, acks=all; a message is acknowledged when its
transaction commits) and a read_committed consumer group that commits every message, dc3 goes
through ops/migrate-to-kraft.yml to dual-write in one run, back to ZooKeeper with
ops/rollback-to-zookeeper.yml, across again phase by phase and finalized; then its inventory says
kraft and site.yml changes nothing; then ops/upgrade.yml takes it to the kit's Kafka 4.x, under
load too. After every step: an existing SCRAM user logs in, a granted write works and a denied one
is refused, a password changed before the migration is the one that works; topic configs and a
group's committed offsets are the ones from before; and a user's client quotas, after each step
that moves where the metadata is read from."""

from __future__ import annotations

import re
import shutil
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest
from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource

from kafkakit.cluster.admin import read_client_conf
from kafkakit.cluster.quotas import tool_class
from kafkakit.cluster.scram_users import AdminScramStore, apply_users, login_checker, parse_users
from tests.integration.accounting import account
from tests.integration.clients import (
    consumer,
    denied,
    produce_one,
    produce_sequence,
)
from tests.integration.conftest import wait_until
from tests.integration.lab import CLIENT_DIR, ROOT, Lab
from tests.integration.load import Load
from tests.integration.playbooks import (
    LOGS,
    module_process,
    playbook_process,
    recap,
    restart_order,
    run_playbook,
    task_started,
)
from tests.integration.quorum import controller_by_id, leader

pytestmark = pytest.mark.faults

DC = "dc3"
KRAFT_STATE = ROOT / "build/lab/pki/kraft/dc3.yml"
UPGRADE_TO = "4.4.0"  # Makefile: KAFKA_KRAFT_VERSION
MIGRATE = "ops/migrate-to-kraft.yml"
ROLLBACK = "ops/rollback-to-zookeeper.yml"
# The operations (migrate, rollback, upgrade) on the default strategy, as when this test passed
# (2026-11-27). Over Mitogen one run lost two dc3 brokers for 75 s (unreachable; their Kafka
# clients timed out too) and a second ran 3x slower (the dual-write run 750 s instead of 249):
# not understood yet. Its site.yml runs stay over Mitogen (playbooks.STRATEGY), as then.
OPS_STRATEGY = "linear"


def lab_up(dc3: str) -> None:
    tag = (ROOT / "build/lab-image.tag").read_text().strip()
    run_playbook("lab/lab-up.yml", "-e", f"lab_image={tag}", "-e", f"lab_dc3={dc3}")


@pytest.fixture(scope="module")
def dc3() -> Iterator[Lab]:
    """dc3 deployed by site.yml on its own hosts; its containers, client files and KRaft state gone
    afterwards, whatever happened."""
    try:
        lab_up("true")
        run_playbook("site.yml", "--limit", f"{DC}:localhost")
        yield Lab()
    finally:
        lab_up("false")
        shutil.rmtree(CLIENT_DIR / DC, ignore_errors=True)
        KRAFT_STATE.unlink(missing_ok=True)


def user(name: str) -> dict[str, str]:
    return read_client_conf(CLIENT_DIR / DC / "users" / f"{name}.conf")


@dataclass
class Checks:
    """What must hold after every step, and what a step's playbook took."""

    lab: Lab
    temp_user: str
    temp_password: str
    old_password: str
    offsets_before: dict[int, int]
    timings: dict[str, float] = field(default_factory=dict)
    # (time.monotonic(), what): the steps' starts and ends and the load's events, so a failure of
    # the load says during which step it happened.
    events: list[tuple[float, str]] = field(default_factory=list)

    # (name, time.time() at its start and end, output with each task's start): where a window
    # without a commit fell.
    runs: list[tuple[str, float, float, str]] = field(default_factory=list)

    def step(self, name: str, playbook: str, *extra: str, quotas: bool = True) -> str:
        start = time.time()
        self.events.append((time.monotonic(), f"start: {name}"))
        out = run_playbook(
            playbook,
            "-e",
            f"kraft_migrate_dc={DC}",
            "-e",
            f"kraft_rollback_dc={DC}",
            *extra,
            strategy=OPS_STRATEGY,
            task_times=True,
        )
        self.events.append((time.monotonic(), f"end: {name}"))
        self.keep(name, start, out)
        self.hold(name, quotas)
        return out

    def keep(self, name: str, start: float, out: str) -> None:
        """A step's run that began at `start` (time.time()) and printed `out`: its time, its place
        for during(), and its whole output (run_playbook keeps only a playbook's last run)."""
        end = time.time()
        self.timings[name] = end - start
        self.runs.append((name, start, end, out))
        (LOGS / f"migration-step{len(self.runs)}.log").write_text(out)

    def during(self, at: float) -> str:
        """The step and task running at `at` (time.time())."""
        for name, start, end, out in self.runs:
            if start <= at <= end:
                tasks = [task for began, task in task_started(out) if began <= at]
                return f"{name}, task {tasks[-1] if tasks else '(before the first)'!r}"
        before = [name for name, start, _, _ in self.runs if start <= at]
        return f"between steps, after {before[-1]!r}" if before else "before the first step"

    def hold(self, after: str, quotas: bool = True) -> None:
        admin_conf = self.lab.client_conf(DC)
        # A granted write goes through and a denied one is refused, by SCRAM logins made now.
        assert produce_one(user("orders-writer"), "orders") is None, f"after {after}: the writer cannot write"
        assert denied(produce_one(user("no-acl"), "orders")), f"after {after}: a user without ACLs wrote"
        # The password set before the migration works, the one before it does not.
        settings = {k: v for k, v in admin_conf.items() if k != "bootstrap.servers"}
        can_login = login_checker(admin_conf["bootstrap.servers"], settings)
        assert can_login(self.temp_user, self.temp_password, "SCRAM-SHA-512"), f"after {after}: changed password"
        assert not can_login(self.temp_user, self.old_password, "SCRAM-SHA-512"), f"after {after}: old password"
        # Topic configs and a group's committed offsets are the ones from before.
        admin = AdminClient(admin_conf)
        res = ConfigResource(ConfigResource.Type.TOPIC, "orders")
        configs = admin.describe_configs([res])[res].result(30)
        assert configs["retention.ms"].value == "604800000", f"after {after}: orders' retention.ms"
        assert committed(admin, "orders-before") == self.offsets_before, f"after {after}: committed offsets"
        # Kafka's tool (a JVM, 10-20 s on the lab) after each step that moves where the metadata
        # is read from: KRaft brokers, back to ZooKeeper, finalized, upgraded.
        if quotas:
            assert user_quotas(self.lab) == QUOTAS, f"after {after}: {QUOTA_USER}'s quotas"


def committed(admin: AdminClient, group: str) -> dict[int, int]:
    request = ConsumerGroupTopicPartitions(group, [TopicPartition("orders", p) for p in range(6)])
    result = admin.list_consumer_group_offsets([request])[group].result(30)
    return {tp.partition: tp.offset for tp in result.topic_partitions if tp.offset >= 0}


# Client quotas: confluent-kafka has no client-quota API, so Kafka's own tool on a dc3 broker asks,
# with the admin login in a root-only file there (copy's content is no_log: never printed).
QUOTA_HOST = "dc3-kafka1"
QUOTA_USER = "orders-writer"
QUOTAS = {"consumer_byte_rate": 2097152.0, "producer_byte_rate": 1048576.0}
QUOTA_ADMIN = "/root/migration-test-admin.properties"


def config_command(lab: Lab, *args: str) -> str:
    """Kafka's ConfigCommand on QUOTA_HOST, of the release its broker runs (4.4 moved the class)."""
    bootstrap = lab.client_conf(DC)["bootstrap.servers"]
    found = re.findall(r"Kafka version: (\S+)", lab.journal_of_this_start(QUOTA_HOST, "kafka"))
    assert found, f"{QUOTA_HOST}: no Kafka version in its broker's journal"
    return lab.testinfra(QUOTA_HOST).check_output(
        f"/usr/local/bin/kafkakit-run {tool_class(found[-1])} --bootstrap-server %s --command-config %s "
        + " ".join(args),
        bootstrap,
        QUOTA_ADMIN,
    )


def user_quotas(lab: Lab) -> dict[str, float]:
    out = config_command(lab, "--describe", "--entity-type", "users", "--entity-name", QUOTA_USER)
    return {k: float(v) for k, v in re.findall(r"(\w+_rate)=([0-9.]+)", out)}


def set_quotas(lab: Lab) -> None:
    conf = lab.client_conf(DC)
    jaas = (
        "org.apache.kafka.common.security.scram.ScramLoginModule required "
        f'username="{conf["sasl.username"]}" password="{conf["sasl.password"]}";'
    )
    content = (
        f"security.protocol=SASL_SSL\nsasl.mechanism={conf['sasl.mechanisms']}\nsasl.jaas.config={jaas}\n"
        "ssl.truststore.type=PEM\nssl.truststore.location=/etc/kafka/tls/truststore.pem\n"
    )
    proc = module_process(QUOTA_HOST, "ansible.builtin.copy", {"dest": QUOTA_ADMIN, "content": content, "mode": "0600"})
    assert proc.returncode == 0, "could not write the tool's admin login on " + QUOTA_HOST
    assert user_quotas(lab) == {}, "the user has quotas before the test set them"
    rates = ",".join(f"{k}={int(v)}" for k, v in QUOTAS.items())
    config_command(lab, "--alter", "--entity-type", "users", "--entity-name", QUOTA_USER, "--add-config", rates)
    # Positive control of every later check: the tool reads back what it set.
    assert user_quotas(lab) == QUOTAS


def prepare(lab: Lab) -> Checks:
    """Before the migration: a user whose password then changes, a user's quotas, and a group with
    committed offsets."""
    conf = lab.client_conf(DC)
    set_quotas(lab)
    admin = AdminClient(conf)
    name, old, new = f"migration-{uuid.uuid4().hex[:6]}", f"old-{uuid.uuid4().hex}", f"new-{uuid.uuid4().hex}"
    settings = {k: v for k, v in conf.items() if k != "bootstrap.servers"}
    can_login = login_checker(conf["bootstrap.servers"], settings)
    store = AdminScramStore(admin)
    for password in (old, new):
        users = parse_users([{"name": name, "password": password}], ["admin"])
        apply_users(store, users, can_login, protected=["admin"])
    wait_until("the changed password works", lambda: can_login(name, new, "SCRAM-SHA-512"), 60)

    produce_sequence(conf, "orders", 60, keys=["before"])
    c = consumer(conf, "orders-before")
    c.subscribe(["orders"])
    try:
        got = 0
        deadline = time.monotonic() + 60
        while got < 30 and time.monotonic() < deadline:
            msg = c.poll(0.5)
            if msg is not None and not msg.error():
                got += 1
                c.commit(message=msg, asynchronous=False)
    finally:
        c.close()
    offsets = committed(admin, "orders-before")
    assert sum(offsets.values()) > 0
    return Checks(lab, name, new, old, offsets)


def broker_settings(lab: Lab) -> list[str]:
    """Each dc3 broker's metadata settings as it runs them: KRaft broker, migrating or plain ZooKeeper."""
    found = []
    for b in lab.brokers(DC):
        text = lab.testinfra(b).file("/etc/kafka/server.properties").content_string
        mode = "kraft" if re.search(r"^process\.roles=broker$", text, re.M) else "zookeeper"
        if re.search(r"^zookeeper\.metadata\.migration\.enable=true$", text, re.M):
            mode += "+migration"
        found.append(mode)
    return found


def controllers_running(lab: Lab) -> list[bool]:
    return [lab.testinfra(c).service("kafka-controller").is_running for c in lab.controllers(DC)]


def kafka_versions(lab: Lab) -> set[str]:
    versions = set()
    nodes = [(b, "kafka") for b in lab.brokers(DC)] + [(c, "kafka-controller") for c in lab.controllers(DC)]
    for node, unit in nodes:
        host = lab.testinfra(node)
        since = host.check_output(f"systemctl show -p ActiveEnterTimestamp --value {unit}")
        log = host.check_output(f"journalctl -u {unit} --since '{since}' --no-pager -o cat")
        found = re.findall(r"Kafka version: (\S+)", log)
        versions.add(found[-1] if found else "?")
    return versions


def test_dc3_migrates_to_kraft_rolls_back_migrates_again_and_upgrades_under_load(dc3: Lab) -> None:
    lab = dc3
    assert broker_settings(lab) == ["zookeeper"] * 3 and not any(controllers_running(lab))
    checks = prepare(lab)
    checks.hold("deploying dc3", quotas=False)  # prepare() just read them back
    conf = lab.client_conf(DC)
    load = Load(conf, f"migration-{uuid.uuid4().hex[:8]}", checks.events)
    load.events.append((time.monotonic(), "load started"))
    try:
        # A finalize asked for before dual-write: refused where the run reads the phase (the soak
        # starts in dual-write), nothing changed.
        early = run_finalize_refused()
        assert "starts in dual-write" in early, early[-2000:]
        assert broker_settings(lab) == ["zookeeper"] * 3 and not any(controllers_running(lab))

        # To dual-write in one run (phases 1-4).
        checks.step("to dual-write, one run (phases 1-4)", MIGRATE)
        assert all(controllers_running(lab)) and broker_settings(lab) == ["kraft"] * 3
        # Finalizing waits for the soak (24 h unless set): refused before any later phase runs.
        early = run_finalize_refused()
        assert "of the 24 h soak" in early and broker_settings(lab) == ["kraft"] * 3

        # Back to ZooKeeper from dual-write: a healthy ZooKeeper cluster, the controllers gone.
        checks.step("rollback from dual-write", ROLLBACK, "-e", f"kraft_rollback_confirm={DC}")
        assert broker_settings(lab) == ["zookeeper"] * 3 and not any(controllers_running(lab))
        assert not KRAFT_STATE.exists()

        # Across again phase by phase, each checked where it stops; then on to finalized in the
        # run that takes the brokers to KRaft (a soak of 0 h).
        checks.step("controllers (phase 1-2)", MIGRATE, "-e", "kraft_migrate_to=controllers", quotas=False)
        assert all(controllers_running(lab)) and broker_settings(lab) == ["zookeeper"] * 3
        checks.step("brokers to migration mode (phase 3)", MIGRATE, "-e", "kraft_migrate_to=migrated", quotas=False)
        assert broker_settings(lab) == ["zookeeper+migration"] * 3
        checks.step(
            "brokers to KRaft and finalize (phases 4-5)",
            MIGRATE,
            "-e",
            "kraft_finalize=true",
            "-e",
            "kraft_soak_hours=0",
        )
        assert broker_settings(lab) == ["kraft"] * 3
        for c in lab.controllers(DC):
            text = lab.testinfra(c).file("/etc/kafka/controller.properties").content_string
            assert "zookeeper" not in text, f"{c.name} still migrating"
        migration = load.finish("migration and rollback")
        migration += "\n  its longest window without a commit " + load.longest_window(checks)
    finally:
        load.stop.set()
        load.reader.stop.set()

    # The inventory an operator writes afterwards: dc3 is KRaft, its ZooKeeper out; site.yml
    # changes nothing.
    lab_up("migrated")
    lab = Lab()
    assert lab.kraft(DC)
    # ZooKeeper left the brokers' groups; its volume was its own (roles/storage), so not even the
    # brokers' volume helper changes.
    out = run_playbook("site.yml", "--limit", f"{DC}:localhost")
    assert changed_tasks(out) == {}, changed_tasks(out)
    assert {h: st["changed"] for h, st in recap(out).items() if st["changed"]} == {}

    # On to the kit's Kafka 4.x, under load: controllers first, then brokers, then the features.
    active = leader(lab, DC)
    assert active > 0, "no quorum leader before the upgrade"
    upgrade = Load(conf, f"upgrade-{uuid.uuid4().hex[:8]}")
    start = time.time()
    try:
        out = run_playbook(
            "ops/upgrade.yml",
            "-e",
            f"roll_dc={DC}",
            "-e",
            f"kafka_version={UPGRADE_TO}",
            strategy=OPS_STRATEGY,
            task_times=True,
        )
    finally:
        upgrade.stop.set()
    checks.keep(f"upgrade to {UPGRADE_TO}", start, out)
    upgraded = upgrade.finish(f"upgrade 3.9 -> {UPGRADE_TO}")
    upgraded += "\n  its longest window without a commit " + upgrade.longest_window(checks)
    assert kafka_versions(lab) == {UPGRADE_TO}
    assert sorted(restart_order(out)) == sorted(b.name for b in lab.brokers(DC))
    assert sorted(restart_order(out, "kafka-controller")) == sorted(c.name for c in lab.controllers(DC))
    # The active controller last: one leader change in the whole roll.
    assert restart_order(out, "kafka-controller")[-1] == controller_by_id(lab, DC, active).name
    banners = re.findall(r"^TASK \[roll : Restart (\S+) on \S+\]", out, re.M)
    assert banners.index("kafka") > len(banners) - 1 - banners[::-1].index("kafka-controller")
    assert re.search(r"TASK \[Upgrade the features to the new release line, dc3\]", out), "no features step"
    checks.hold(f"the upgrade to {UPGRADE_TO}")

    account(f"{migration}\n{upgraded}")
    for step, seconds in checks.timings.items():
        account(f"  {step}: {seconds:.0f} s")


def changed_tasks(output: str) -> dict[str, set[str]]:
    """Task name -> the hosts on which it reported changed, from a playbook's output."""
    found: dict[str, set[str]] = {}
    task = ""
    for line in output.splitlines():
        if m := re.match(r"^TASK \[(.+)\] \*+$", line):
            task = m.group(1)
        elif m := re.match(r"^changed: \[([^\]]+)\]", line):
            found.setdefault(task, set()).add(m.group(1).split(" ")[0])
    return found


def run_finalize_refused() -> str:
    """A finalize before the soak: refused where the run reads the phase, before any later phase
    ran; the output."""
    proc = playbook_process(MIGRATE, "-e", f"kraft_migrate_dc={DC}", "-e", "kraft_finalize=true", strategy=OPS_STRATEGY)
    assert proc.returncode != 0, "finalized before the soak"
    assert "PLAY [Phase 1 of 5" in proc.stdout and "PLAY [Phase 2 of 5" not in proc.stdout, proc.stdout[-2000:]
    return proc.stdout
