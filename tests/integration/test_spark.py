"""The Spark cluster against the lab's Kafka: the smoke job, its web UIs and its ACLs (spark-jobs/,
roles/spark). The streaming pipeline through a restart and a killed worker is a scenario
(scenarios/test_spark_pipeline.py, `make test-spark-pipeline`)."""

from __future__ import annotations

import re
from collections.abc import Callable

from kafkakit.cluster.acls import AclKey, to_binding, to_exact_filter
from kafkakit.cluster.spark_ui import bearer_token, ui_key
from tests.integration.conftest import fresh_admin
from tests.integration.spark_lab import (
    KAFKA_CONFIG,
    TOPIC_PREFIX,
    WEBUI_PORT,
    WORKER_WEBUI_PORT,
    SparkCluster,
)


def test_smoke_job_passes_on_the_cluster(spark: SparkCluster, spark_topic: Callable[[], str]) -> None:
    topic = spark_topic()
    result = spark.submit("smoke.py", "--kafka-config", KAFKA_CONFIG, "--topic", topic, "--records", "500")
    assert result.rc == 0, result.stderr[-3000:]
    assert "smoke: OK" in result.stdout
    # It ran on the cluster, not in local mode: the master saw the application finish.
    apps = [a["name"] for a in spark.status()["completedapps"]]
    assert any(name.startswith("kafkakit-smoke-") for name in apps), apps


def test_the_web_uis_answer_only_a_signed_token_on_the_private_address(spark: SparkCluster) -> None:
    # A token signed with another key: well formed, wrong signature.
    forged = bearer_token(ui_key("not-the-cluster-secret"))
    for node, port in [(spark.master, WEBUI_PORT)] + [(w, WORKER_WEBUI_PORT) for w in spark.workers]:
        url = f"http://{node.ip}:{port}/json/"
        # Positive control first: the UI is up and the kit's token opens it.
        assert spark.ui_get(url, spark.ui_token)[0] == 200, f"{node.name}: the signed token was refused"
        assert spark.ui_get(url)[0] == 403, f"{node.name}: answered without a token"
        assert spark.ui_get(url, forged)[0] == 403, f"{node.name}: answered a token signed with another key"
        # Bound to the private address only: the same port on loopback refuses the connection.
        probe = "python3 -c 'import socket,sys; socket.create_connection((sys.argv[1], {port}), 3)' {addr}"
        assert spark.run(probe.format(port=port, addr=node.ip), node).rc == 0, f"{node.name}: private address"
        assert spark.run(probe.format(port=port, addr="127.0.0.1"), node).rc != 0, f"{node.name}: UI on loopback"


# The spark principal's WRITE grant on its prefix, as kafka_spark_acls declares it.
WRITE_KEY = AclKey("User:spark", "topic", TOPIC_PREFIX, "prefixed", "WRITE", "ALLOW", "*")
WRITE_ACL = to_binding(WRITE_KEY)
WRITE_ACL_FILTER = to_exact_filter(WRITE_KEY)


def test_smoke_job_fails_without_its_acl(
    spark: SparkCluster, spark_topic: Callable[[], str], client_conf: dict[str, str]
) -> None:
    topic = spark_topic()
    admin = fresh_admin(client_conf)
    removed = admin.delete_acls([WRITE_ACL_FILTER])[WRITE_ACL_FILTER].result(timeout=30)
    assert removed, "the spark principal had no WRITE ACL on its prefix to remove"
    try:
        result = spark.submit("smoke.py", "--kafka-config", KAFKA_CONFIG, "--topic", topic, "--records", "10")
        assert result.rc != 0, "the smoke job passed although its principal may not write"
        # The broker refused the writes (not a crash for another reason).
        assert re.search(r"AuthorizationException|authorization failed|Not authorized", result.stderr), result.stderr[
            -3000:
        ]
    finally:
        admin.create_acls([WRITE_ACL])[WRITE_ACL].result(timeout=30)
    back = admin.describe_acls(WRITE_ACL_FILTER).result(timeout=30)
    assert back == [WRITE_ACL]
