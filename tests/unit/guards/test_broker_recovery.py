"""ops/recover-broker.yml's rules (kafkakit.guards.log_reclaim, kafkakit.guards.operations) and its host module
kafkakit_log_dirs on a real directory tree; the whole operation on a broker whose disk a real load
filled is the disk-full scenario (tests/integration/scenarios/test_disk_full.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kafkakit.guards.log_reclaim import canonical_id, reclaimable, recover_refusal
from kafkakit.guards.operations import broker_recover_refusal
from tests.unit.support import plugin_files

log_dirs = plugin_files.load("modules/kafkakit_log_dirs.py", "kafkakit_log_dirs")

# Ids as the cluster reports them: confluent-kafka prints the standard base64 alphabet.
LIVE = {
    "orders": "QFYEqj2ARlGCTAYXdAlFSA",
    "__consumer_offsets": "DOZthOBPQQKziDgloQ+LLQ",
    "mm2": "Tv/gEw7gTQ+/EY7lczNJ1g",
}
D = "/var/lib/kafka/data"


def entry(name: str, topic_id: str | None, mib: int = 1) -> dict:
    return {"dir": D, "name": name, "topic_id": topic_id, "bytes": mib * 2**20}


ENTRIES = [
    entry("orders-0", LIVE["orders"], 300),
    # partition.metadata writes Kafka's URL-safe alphabet: the same ids, and live.
    entry("__consumer_offsets-3", "DOZthOBPQQKziDgloQ-LLQ", 5),
    entry("mm2-7", "Tv_gEw7gTQ-_EY7lczNJ1g", 4),
    # A name the cluster has under another id (deleted and made again): kept for the broker.
    entry("orders-1", "b3JkZXJzYmVmb3JlcmVtYWRl", 7),
    entry("__cluster_metadata-0", "AAAAAAAAAAAAAAAAAAAAAQ", 50),
    entry("fill-0", "dGhpc3RvcGljaXNnb25lIQ", 1500),  # a topic deleted while the broker was down
    entry("old-2.4f1c0de-delete", None, 20),
    entry("gone-1.77aa-stray", "c3RyYXlzdHJheXN0cmF5eQ", 10),
    entry("nometa-0", None, 40),  # no partition.metadata: not known deleted, kept
]
FULL = [{"dir": D, "size_bytes": 2000 * 2**20, "avail_bytes": 0}]
ROOMY = [{"dir": D, "size_bytes": 2000 * 2**20, "avail_bytes": 1500 * 2**20}]


def test_only_what_the_cluster_deleted_is_reclaimable_largest_first() -> None:
    found = reclaimable(ENTRIES, LIVE)
    assert [e["name"] for e in found] == ["fill-0", "old-2.4f1c0de-delete", "gone-1.77aa-stray"]
    assert "topic fill (id dGhpc3RvcGljaXNnb25lIQ) is no topic of the cluster" in found[0]["why"]
    assert "dropped by Kafka" in found[1]["why"]


def test_ids_compare_across_base64_alphabets_so_no_live_partition_looks_deleted() -> None:
    # The lab once lost a broker's every replica to this: ids compared as text, and each one
    # holding '+' or '/' looked like a deleted topic's.
    kept = {e["name"] for e in ENTRIES} - {e["name"] for e in reclaimable(ENTRIES, LIVE)}
    assert {"orders-0", "orders-1", "__consumer_offsets-3", "mm2-7", "nometa-0", "__cluster_metadata-0"} == kept
    assert canonical_id("DOZthOBPQQKziDgloQ+LLQ") == canonical_id("DOZthOBPQQKziDgloQ-LLQ") is not None
    assert canonical_id("not base64!") is None and canonical_id("QUJD") is None  # not 16 bytes


def test_a_full_broker_that_does_not_serve_is_recovered() -> None:
    assert recover_refusal("dc2-kafka2", False, FULL, ENTRIES, LIVE, 0.8) == ""


def test_a_full_disk_is_recovered_even_while_the_broker_is_caught_serving() -> None:
    # Between two crashes a broker on a full disk may answer for a moment.
    assert recover_refusal("dc2-kafka2", True, FULL, ENTRIES, LIVE, 0.8) == ""


def test_a_serving_broker_with_room_is_refused() -> None:
    why = recover_refusal("dc2-kafka2", True, ROOMY, ENTRIES, LIVE, 0.8)
    assert why == "dc2-kafka2 serves and its data volume is 25% used: there is nothing to recover"


def test_a_full_disk_with_nothing_deleted_on_it_is_refused_with_its_largest_partitions() -> None:
    live_only = [e for e in ENTRIES if e["name"] in ("orders-0", "__consumer_offsets-3")]
    why = recover_refusal("dc2-kafka2", False, FULL, live_only, LIVE, 0.8)
    assert "100% used and holds nothing the cluster has deleted" in why
    assert "Add disk or shorten retention (largest: orders-0 (300 MiB), __consumer_offsets-3 (5 MiB))" in why


def test_a_stopped_broker_with_room_is_no_disk_case() -> None:
    live_only = [e for e in ENTRIES if e["name"] == "orders-0"]
    why = recover_refusal("dc2-kafka2", False, ROOMY, live_only, LIVE, 0.8)
    assert "this is not a full disk" in why and "journalctl -u kafka" in why


def test_an_unread_cluster_is_refused_before_anything_counts_as_deleted() -> None:
    why = recover_refusal("dc2-kafka2", False, FULL, ENTRIES, {}, 0.8)
    assert "could not be read" in why


def test_the_guard_names_what_it_touches_and_wants_the_broker_named() -> None:
    groups = {"kafka_broker": ["dc2-kafka1", "dc2-kafka2"], "zookeeper": ["dc1-kafka1"]}
    assert broker_recover_refusal("dc2-kafka2", "dc2-kafka2", groups) == ""
    why = broker_recover_refusal("dc2-kafka2", None, groups)
    assert why.startswith("refusing to recover dc2-kafka2") and "deletes from its log dirs" in why
    assert why.endswith("-e recover_confirm=dc2-kafka2")
    assert "does not name dc2-kafka2" in broker_recover_refusal("dc2-kafka2", "dc2-kafka1", groups)
    assert "is not a kafka_broker host" in broker_recover_refusal("dc1-kafka1", "dc1-kafka1", groups)


# --- the host module on a real tree -----------------------------------------------------------


def run_module(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, args: dict) -> dict:
    return plugin_files.run_module(log_dirs, monkeypatch, capsys, args)


@pytest.fixture
def data(tmp_path: Path) -> Path:
    for name, topic_id in [("orders-0", LIVE["orders"]), ("fill-0", "dGhpc3RvcGljaXNnb25lIQ")]:
        (tmp_path / name).mkdir()
        (tmp_path / name / "partition.metadata").write_text(f"version: 0\ntopic_id: {topic_id}\n")
        with open(tmp_path / name / "00000000000000000000.log", "wb") as f:
            f.write(os.urandom(256 * 1024))
    (tmp_path / "old-1.abc-delete").mkdir()
    (tmp_path / "meta.properties").write_text("node.id=2\n")
    return tmp_path


def test_the_module_lists_ids_and_disk_use_and_removes_only_named_entries(monkeypatch, capsys, data: Path) -> None:
    out = run_module(monkeypatch, capsys, {"dirs": [str(data)]})
    got = {e["name"]: e for e in out["entries"]}
    assert set(got) == {"orders-0", "fill-0", "old-1.abc-delete"} and out["changed"] is False
    assert got["fill-0"]["topic_id"] == "dGhpc3RvcGljaXNnb25lIQ" and got["old-1.abc-delete"]["topic_id"] is None
    assert got["fill-0"]["bytes"] >= 256 * 1024
    before = out["volumes"][0]["avail_bytes"]
    remove = reclaimable(out["entries"], LIVE)
    out = run_module(monkeypatch, capsys, {"dirs": [str(data)], "remove": remove})
    assert out["changed"] is True and sorted(r["name"] for r in out["removed"]) == ["fill-0", "old-1.abc-delete"]
    assert sorted(p.name for p in data.iterdir()) == ["meta.properties", "orders-0"]
    assert out["volumes"][0]["avail_bytes"] >= before


def test_the_module_refuses_a_path_that_is_no_entry(monkeypatch, capsys, data: Path) -> None:
    for name in ("../etc", "meta.properties", "absent-0", ""):
        out = run_module(monkeypatch, capsys, {"dirs": [str(data)], "remove": [{"dir": str(data), "name": name}]})
        assert out.get("failed") is True and "not an entry of the log dirs" in out["msg"], name
    assert (data / "orders-0").is_dir() and (data / "fill-0").is_dir()
