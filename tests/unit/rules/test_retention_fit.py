"""The warning that the declared retention can outgrow a broker's data volume: the arithmetic,
and the kafka_broker role's verify step run for real (ansible-playbook, on this machine's disk)."""

from __future__ import annotations

import os
from pathlib import Path

import yaml

from kafkakit.rules.retention_fit import DEFAULT_SEGMENT_BYTES, retention_need
from tests.unit.support.ansible_run import REPO, run_playbook

GIB = 1024**3
MIB = 1024**2


def test_a_size_bounded_topic_counts_its_replicas_on_one_broker_and_a_segment_each():
    need = retention_need(
        [{"name": "big", "partitions": 6, "replication_factor": 3, "configs": {"retention.bytes": str(GIB)}}],
        brokers=3,
    )
    # 18 replicas over 3 brokers: 6 each, each up to retention.bytes + one 1 GiB segment.
    assert need.bytes == 6 * (GIB + DEFAULT_SEGMENT_BYTES)
    assert need.topics == ["big: 6 replicas x (1.0 GiB + 1.0 GiB) = 12.0 GiB"]
    assert need.time_only == []


def test_uneven_spreads_round_up_and_segment_bytes_is_read():
    topic = {"name": "t", "partitions": 4, "replication_factor": 2, "configs": {"retention.bytes": 100 * MIB}}
    need = retention_need([{**topic, "configs": {**topic["configs"], "segment.bytes": 10 * MIB}}], brokers=3)
    assert need.bytes == 3 * (110 * MIB)  # ceil(8 / 3) = 3 replicas on the fullest broker


def test_time_only_and_absent_topics_are_not_counted_and_broker_defaults_apply():
    topics = [
        {"name": "events", "partitions": 3, "replication_factor": 3, "configs": {"retention.ms": "604800000"}},
        {"name": "gone", "partitions": 3, "replication_factor": 3, "state": "absent"},
    ]
    need = retention_need(topics, brokers=3)
    assert (need.bytes, need.time_only) == (0, ["events"])
    # A broker-wide log.retention.bytes bounds every topic that sets none of its own.
    broker_wide = {"log.retention.bytes": GIB, "log.segment.bytes": MIB}
    bounded = retention_need(topics, brokers=3, broker_properties=broker_wide)
    assert bounded.bytes == 3 * (GIB + MIB) and bounded.time_only == []


PLAY = """
- name: Verify one broker's data volume against the declared retention
  hosts: broker
  gather_facts: false
  tasks:
    - name: The kafka_broker role's verify step
      ansible.builtin.include_role:
        name: kafka_broker
        tasks_from: volume-fit.yml
"""


def verify(tmp_path: Path, retention_bytes: int) -> str:
    data = tmp_path / "data"
    data.mkdir(exist_ok=True)
    inventory = {
        "all": {
            "children": {
                "kafka_broker": {"hosts": {"broker": None}},
                "dc1": {
                    "hosts": {"broker": None},
                    "vars": {
                        "kafka_topics": [
                            {
                                "name": "clicks",
                                "partitions": 3,
                                "replication_factor": 1,
                                "configs": {"retention.bytes": retention_bytes, "segment.bytes": MIB},
                            }
                        ]
                    },
                },
            },
            # What kafka_common's spec asks of a broker; only kafka_data_dirs is read here.
            "vars": {
                "dc": "dc1",
                "private_ip": "127.0.0.1",
                "broker_id": 1,
                "kafka_pki_ca_dir": str(tmp_path),
                "kafka_admin_password": "unused",
                "kafka_data_dirs": [str(data)],
            },
        }
    }
    (tmp_path / "inventory.yml").write_text(yaml.safe_dump(inventory))
    (tmp_path / "play.yml").write_text(PLAY)
    proc = run_playbook(tmp_path / "inventory.yml", tmp_path / "play.yml", tmp_path=tmp_path, local=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    return proc.stdout + proc.stderr


def test_the_verify_step_warns_when_retention_outgrows_the_volume_and_not_when_it_fits(tmp_path: Path):
    st = os.statvfs(tmp_path)
    volume = st.f_blocks * st.f_frsize
    # Three replicas on the one broker, each up to retention + a 1 MiB segment: just over the
    # volume, then far below 80 % of it (the positive control: same play, same disk).
    over = verify(tmp_path, volume // 3)
    assert "the declared retention can take" in over and "clicks: 3 replicas" in over
    fits = verify(tmp_path, MIB)
    assert "the declared retention can take" not in fits
    assert "ok: [broker]" in fits  # the step ran, and passed quietly


def test_the_verify_ratio_falls_back_to_the_disk_alerts_threshold():
    monitoring = yaml.safe_load((REPO / "roles/monitoring/defaults/main.yml").read_text())
    task = (REPO / "roles/kafka_broker/tasks/volume-fit.yml").read_text()
    threshold = monitoring["monitoring_alert_data_disk_used_ratio"]
    assert f"monitoring_alert_data_disk_used_ratio | default({threshold})" in task
