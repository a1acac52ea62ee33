"""Kafka 4.4 builds the in-memory KeyStore of a PEM truststore or keystore with the JVM's default
type (KeyStore.getDefaultType(), the security property keystore.type) where 4.3 always took PKCS12.
The kit's Kafka JVMs read PEM truststores everywhere (ssl.truststore.type=PEM), so every one of them
reads the java role's security properties, which pin keystore.type to pkcs12."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import jinja2
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
# Every template that starts a Kafka JVM (a server, a worker, MirrorMaker 2, the tool launcher).
KAFKA_JVMS = [
    "roles/kafka_controller/templates/kafka-controller.service.j2",
    "roles/kafka_broker/templates/kafka.service.j2",
    "roles/kafka_connect/templates/kafka-connect.service.j2",
    "roles/mirrormaker2/templates/kafka-mirrormaker.service.j2",
    "roles/kafka_common/templates/kafkakit-run.j2",
]


def defaults(role: str) -> dict:
    return yaml.safe_load((ROOT / "roles" / role / "defaults" / "main.yml").read_text())


def pinned_file() -> str:
    """The security properties file the java role writes, rendered as its task renders it."""
    tasks = yaml.safe_load((ROOT / "roles/java/tasks/main.yml").read_text())
    (template,) = [t["ansible.builtin.template"] for t in tasks if "ansible.builtin.template" in t]
    variables = {"ansible_managed": "Ansible managed", **defaults("java")}
    assert jinja2.Template(template["dest"]).render(variables) == variables["java_security_file"]
    env = jinja2.Environment(trim_blocks=True)
    env.filters["dictsort"] = lambda d: sorted(d.items())
    return env.from_string((ROOT / "roles/java/templates" / template["src"]).read_text()).render(variables)


def test_the_java_role_pins_pkcs12_as_the_default_keystore_type() -> None:
    lines = [line for line in pinned_file().splitlines() if line and not line.startswith("#")]
    assert lines == ["keystore.type=pkcs12"]


def test_the_kafka_jvms_read_the_file_the_java_role_writes() -> None:
    opts = defaults("kafka_common")["kafka_java_security_opts"]
    assert opts == f"-Djava.security.properties={defaults('java')['java_security_file']}"
    # A single '=': the file adds to the JVM's java.security, it does not replace it.
    assert "==" not in opts


def test_every_kafka_jvm_the_kit_starts_reads_it() -> None:
    for path in KAFKA_JVMS:
        # The JVM options of each way a template starts the JVM (a unit's if/else branches, the
        # launcher's two exec lines): every one names the file.
        lines = [
            line
            for line in (ROOT / path).read_text().splitlines()
            if "-Djava.net.preferIPv4Stack=true" in line or line.startswith("exec /usr/bin/java")
        ]
        assert lines and all("{{ kafka_java_security_opts }}" in line for line in lines), path


def test_no_other_template_starts_kafka_classes() -> None:
    starts = {
        str(p.relative_to(ROOT))
        for p in (ROOT / "roles").glob("*/templates/*.j2")
        if re.search(r"kafka\.Kafka\b|org\.apache\.kafka\.|kafkakit-run CLASS", p.read_text())
        and "/usr/bin/java" in p.read_text()
    }
    assert starts == set(KAFKA_JVMS)


def test_every_truststore_and_keystore_the_kit_configures_names_its_type() -> None:
    for path in (ROOT / "roles").glob("*/templates/*.j2"):
        text = path.read_text()
        for prefix, kind in re.findall(r"^([\w.{}\s]*?)\.?(truststore|keystore)\.location\s*=", text, re.M | re.I):
            assert re.search(rf"{re.escape(kind)}\.type\s*=", text, re.I), f"{path}: {prefix} {kind} without a type"


@pytest.mark.skipif(not shutil.which("java"), reason="no java")
def test_the_file_sets_the_jvms_default_keystore_type(tmp_path: Path) -> None:
    jks = tmp_path / "jvm.security"
    jks.write_text("keystore.type=jks\n")
    ours = tmp_path / "kafkakit-java.security"
    ours.write_text(pinned_file())
    program = tmp_path / "DefaultType.java"
    program.write_text(
        "public class DefaultType { public static void main(String[] a) {"
        " System.out.println(java.security.KeyStore.getDefaultType()); } }"
    )

    def default_type(*opts: str) -> str:
        done = subprocess.run(["java", *opts, str(program)], capture_output=True, text=True, timeout=120, check=True)
        return done.stdout.strip()

    # The file's keystore.type wins over the JVM's java.security (here pkcs12): a file saying jks
    # makes it jks, so the kit's file makes it pkcs12 on a JVM whose java.security says otherwise.
    assert default_type(f"-Djava.security.properties={jks}") == "jks"
    assert default_type(f"-Djava.security.properties={ours}") == "pkcs12"
