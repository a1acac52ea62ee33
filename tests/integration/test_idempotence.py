"""A second site.yml run on a deployed lab changes nothing, and a dry run (--check --diff) with every
secret changed runs through on a host of every kind without a failure and shows no secret, neither
the new value nor the one in use. (That dry run is the only one: a check run on an unchanged lab
would repeat the second real run's changed=0 at the same cost.)"""

from __future__ import annotations

import json
import uuid

from tests.integration.lab import CLIENT_DIR, Lab
from tests.integration.playbooks import LOGS, playbook_process, recap, run_playbook

# The secrets a dry run can render with another value. Three stay as they are because the run
# itself uses them: the admin's password (kafka_resources logs in to Kafka with it), and the CA
# passphrase (kafka_pki opens the CA key); for those, and for every other secret in use (the
# users' passwords among them), the current value must not show either.
CANARIES = (
    "kafka_keystore_password",
    "kafka_zookeeper_password",
    "zookeeper_keystore_password",
    "kafka_mirrormaker_password",
    "kafka_spark_password",
    "kafka_monitoring_password",
    "kafka_connect_password",
    "kafka_connect_keystore_password",
    "monitoring_scrape_password",
    "spark_auth_secret",
    # A connector's secret (orders-cdc's database password, in the workers' secrets folder).
    "postgresql_capture_password",
    # The monitoring host's exporter logs in to the source database with this one.
    "postgresql_monitor_password",
)
# The hosts whose files hold a canary: a dry run that changes nothing there proves nothing.
RENDERS_A_CANARY = (
    "kafka_broker",
    "zookeeper",
    "kafka_controller",
    "mirrormaker",
    "kafka_connect",
    "monitoring",
    "spark_master",
)


def test_second_site_run_reports_no_change():
    # Over Mitogen, as every run of the suite (playbooks.STRATEGY): whether a task changes
    # something is its module's answer, run on the host whatever the strategy.
    stats = recap(run_playbook("site.yml"))
    assert stats, "no PLAY RECAP found"
    changed = {h: s["changed"] for h, s in stats.items() if s["changed"]}
    assert changed == {}, f"hosts reporting changes on a no-op run: {changed}"
    assert all(s["failed"] == 0 and s["unreachable"] == 0 for s in stats.values())


def test_a_dry_run_with_every_secret_changed_shows_no_secret(lab: Lab):
    canaries = {name: f"canary-{name.replace('_', '-')}-{uuid.uuid4().hex[:12]}" for name in CANARIES}
    in_use = {
        path.name: path.read_text().split()[0]
        for path in sorted((CLIENT_DIR / "secrets").iterdir())
        if path.is_file() and path.read_text().strip()
    }
    assert {"kafka-admin", "ca-passphrase", "kafka-keystore"} <= set(in_use), sorted(in_use)
    # One host of each kind in each data centre renders every template a secret goes into (and
    # holds the run_once and per-DC steps); every Spark worker too: the master's authorized_keys
    # lists the play's workers.
    firsts = sorted(
        {
            next(n for n in names if lab.hosts[n].dc == dc)
            for group, names in lab.groups.items()
            if group in RENDERS_A_CANARY
            for dc in {lab.hosts[n].dc for n in names}
        }
    )
    workers = lab.groups.get("spark_worker", [])
    extra = LOGS / "secret-canaries.json"
    LOGS.mkdir(parents=True, exist_ok=True)
    extra.write_text(json.dumps(canaries))
    # What is printed, and hidden, is the modules' and the callback's answer, whatever the strategy.
    proc = playbook_process(
        "site.yml",
        "--check",
        "--diff",
        "-e",
        f"@{extra}",
        "--limit",
        ",".join([*firsts, *workers, "localhost"]),
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-3000:]
    stats = recap(output)
    assert set(stats) == {*firsts, *workers, "localhost"}, sorted(stats)
    assert all(s["failed"] == 0 and s["unreachable"] == 0 for s in stats.values()), stats
    shown = [name for name, value in canaries.items() if value in output]
    assert shown == [], f"the dry run printed the new value of {shown}"
    leaked = [name for name, value in in_use.items() if value in output]
    assert leaked == [], f"the dry run printed the secret in use of {leaked}"
    # Positive control: the canaries reached the files (each of these hosts would change), so a
    # diff of them would have been printed had a task not hidden it.
    unchanged = [h for h in firsts if stats.get(h, {}).get("changed", 0) == 0]
    assert unchanged == [], f"the canaries changed nothing on {unchanged}: the dry run did not render them"
