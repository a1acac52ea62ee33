"""The SCRAM anchor keeps KRaft nodes from losing every credential when they replay their metadata
log (a Kafka bug, see kafka_scram_anchor_user in roles/kafka_common/defaults); it works only while
java.util.HashMap iterates it first, whatever the map's size."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.java_hash import hashmap_bucket, string_hash

REPO = Path(__file__).resolve().parents[2]
DEFAULTS = yaml.safe_load((REPO / "roles/kafka_common/defaults/main.yml").read_text())
CAPACITIES = [2**n for n in range(4, 21)]  # 16 buckets (HashMap's default) up to a million


def test_the_java_hash_matches_what_the_jvm_computed() -> None:
    # Measured with a JVM (17): "admin".hashCode() and its bucket in a default-sized HashMap.
    assert string_hash("admin") == 92668751
    assert hashmap_bucket("admin", 16) == 9
    assert string_hash("é") == 233  # one UTF-16 code unit


def test_the_anchor_heads_bucket_zero_at_every_size() -> None:
    anchor = DEFAULTS["kafka_scram_anchor_user"]
    assert [hashmap_bucket(anchor, c) for c in CAPACITIES] == [0] * len(CAPACITIES)


def test_the_controllers_format_the_anchor_before_any_user_and_the_access_role_never_removes_it() -> None:
    fmt = (REPO / "roles/kafka_controller/tasks/format.yml").read_text()
    assert fmt.index("'name': kafka_scram_anchor_user") < fmt.index("'name': kafka_admin_user")
    access = yaml.safe_load((REPO / "roles/kafka_resources/tasks/main.yml").read_text())
    apply = next(t for t in access if "kafka_scram_users" in t)
    assert "{{ kafka_scram_anchor_user }}" in apply["kafka_scram_users"]["protected"]
