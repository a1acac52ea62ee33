"""Client quotas as code (roles/kafka_resources, the kafka_quotas action plugin), in every data centre:
Kafka 3.9 in ZooKeeper mode (dc1) and 4.x in KRaft mode (dc2).

quota-writer, held to a produce quota by the inventory, is throttled while team-a beside it is not
(tests/integration/quotas.py; the same after a broker restart is the scenario
scenarios/test_quota_restart.py). A declared quota changed, then removed, through kafka_quotas on the
data centre's first broker (as the role runs it) is applied, and the next apply changes nothing; the
inventory's quotas are put back afterwards, also when the test fails.
"""

from __future__ import annotations

import pytest
import yaml

from tests.integration.lab import ROOT, Lab
from tests.integration.playbooks import module_process, module_result
from tests.integration.quotas import CONTROL_USER, QUOTA_USER, assert_held_to_its_quota, declared

pytestmark = pytest.mark.every_dc


def test_a_user_held_to_a_produce_quota_is_throttled_while_one_without_is_not(lab: Lab, dc: str, new_topic):
    quota = float(declared(lab, dc)["producer_byte_rate"])
    # What site.yml applied is what the inventory declares: kafka_quotas has nothing to change.
    applied = apply_quotas(lab, dc, declared(lab, dc))
    assert not applied["changed"], applied
    assert applied["quotas"][f"User:{QUOTA_USER}"] == {"producer_byte_rate": int(quota)}, applied
    assert_held_to_its_quota(lab, dc, new_topic(partitions=1, prefix=f"{CONTROL_USER}.quota-control-"))


def apply_quotas(lab: Lab, dc: str, quotas: dict | None) -> dict:
    """kafka_quotas on the DC's first broker for quota-writer only (no other user's quotas are
    owned, nothing is exclusive), as roles/kafka_resources/tasks/quotas.yml runs it. The admin's
    password is a template Ansible fills from the inventory: it is on no command line."""
    host = lab.brokers(dc)[0].name
    conf = lab.client_conf(dc)
    pki = (
        lab.group_vars(dc).get("kafka_pki_dir")
        or yaml.safe_load((ROOT / "roles/kafka_common/defaults/main.yml").read_text())["kafka_pki_dir"]
    )
    args = {
        "bootstrap_servers": conf["bootstrap.servers"],
        "admin_user": conf["sasl.username"],
        "admin_password": "{{ kafka_admin_password }}",
        "truststore": f"{pki}/ca.crt",
        "users": [{"name": QUOTA_USER, "quotas": quotas}],
    }
    proc = module_process(host, "kafka_quotas", args)
    assert proc.stdout.strip(), proc.stderr[-2000:]
    result = module_result(proc, host)
    assert not result.get("failed"), result.get("msg")
    return result


def test_a_declared_quota_changed_then_removed_is_applied_and_the_next_apply_changes_nothing(lab: Lab, dc: str):
    as_declared = declared(lab, dc)
    changed_to = {"producer_byte_rate": int(as_declared["producer_byte_rate"]) * 2, "request_percentage": 50}
    who = f"User:{QUOTA_USER}"
    try:
        changed = apply_quotas(lab, dc, changed_to)
        assert changed["changed"] and changed["changes"] == [{"entity": who, "set": changed_to, "delete": []}], changed
        again = apply_quotas(lab, dc, changed_to)
        assert not again["changed"] and again["quotas"][who] == changed_to, again

        # producer_byte_rate dropped from the declaration: deleted, request_percentage kept.
        removed = apply_quotas(lab, dc, {"request_percentage": 50})
        assert removed["changed"] and removed["changes"] == [
            {"entity": who, "set": {}, "delete": ["producer_byte_rate"]}
        ], removed
        again = apply_quotas(lab, dc, {"request_percentage": 50})
        assert not again["changed"] and again["quotas"][who] == {"request_percentage": 50}, again
    finally:
        restored = apply_quotas(lab, dc, as_declared)
        assert restored["quotas"].get(who) == {k: int(v) for k, v in as_declared.items()}, restored
