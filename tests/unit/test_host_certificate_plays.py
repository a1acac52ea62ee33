"""Every host whose node exporter Prometheus scrapes (monitoring.yml) holds a host certificate: every
scrape is HTTPS with it. So the plays that make (site.yml), renew (ops/rotate-certificates.yml) and
verify (verify.yml) host certificates name at least the node exporter play's groups, the Spark
master among them (its CDC jobs' lag), and the rotation hands the renewed certificate to each of
those node exporters and reads each host's CA bundle before retiring the old CA."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import jinja2
import yaml

from tests.unit.support.ansible_run import ANSIBLE_DIR


def plays(path: str) -> list[dict]:
    return yaml.safe_load(Path(ANSIBLE_DIR, path).read_text())


def play(path: str, name: str) -> dict:
    (found,) = [p for p in plays(path) if p.get("name") == name]
    return found


def groups(found: dict) -> set[str]:
    return set(found["hosts"].split(":"))


def task(found: dict, name: str) -> dict:
    (t,) = [t for t in found["tasks"] if t.get("name") == name]
    return t


def intersected(when: str) -> set[str]:
    """The literal group list of a `group_names | intersect([...])` condition."""
    (listed,) = re.findall(r"intersect\((\[[^\]]*\])\)", " ".join(when.split()))
    return set(ast.literal_eval(listed))


NODE_EXPORTERS = groups(play("monitoring.yml", "Node exporter on every host Prometheus scrapes"))
SITE_CERTIFICATES = groups(play("site.yml", "Host certificates"))
ROTATE = "ops/rotate-certificates.yml"


def test_the_spark_masters_node_exporter_is_deployed():
    assert "spark_master" in NODE_EXPORTERS


def test_site_gives_every_scraped_host_a_certificate_before_its_node_exporter():
    assert NODE_EXPORTERS <= SITE_CERTIFICATES, NODE_EXPORTERS - SITE_CERTIFICATES
    names = [p.get("name") for p in plays("site.yml")]
    assert names.index("Host certificates") < names.index("Monitoring") < names.index("Spark")


def test_the_rotation_renews_every_host_certificate_site_makes():
    renewed = groups(play(ROTATE, "Host certificates"))
    assert renewed == SITE_CERTIFICATES, renewed ^ SITE_CERTIFICATES


def test_the_rotation_hands_the_renewed_certificate_to_every_node_exporter():
    stores = play(ROTATE, "The stores of every server, the monitoring hosts' certificates and Spark's CA bundle")
    assert NODE_EXPORTERS <= groups(stores)
    exporters = jinja2.Template(stores["vars"]["rotate_node_exporters"]).render(**stores["vars"])
    assert set(ast.literal_eval(exporters)) == NODE_EXPORTERS
    web = task(stores, "Write the node exporter's certificate, key and web config")
    assert "intersect(rotate_node_exporters)" in web["when"]


def test_the_retire_check_reads_the_ca_bundle_of_every_host_holding_a_certificate():
    check = play(ROTATE, "Check the old CA may be retired")
    (block,) = [t for t in check["tasks"] if "block" in t]
    (read,) = [t for t in block["block"] if t.get("name") == "Read the host's CA bundle"]
    assert SITE_CERTIFICATES <= groups(check)
    assert intersected(read["when"]) == SITE_CERTIFICATES


def test_verify_checks_the_certificate_of_every_scraped_host():
    verified = groups(play("verify.yml", "Verify the certificates"))
    assert NODE_EXPORTERS <= verified, NODE_EXPORTERS - verified
