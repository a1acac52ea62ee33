"""ops/upgrade.yml's refusals (kafkakit.guards.upgrade) are wired where they protect something:
the release change is refused before any play that restarts a node, the features step after the
roll and only once every node was read; and the shell that reads a node reports the release its
process runs (the core jar it holds open, whatever the installation link says) and its storage record."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jinja2
import yaml

from kafkakit.guards.upgrade import NodeRead, parse_node_read
from tests.unit.support import plugin_files

ROOT = Path(__file__).resolve().parents[2]
PLAYS = yaml.safe_load((ROOT / "ansible/ops/upgrade.yml").read_text())
DEFAULTS = yaml.safe_load((ROOT / "roles/kafka_common/defaults/main.yml").read_text())
guards = plugin_files.load("filter/ops_guards.py", "ops_guards_filters")


def tasks(play: dict) -> list[dict]:
    """A play's tasks, blocks flattened in order."""
    out = []
    for task in play.get("tasks", []):
        out += task["block"] if "block" in task else [task]
    return out


def restarts(play: dict) -> bool:
    roles = [x if isinstance(x, str) else x.get("role") for x in play.get("roles", [])]
    return any(r in ("kafka_controller", "kafka_broker") for r in roles)


def test_the_release_change_is_refused_before_any_play_that_restarts_a_node() -> None:
    refusing = [i for i, p in enumerate(PLAYS) if "kafkakit_release_change_refusal" in json.dumps(tasks(p))]
    rolling = [i for i, p in enumerate(PLAYS) if restarts(p)]
    assert refusing == [0] and rolling and min(rolling) > 0
    assert PLAYS[0]["any_errors_fatal"] is True


def test_the_features_step_is_refused_after_reading_every_node_and_before_the_upgrade() -> None:
    (features,) = [p for p in PLAYS if "Upgrade the features" in json.dumps(p)]
    assert PLAYS.index(features) > max(i for i, p in enumerate(PLAYS) if restarts(p))
    names = [t["name"] for t in tasks(features)]
    read = names.index("Read the release every node runs, {{ dc }}")
    refuse = next(i for i, t in enumerate(tasks(features)) if "kafkakit_features_step_refusal" in json.dumps(t))
    upgrade = names.index("Upgrade the features to the new release line, {{ dc }}")
    assert read < refuse < upgrade
    loop = tasks(features)[read]
    assert loop["delegate_to"] == "{{ item }}" and "kafka_cluster_brokers" in loop["loop"]


def test_the_filters_are_the_guards() -> None:
    names = guards.FilterModule().filters()
    for name in ("kafkakit_release_change_refusal", "kafkakit_features_step_refusal", "kafkakit_finalized_metadata"):
        assert name in names
    describe = (
        "Feature: metadata.version\tSupportedMinVersion: 3.3-IV3\tSupportedMaxVersion: 4.4-IV2\t"
        "FinalizedVersionLevel: 4.4-IV2\tEpoch: 9"
    )
    reads = {"dc2-kafka1": "running: /opt/kafka_2.13-4.4.0/libs/kafka_2.13-4.4.0.jar\nrecord: {}"}
    assert "runs 4.3-IV0 at most" in guards.kafkakit_release_change_refusal(describe, "4.3.1", reads)
    assert guards.kafkakit_release_change_refusal(describe, "4.4.0", reads) == ""
    assert guards.kafkakit_features_step_refusal(reads, "4.4.0") == ""
    assert guards.kafkakit_finalized_metadata(describe) == "4.4-IV2" and guards.kafkakit_finalized_metadata("") == "?"


def test_the_node_read_reports_the_jar_the_process_holds_and_the_record(tmp_path: Path) -> None:
    libs = tmp_path / "opt" / "kafka_2.13-4.3.1" / "libs"
    libs.mkdir(parents=True)
    (libs / "kafka_2.13-4.3.1.jar").write_bytes(b"PK")
    (libs / "kafka-clients-4.3.1.jar").write_bytes(b"PK")
    record = tmp_path / "storage-formatted-by.json"
    record.write_text(json.dumps({"/var/lib/kafka/data": "4.3.1"}, indent=1) + "\n")
    # A process holding the jars open, as the JVM does; systemctl names it as the unit's main PID.
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys,time; fs=[open(p,'rb') for p in sys.argv[1:]]; print('ok', flush=True); time.sleep(60)",
            str(libs / "kafka-clients-4.3.1.jar"),
            str(libs / "kafka_2.13-4.3.1.jar"),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "ok"
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        (bin_dir / "systemctl").write_text(f'#!/bin/sh\n[ "$5" = kafka ] && echo {holder.pid} || echo 0\n')
        (bin_dir / "systemctl").chmod(0o755)
        variables = {
            **DEFAULTS,
            "kafka_storage_record": str(record),
            "kafka_node_read_host": "dc2-kafka1",
            "inventory_hostname": "dc2-ctrl1",
            "groups": {"kafka_controller": ["dc2-ctrl1"], "kafka_broker": ["dc2-kafka1"]},
        }
        env = jinja2.Environment(undefined=jinja2.StrictUndefined)
        unit = env.from_string(variables["kafka_node_read_unit"]).render(variables).strip()
        cmd = env.from_string(variables["kafka_node_read_cmd"]).render({**variables, "kafka_node_read_unit": unit})

        def read() -> NodeRead:
            done = subprocess.run(
                ["/bin/sh", "-c", cmd],
                capture_output=True,
                text=True,
                check=True,
                env={**os.environ, "PATH": f"{bin_dir}:/usr/bin:/bin"},
            )
            return parse_node_read(done.stdout)

        assert unit == "kafka"
        assert read() == NodeRead("4.3.1", {"/var/lib/kafka/data": "4.3.1"})
        record.unlink()
        assert read() == NodeRead("4.3.1", {})
    finally:
        holder.kill()
        holder.wait()
    # Not running: no release (the features step then counts the node as not rolled).
    assert read().running == ""
