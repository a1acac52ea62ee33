"""spark-jobs/kafkakit_jobs: the Kafka client settings the jobs hand to Spark (no Spark needed)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "spark-jobs"))

from kafkakit_jobs.kafka_config import read_properties, spark_kafka_options  # noqa: E402


def test_properties_become_kafka_options(tmp_path: Path) -> None:
    conf = tmp_path / "client.properties"
    conf.write_text(
        "# written by the spark role\n"
        "bootstrap.servers=10.0.0.1:9093,10.0.0.2:9093\n"
        "security.protocol=SASL_SSL\n"
        "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
        'username="spark" password="a=b";\n'
    )
    options = spark_kafka_options(conf)
    assert options["kafka.bootstrap.servers"] == "10.0.0.1:9093,10.0.0.2:9093"
    assert options["kafka.security.protocol"] == "SASL_SSL"
    # Only the first '=' separates key and value.
    assert options["kafka.sasl.jaas.config"].endswith('password="a=b";')
    assert all(key.startswith("kafka.") for key in options)


def test_a_config_without_bootstrap_servers_is_refused(tmp_path: Path) -> None:
    conf = tmp_path / "client.properties"
    conf.write_text("security.protocol=SASL_SSL\n")
    with pytest.raises(ValueError, match="bootstrap.servers"):
        read_properties(conf)


def test_a_line_that_is_not_key_value_is_refused(tmp_path: Path) -> None:
    conf = tmp_path / "client.properties"
    conf.write_text("bootstrap.servers=x:9093\nnonsense\n")
    with pytest.raises(ValueError, match="not a key=value"):
        read_properties(conf)
