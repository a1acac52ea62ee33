"""Declared resources changed under the running cluster, and put back by the kit: an ACL binding added
by hand in every data centre is shown by `site.yml --check --diff` and removed by the next run; a
declared quota changed, then removed, through kafka_quotas on the data centre's first broker (as
roles/kafka_resources runs it) is applied, and the next apply changes nothing, the inventory's quotas
put back afterwards, also when the test fails. (ACLs and quotas as deployed are the contract tier's:
tests/integration/test_acls.py, test_quotas.py.)"""

from __future__ import annotations

import pytest
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
)

from kafkakit.cluster.admin import read_client_conf
from tests.integration.clients import read_error
from tests.integration.conftest import fresh_admin, wait_until
from tests.integration.lab import CLIENT_DIR, Lab
from tests.integration.playbooks import run_site
from tests.integration.quotas import QUOTA_USER, apply_quotas, declared


def test_site_check_diff_shows_an_acl_drift_and_the_next_run_removes_it(lab: Lab):
    """An undeclared binding added by hand in every data centre (one per metadata mode, so both
    authorizers) is shown by one --check --diff and removed by the next site.yml run."""
    rogue = AclBinding(
        ResourceType.TOPIC,
        "orders",
        ResourcePatternType.LITERAL,
        "User:no-acl",
        "*",
        AclOperation.READ,
        AclPermissionType.ALLOW,
    )
    dcs = lab.data_centres()
    assert {lab.metadata_mode(dc) for dc in dcs} == {"zookeeper", "kraft"}, dcs
    admins = {dc: fresh_admin(lab.client_conf(dc)) for dc in dcs}
    no_acl = {dc: read_client_conf(CLIENT_DIR / dc / "users" / "no-acl.conf") for dc in dcs}

    # READ implies DESCRIBE: while the binding exists, the user sees the topic in the metadata
    # (a broker lists only the topics a principal may describe), and without it sees nothing.
    def sees_orders(dc: str) -> bool:
        return "orders" in AdminClient(no_acl[dc]).list_topics(timeout=10).topics

    assert not any(sees_orders(dc) for dc in dcs)
    try:
        for dc in dcs:
            admins[dc].create_acls([rogue])[rogue].result(timeout=20)
            wait_until(f"the rogue binding in force in {dc}", lambda dc=dc: sees_orders(dc), 30)
        check = run_site("--check", "--diff", "--tags", "acls")
        # The diff's removed line, and the count the role gives first (the lab sets kafka_acls_exclusive).
        assert check.count("-User:no-acl ALLOW READ topic:orders") == len(dcs), check[-3000:]
        for dc in dcs:
            assert f"undeclared ACL binding(s) in {dc}: removing them" in check
            assert sees_orders(dc), f"--check removed the binding in {dc}"
        run_site("--tags", "acls")
        for dc in dcs:
            wait_until(f"the rogue binding gone in {dc}", lambda dc=dc: not sees_orders(dc), 30)
            assert read_error(no_acl[dc], "orders", "orders-after-cleanup") is not None
    finally:
        # Whatever failed above, no binding of this test stays behind.
        found = AclBindingFilter(
            ResourceType.TOPIC,
            "orders",
            ResourcePatternType.LITERAL,
            "User:no-acl",
            None,
            AclOperation.ANY,
            AclPermissionType.ANY,
        )
        for admin in admins.values():
            admin.delete_acls([found])[found].result(timeout=20)


@pytest.mark.every_dc
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
