"""A consumer group that read part of a mirrored topic in dc1 resumes in dc2 from the offsets
MirrorMaker 2 translated (kafkakit.mirror.dr_drill): nothing skipped, far less than all read again.
(The drill through its playbook, with its confirmation, is scenarios/test_dr.py; MirrorMaker 2
mirroring as deployed is the contract tier's tests/integration/test_mirrormaker.py.)"""

from __future__ import annotations

from kafkakit.mirror import dr_drill
from tests.integration.accounting import account
from tests.integration.conftest import wait_until
from tests.integration.mirror import MIRROR_PREFIX, REFRESH_S, SOURCE, TARGET, remote, split, topic_partitions


def test_a_group_resumes_in_dc2_from_its_translated_offsets_without_skipping(client_conf, dc2_conf, mirrored_topic):
    topic = mirrored_topic(partitions=6)
    wait_until("mirrored topic", lambda: topic_partitions(dc2_conf, remote(topic)) == 6, 3 * REFRESH_S + 30)
    src_bootstrap, admin_conf = split(client_conf)
    prepared = dr_drill.prepare(
        source=SOURCE,
        source_bootstrap=src_bootstrap,
        target_bootstrap=split(dc2_conf)[0],
        client_config=admin_conf,
        topic=topic,
        target_topic=remote(topic),
        group_prefix=f"{MIRROR_PREFIX}group-",
        messages=1500,
        consume_first=500,
        partitions=6,
        replication_factor=3,
        wait_seconds=120,
    )
    assert len(prepared.consumed) == 500
    assert prepared.lag_before_failover == 0
    assert prepared.seconds_to_translate >= 0, f"offsets not translated into {TARGET}: {prepared.translated}"
    # A translated offset never lies beyond what the group had consumed in dc1.
    assert sum(prepared.translated.values()) <= sum(prepared.committed.values())

    report = dr_drill.failover(
        target_bootstrap=split(dc2_conf)[0],
        client_config=admin_conf,
        target_topic=remote(topic),
        run_id=prepared.run_id,
        group=prepared.group,
        produced=prepared.produced,
        consumed_in_source=prepared.consumed,
        translated=prepared.translated,
        seconds_to_translate=prepared.seconds_to_translate,
        timeout=90,
    )
    assert report.skipped == 0, report.skipped_seqs
    # Resuming from the translated offsets, not from the beginning: far fewer than all 500 again.
    assert report.delivered_twice < 500
    account(f"resumed in {TARGET}: {report.delivered_in_target} delivered, {report.delivered_twice} twice")
