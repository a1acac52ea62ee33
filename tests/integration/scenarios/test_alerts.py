"""An alert fired by a real fault: a consumer group stalled while its topic grows shows the lag
growing in Prometheus and fires KafkaConsumerGroupLagHigh (roles/monitoring, the lag exporter). The
lab shortens the alerts' `for:` (inventories/local/group_vars/all.yml). (The exporters, targets and
logins are the contract tier's: tests/integration/test_monitoring.py; the disk-full alerts are
scenarios/test_disk_full.py.)"""

from __future__ import annotations

import time
from collections.abc import Callable

from tests.integration.accounting import account
from tests.integration.clients import consume, consumer, produce_sequence
from tests.integration.conftest import wait_until
from tests.integration.prometheus import Prometheus


def test_a_stalled_consumer_group_shows_growing_lag_and_fires_the_lag_alert(
    client_conf: dict[str, str], new_topic: Callable[..., str], prometheus: Prometheus
) -> None:
    topic = new_topic(partitions=3)
    group = f"lagtest-{topic}"
    produce_sequence(client_conf, topic, 300)
    c = consumer(client_conf, group)
    c.subscribe([topic])
    try:
        assert len(consume(c, 300)) == 300
        c.commit(asynchronous=False)
    finally:
        c.close()  # the group stalls here: nobody reads on

    def lag() -> float:
        result = prometheus.query(f'sum(kafkakit_consumergroup_lag{{dc="dc1",group="{group}"}})')
        return float(result[0]["value"][1]) if result else -1.0

    wait_until("lag 0 seen after the commit", lambda: lag() == 0, 120)
    assert not prometheus.firing("KafkaConsumerGroupLagHigh", group=group, topic=topic)
    produce_sequence(client_conf, topic, 1500)
    wait_until("lag grew from 0 to 1500", lambda: lag() == 1500, 120)
    start = time.monotonic()
    wait_until(
        "KafkaConsumerGroupLagHigh firing",
        lambda: prometheus.firing("KafkaConsumerGroupLagHigh", group=group, topic=topic),
        240,
    )
    account(f"lag alert firing {time.monotonic() - start:.0f} s after the lag reached 1500")
