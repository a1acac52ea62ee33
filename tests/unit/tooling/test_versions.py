"""The version table: read from where each version is pinned, and the README's copy kept true."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kafkakit.tooling import versions

ROOT = Path(__file__).resolve().parents[3]


def test_the_readme_table_is_the_generated_one():
    block = versions.readme_block((ROOT / "README.md").read_text())
    assert block == versions.render(versions.pins()), "README versions table is stale: run `make versions`"


def test_pins_come_from_the_role_defaults_and_the_lock(tmp_path):
    (tmp_path / "roles/kafka_common/defaults").mkdir(parents=True)
    for role, var in [(r, v) for _, r, v, _ in versions.ROLE_PINS]:
        d = tmp_path / "roles" / role / "defaults"
        d.mkdir(parents=True, exist_ok=True)
        with (d / "main.yml").open("a") as f:
            f.write(f"{var}: 9.9.{len(role)}\n")
    lock = "\n".join(f"{pkg.replace('_', '-').upper()}==1.{i}" for i, (_, pkg, _) in enumerate(versions.LOCK_PINS))
    (tmp_path / "requirements.lock").write_text(lock + "\n")
    (tmp_path / versions.PLUGINS_DECLARED_IN).parent.mkdir(parents=True)
    (tmp_path / versions.PLUGINS_DECLARED_IN).write_text(
        "kafka_connect_plugins:\n  - {name: other, version: '1'}\n  - {name: debezium-postgres, version: 7.7.7.Final}\n"
    )
    for _, path, var, _ in versions.INVENTORY_PINS:
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        with (tmp_path / path).open("a") as f:  # dc1.yml also declares the plugins
            f.write(f"other: 1\n{var}: 8.8.8\n")
    got = {p.component: p.version for p in versions.pins(tmp_path)}
    assert got["Debezium PostgreSQL connector (Connect plugin)"] == "7.7.7.Final"
    assert got["Apache Kafka (the lab's MirrorMaker 2 in its KRaft data centre)"] == "8.8.8"
    assert got["Apache Kafka (the lab's Connect workers)"] == "8.8.8"
    assert got["Apache Kafka (ZooKeeper mode)"] == f"9.9.{len('kafka_common')}"
    aws = [pkg for _, pkg, _ in versions.LOCK_PINS].index("pulumi_aws")
    assert got["Pulumi AWS provider"] == f"1.{aws}"  # pulumi_aws matched as PULUMI-AWS


def test_a_missing_pin_is_an_error(tmp_path):
    (tmp_path / "requirements.lock").write_text("ansible==1\n")
    with pytest.raises(KeyError, match="ansible-core"):
        versions.locked("ansible-core", tmp_path)


def test_a_stale_readme_is_refused_and_rewritten(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n{versions.BEGIN}\n| old |\n{versions.END}\nafter\n")
    assert versions.main(["--check", str(readme)]) == 1
    assert versions.main(["--write", str(readme)]) == 0
    assert versions.main(["--check", str(readme)]) == 0
    assert readme.read_text().endswith(f"{versions.END}\nafter\n")


def test_the_makefile_takes_component_versions_from_the_roles():
    makefile = (ROOT / "Makefile").read_text()
    for name in ("KAFKA_VERSION", "KAFKA_KRAFT_VERSION", "ZOOKEEPER_VERSION", "SPARK_VERSION", "JMX_EXPORTER_VERSION"):
        line = re.search(rf"^{name}\s*\?=(.*)$", makefile, re.M)
        assert line and "role_default" in line.group(1), f"{name} must be read from its role's defaults"


def test_the_kraft_data_centres_run_the_pinned_kraft_release():
    pinned = versions.role_default("kafka_common", "kafka_kraft_version")
    lab_dc2 = (ROOT / "inventories/local/group_vars/dc2.yml").read_text()
    assert re.search(rf"^kafka_version: {re.escape(pinned)}\b", lab_dc2, re.M), "the lab runs another KRaft release"
    from infra.outputs import KRAFT_KAFKA_VERSION

    assert pinned == KRAFT_KAFKA_VERSION, "infra/outputs.py's copy of kafka_kraft_version is stale"


def test_the_lag_exporter_runs_the_locked_client_release():
    locked = versions.locked("confluent-kafka")
    assert versions.role_default("monitoring", "monitoring_confluent_kafka_version") == locked
    # make artifacts fetches its wheel hash-pinned, for that release.
    pins = (ROOT / f"ansible/artifacts/confluent-kafka-{locked}.txt").read_text()
    assert re.search(rf"^confluent-kafka=={re.escape(locked)} --hash=sha256:[0-9a-f]{{64}}$", pins, re.M)
