"""One Spark version everywhere: the Makefile's archive, the spark role, its production connector
jars and the pins of ansible/artifacts (build-spark.sh) must name the same release and Scala
build, and the role's jar list must be exactly what the lab archive adds to Spark."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import yaml

TOP = Path(__file__).resolve().parents[2]
ROLE = TOP / "roles" / "spark"
ARTIFACTS = TOP / "ansible" / "artifacts"
DEFAULTS = yaml.safe_load((ROLE / "defaults" / "main.yml").read_text())
VERSION = DEFAULTS["spark_version"]
SCALA = DEFAULTS["spark_scala_version"]


def test_the_role_and_its_spec_name_the_same_spark() -> None:
    # The Makefile reads spark_version from the role's defaults (tests/unit/tooling/test_versions.py).
    specs = yaml.safe_load((ROLE / "meta" / "argument_specs.yml").read_text())["argument_specs"]["main"]["options"]
    assert str(specs["spark_version"]["default"]) == VERSION
    assert specs["spark_scala_version"]["default"] == SCALA


def test_the_artifact_pins_follow_the_version() -> None:
    pin = (ARTIFACTS / f"pyspark-{VERSION}.txt").read_text()
    assert re.search(rf"^pyspark=={re.escape(VERSION)} --hash=sha256:[0-9a-f]{{64}}$", pin, re.M), pin
    pom = ET.parse(ARTIFACTS / "spark-kafka-pom.xml").getroot()
    ns = {"m": "http://maven.apache.org/POM/4.0.0"}
    assert pom.findtext("m:properties/m:spark.version", namespaces=ns) == VERSION
    connector = pom.find("m:dependencies/m:dependency", ns)
    assert connector.findtext("m:artifactId", namespaces=ns) == f"spark-sql-kafka-0-10_{SCALA}"
    scala_excludes = [a.text for a in pom.iterfind(".//m:exclusion/m:artifactId", ns) if re.search(r"_2\.\d+$", a.text)]
    assert all(a.endswith(f"_{SCALA}") for a in scala_excludes), scala_excludes
    assert re.search(rf"^scala={re.escape(SCALA)}\b", (ARTIFACTS / "build-spark.sh").read_text(), re.M)


def test_the_production_connector_jars_are_the_pinned_ones() -> None:
    """spark_kafka_connector_jars (added to the Apache tarball) = spark-<version>.sha256 (added to
    the lab archive): same files, same checksums, Maven paths that match the file names."""
    pinned = dict(
        reversed(line.split()) for line in (ARTIFACTS / f"spark-{VERSION}.sha256").read_text().splitlines() if line
    )
    jars = DEFAULTS["spark_kafka_connector_jars"]
    assert {Path(j["path"]).name: j["sha256"] for j in jars} == pinned
    for jar in jars:
        *group, artifact, version, name = jar["path"].split("/")
        assert group and name == f"{artifact}-{version}.jar", jar["path"]
        if group == ["org", "apache", "spark"]:
            assert artifact.endswith(f"_{SCALA}") and version == VERSION, jar["path"]
