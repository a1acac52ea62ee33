"""The spark role's spark-defaults.conf keeps the master's REST submission server off."""

from __future__ import annotations

from pathlib import Path

import jinja2

from kafkakit.cluster.spark_ui import ui_key

ROLE = Path(__file__).resolve().parents[3] / "roles" / "spark"


def test_spark_defaults_keep_the_master_rest_server_off() -> None:
    """Since Spark 4.1 the master's REST submission server is on by default and does not check
    spark.authenticate: the role must turn it off while RPC authentication is on."""
    env = jinja2.Environment(undefined=jinja2.StrictUndefined)
    env.filters["kafkakit_spark_ui_key"] = ui_key
    template = env.from_string((ROLE / "templates" / "spark-defaults.conf.j2").read_text())
    conf = template.render(
        ansible_managed="test",
        spark_master_url="spark://m:7077",
        spark_auth_secret_effective="s",
        spark_io_encryption=True,
        private_ip="10.0.0.1",
        spark_driver_port=7078,
        spark_block_manager_port=7079,
        spark_driver_memory="512m",
        spark_executor_memory="512m",
        spark_executor_cores=1,
        spark_app_max_cores=1,
        spark_shuffle_partitions=4,
        spark_python="/usr/bin/python3",
        spark_data_dir="/var/lib/spark",
    )
    settings = dict(line.split(None, 1) for line in conf.splitlines() if line and not line.startswith("#"))
    assert settings["spark.authenticate"] == "true"
    assert settings["spark.master.rest.enabled"] == "false"
