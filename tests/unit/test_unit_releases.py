"""Each systemd unit that starts a Kafka JVM names the release it runs: a release changed in the
inventory changes the unit, and a changed unit is what rolls the process onto it (the archive role
only moves the /opt/kafka link). The lab's Connect workers once kept running 4.4.0 after their
release became 4.3.1, because their unit did not change."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
UNITS = {
    "roles/kafka_broker/templates/kafka.service.j2": "kafka_version",
    "roles/kafka_controller/templates/kafka-controller.service.j2": "kafka_version",
    "roles/kafka_connect/templates/kafka-connect.service.j2": "kafka_connect_version",
    "roles/mirrormaker2/templates/kafka-mirrormaker.service.j2": "mirrormaker_kafka_version",
}


@pytest.mark.parametrize(("template", "variable"), list(UNITS.items()))
def test_the_unit_names_the_release_it_runs(template: str, variable: str) -> None:
    description = re.search(r"^Description=(.*)$", (ROOT / template).read_text(), re.M)
    assert description and "{{ " + variable + " }}" in description.group(1), template


def test_every_unit_that_starts_a_kafka_jvm_is_listed() -> None:
    starts = {
        str(p.relative_to(ROOT))
        for p in (ROOT / "roles").glob("*/templates/*.service.j2")
        if re.search(r"-cp '\{\{ kafka_home \}\}/libs/\*'", p.read_text())
    }
    assert starts == set(UNITS)
