"""MirrorMaker 2 from dc1 to dc2 as the tests see it: the lab's flow (what inventories/local/group_vars
set), topic names on both sides, and the flow's lag (kafkakit.mirror.lag). The fixtures dc2_conf and
mirrored_topic are in conftest.py."""

from __future__ import annotations

from kafkakit.cluster.admin import admin_from_conf
from kafkakit.mirror.lag import wait_mirror
from tests.integration.lab import Lab

SOURCE, TARGET = "dc1", "dc2"
REFRESH_S = 10
MIRROR_PREFIX = "mirror-"


def remote(topic: str) -> str:
    return f"{SOURCE}.{topic}"


def split(conf: dict[str, str]) -> tuple[str, dict[str, str]]:
    rest = dict(conf)
    return rest.pop("bootstrap.servers"), rest


def topic_partitions(conf: dict[str, str], topic: str) -> int:
    meta = admin_from_conf(conf).list_topics(timeout=10).topics.get(topic)
    return 0 if meta is None or meta.error is not None else len(meta.partitions)


def mm2_host(lab: Lab):  # noqa: ANN201 - testinfra host
    return lab.testinfra(lab.groups["mirrormaker"][0])


def flow_state(client_conf: dict[str, str], dc2_conf: dict[str, str], topic: str, max_lag: int, wait_s: float):  # noqa: ANN201
    src_bootstrap, admin_conf = split(client_conf)
    return wait_mirror(
        max_lag,
        wait_s,
        source=SOURCE,
        source_bootstrap=src_bootstrap,
        target_bootstrap=split(dc2_conf)[0],
        client_config=admin_conf,
        topics=[{"name": topic}],
        topics_exclude=[],
    )
