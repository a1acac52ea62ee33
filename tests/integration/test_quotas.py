"""Client quotas as code (roles/kafka_resources, the kafka_quotas action plugin), in every data centre:
Kafka 3.9 in ZooKeeper mode (dc1) and 4.x in KRaft mode (dc2).

quota-writer, held to a produce quota by the inventory, is throttled while team-a beside it is not
(tests/integration/quotas.py; the same after a broker restart is the scenario
scenarios/test_quota_restart.py, a declared quota changed and removed scenarios/test_drift.py).
"""

from __future__ import annotations

import pytest

from tests.integration.lab import Lab
from tests.integration.quotas import CONTROL_USER, QUOTA_USER, apply_quotas, assert_held_to_its_quota, declared

pytestmark = pytest.mark.every_dc


def test_a_user_held_to_a_produce_quota_is_throttled_while_one_without_is_not(lab: Lab, dc: str, new_topic):
    quota = float(declared(lab, dc)["producer_byte_rate"])
    # What site.yml applied is what the inventory declares: kafka_quotas has nothing to change.
    applied = apply_quotas(lab, dc, declared(lab, dc))
    assert not applied["changed"], applied
    assert applied["quotas"][f"User:{QUOTA_USER}"] == {"producer_byte_rate": int(quota)}, applied
    assert_held_to_its_quota(lab, dc, new_topic(partitions=1, prefix=f"{CONTROL_USER}.quota-control-"))
