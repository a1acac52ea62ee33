"""The names the preflight checks ACLs, users and TLS versions against are Kafka's own.

kafkakit.cluster.acls and kafkakit.cluster.scram_users (whose validators the preflight asks) hand
their names to confluent-kafka's enums, so each must be a member of them; and each must be what the
broker itself accepts, read from every Kafka archive build/artifacts holds: the operations of each
resource type (AclEntry.supportedOperations), the pattern types, the wildcard and anonymous
principals, the SCRAM mechanisms and the TLS versions Kafka enables by default.
"""

from __future__ import annotations

from pathlib import Path

from confluent_kafka.admin import AclOperation, AclPermissionType, ResourcePatternType, ScramMechanism

from kafkakit.cluster.acls import _RESOURCE_TO_ENUM, PATTERN_TYPES, PERMISSIONS, SUPPORTED_OPERATIONS
from kafkakit.cluster.scram_users import MECHANISMS
from kafkakit.rules.access import ANONYMOUS_PRINCIPAL, NOT_FOR_EVERYONE, WILDCARD_PRINCIPAL
from kafkakit.rules.broker_properties import KAFKA_TLS_PROTOCOLS
from tests.unit.support.kafka_archives import assert_ci_has_archives, each_archive, needs_archives, run_java

# AclEntry's class initialiser needs Jackson in 3.9.
JARS = ("kafka-", "slf4j-api-", "jackson-")
# Kafka's resource type of each kit resource type (librdkafka's BROKER is Kafka's CLUSTER).
KAFKA_RESOURCE = {"topic": "TOPIC", "group": "GROUP", "cluster": "CLUSTER", "transactional_id": "TRANSACTIONAL_ID"}
PRINT_DEFINITIONS = """
import java.util.*;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.security.authorizer.AclEntry;
public class PrintDefinitions {
  public static void main(String[] args) {
    for (String t : new String[] {"TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID"})
      System.out.println(t + " " + new TreeSet<>(AclEntry.supportedOperations(ResourceType.valueOf(t))));
    System.out.println("PATTERN " + Arrays.toString(org.apache.kafka.common.resource.PatternType.values()));
    System.out.println("WILDCARD " + AclEntry.WILDCARD_PRINCIPAL_STRING);
    System.out.println("ANONYMOUS " + org.apache.kafka.common.security.auth.KafkaPrincipal.ANONYMOUS);
    List<String> scram = new ArrayList<>();
    for (org.apache.kafka.clients.admin.ScramMechanism m : org.apache.kafka.clients.admin.ScramMechanism.values())
      if (m != org.apache.kafka.clients.admin.ScramMechanism.UNKNOWN) scram.add(m.mechanismName());
    System.out.println("SCRAM " + scram);
    System.out.println("TLS " + org.apache.kafka.common.config.SslConfigs.DEFAULT_SSL_ENABLED_PROTOCOLS);
  }
}
"""


def _names(line: str) -> set[str]:
    """ "[A, B]" -> {"A", "B"}."""
    return {x for x in line.strip("[]").split(", ") if x}


def test_the_acl_names_are_confluent_kafkas() -> None:
    operations = {o.name for o in AclOperation}
    for rtype, ops in SUPPORTED_OPERATIONS.items():
        assert ops <= operations, rtype
    assert NOT_FOR_EVERYONE <= operations
    assert {p.upper() for p in PATTERN_TYPES} <= {p.name for p in ResourcePatternType}
    assert {p.upper() for p in PERMISSIONS} <= {p.name for p in AclPermissionType}
    assert set(_RESOURCE_TO_ENUM) == set(SUPPORTED_OPERATIONS)


def test_the_scram_mechanisms_are_confluent_kafkas() -> None:
    assert MECHANISMS == {m.name.replace("_", "-"): m for m in ScramMechanism if m != ScramMechanism.UNKNOWN}


def test_ci_compares_the_definitions_with_kafka_itself() -> None:
    assert_ci_has_archives()


@needs_archives
@each_archive
def test_the_definitions_are_the_brokers_own(archive: Path, tmp_path: Path) -> None:
    out = run_java(archive, JARS, "PrintDefinitions", PRINT_DEFINITIONS, tmp_path)
    kafka = dict(line.split(" ", 1) for line in out.splitlines())
    for rtype, ops in SUPPORTED_OPERATIONS.items():
        # The kit takes nothing the broker refuses (ALL it expands on every type); newer lines allow more.
        assert ops - {"ALL"} <= _names(kafka[KAFKA_RESOURCE[rtype]]), (archive.name, rtype)
    assert {p.upper() for p in PATTERN_TYPES} <= _names(kafka["PATTERN"])
    assert kafka["WILDCARD"] == WILDCARD_PRINCIPAL
    assert kafka["ANONYMOUS"] == ANONYMOUS_PRINCIPAL
    assert _names(kafka["SCRAM"]) == set(MECHANISMS)
    assert kafka["TLS"].split(",") == list(KAFKA_TLS_PROTOCOLS)
