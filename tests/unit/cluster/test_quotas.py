"""kafkakit.cluster.quotas: ConfigCommand's describe output read, the declared quotas planned against
it, the diff and the tool's command lines, without a cluster; and no password in anything but the
tool's client settings."""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path

import pytest

from kafkakit.cluster.quotas import (
    Change,
    QuotaError,
    alter_command,
    as_result,
    command_config,
    declared_quotas,
    describe_command,
    diff,
    lines,
    mask,
    parse_describe,
    plan_quotas,
    quota_errors,
    tool_class,
    user_quota_errors,
)
from tests.unit.support.kafka_archives import each_archive, needs_archives

# `kafka-configs --bootstrap-server ... --describe --entity-type users` as Kafka 3.9 prints it
# (kafka.admin.ConfigCommand on the 3.9 branch: describeQuotaConfigs prints one line per entity,
# "Quota configs for <entity> are " then key=value joined by ", ", the default entity as "the
# default user-principal", values as Java doubles; then describeClientQuotaAndUserScramCredentialConfigs
# prints every user's SCRAM credentials). A ZooKeeper-mode broker answers this through the same
# DescribeClientQuotas API as a KRaft one, so the mode changes nothing here.
DESCRIBE_3_9 = """\
Quota configs for user-principal 'quota-writer' are producer_byte_rate=65536.0
Quota configs for the default user-principal are consumer_byte_rate=1.048576E7, producer_byte_rate=1048576.0
Quota configs for user-principal 'batch' are request_percentage=50.0, controller_mutation_rate=2.5
SCRAM credential configs for user-principal 'admin' are SCRAM-SHA-512=iterations=8192
SCRAM credential configs for user-principal 'quota-writer' are SCRAM-SHA-512=iterations=8192
"""
# The same from Kafka 4.x (the 4.x ConfigCommand.scala: System.out.println and foreachEntry where
# 3.9 had println and forKeyValue, the same strings and ", " separators; checked against the
# compiled class of 4.3.1 too). The entities come in the order of the broker's answer (a hash map),
# and 4.x's tools log through log4j2's built-in configuration, whose errors go to standard output.
DESCRIBE_4_X = """\
Quota configs for user-principal 'batch' are controller_mutation_rate=2.5, request_percentage=50.0
Quota configs for the default user-principal are producer_byte_rate=1048576.0, consumer_byte_rate=1.048576E7
Quota configs for user-principal 'quota-writer' are producer_byte_rate=65536.0
12:00:01.123 [kafka-admin-client-thread | adminclient-1] ERROR org.apache.kafka.clients.NetworkClient - a log line
SCRAM credential configs for user-principal 'quota-writer' are SCRAM-SHA-512=iterations=8192
"""
CLUSTER = {
    "quota-writer": {"producer_byte_rate": 65536.0},
    None: {"consumer_byte_rate": 10485760.0, "producer_byte_rate": 1048576.0},
    "batch": {"request_percentage": 50.0, "controller_mutation_rate": 2.5},
}
SECRET = 'pa"ss\\wörd-9f3a'


@pytest.mark.parametrize("output", [DESCRIBE_3_9, DESCRIBE_4_X], ids=["kafka-3.9", "kafka-4.x"])
def test_describe_output_of_both_releases_reads_the_same(output):
    assert parse_describe(output) == CLUSTER


def test_describe_without_quotas_reads_empty():
    scram_only = "SCRAM credential configs for user-principal 'admin' are SCRAM-SHA-512=iterations=8192\n"
    assert parse_describe(scram_only) == {}
    assert parse_describe("") == {}


def test_describe_reads_awkward_names_and_spacing():
    out = (
        "Quota configs for user-principal 'o'brien' are producer_byte_rate=1.0\n"
        "Quota configs for user-principal 'x' are y' are consumer_byte_rate=2.0,producer_byte_rate=3.0\n"
        "Quota configs for user-principal 'gone' are \n"
    )
    assert parse_describe(out) == {
        "o'brien": {"producer_byte_rate": 1.0},
        "x' are y": {"consumer_byte_rate": 2.0, "producer_byte_rate": 3.0},
    }


def test_a_quota_line_that_cannot_be_read_is_an_error_not_an_empty_cluster():
    with pytest.raises(QuotaError, match="cannot read the quota 'producer_byte_rate=lots'"):
        parse_describe("Quota configs for user-principal 'a' are producer_byte_rate=lots\n")


# --- validation: what Kafka would refuse -----------------------------------------------------

BAD_QUOTAS = {
    "not-a-number": ({"producer_byte_rate": "64k"}, "x: producer_byte_rate='64k' is not a number"),
    "a-boolean": ({"consumer_byte_rate": True}, "x: consumer_byte_rate=True is not a number"),
    "a-list": ({"request_percentage": [50]}, "x: request_percentage=[50] is not a number"),
    "not-finite": ({"controller_mutation_rate": "inf"}, "x: controller_mutation_rate='inf' is not a number"),
    "zero": (
        {"producer_byte_rate": 0},
        "x: producer_byte_rate=0 must be above 0 (Kafka refuses a quota of 0 or less; to lift a quota, remove it)",
    ),
    "negative": (
        {"request_percentage": -5},
        "x: request_percentage=-5 must be above 0 (Kafka refuses a quota of 0 or less; to lift a quota, remove it)",
    ),
    "fraction-of-a-byte-rate": (
        {"consumer_byte_rate": 1024.5},
        "x: consumer_byte_rate=1024.5 is not a whole number: Kafka defines consumer_byte_rate as LONG "
        "(bytes per second)",
    ),
    "percentage-as-text": (
        {"request_percentage": "50%"},
        "x: request_percentage='50%' is a percentage written as text: give the number without '%' (the percentage "
        "of one network or I/O thread's time, e.g. 50)",
    ),
    "above-long": (
        {"producer_byte_rate": 2**64},
        f"x: producer_byte_rate={2**64} is above Kafka's largest LONG (9223372036854775807)",
    ),
    "unknown-key": (
        {"producer_bytes_rate": 1},
        "x: unknown quota 'producer_bytes_rate' (did you mean 'producer_byte_rate'?); Kafka's user quotas are "
        "producer_byte_rate, consumer_byte_rate, request_percentage, controller_mutation_rate",
    ),
    "not-a-mapping": (
        [{"producer_byte_rate": 1}],
        "x: quotas must be a mapping of producer_byte_rate, consumer_byte_rate, request_percentage, "
        "controller_mutation_rate to numbers, not [{'producer_byte_rate': 1}]",
    ),
}


@pytest.mark.parametrize("case", list(BAD_QUOTAS))
def test_a_quota_kafka_would_refuse_is_refused_with_its_message(case):
    quotas, message = BAD_QUOTAS[case]
    assert quota_errors("x", quotas) == [message]


def test_close_to_a_refusal_but_fine():
    assert (
        quota_errors(
            "x",
            {
                "producer_byte_rate": "65536",  # a number typed as text
                "consumer_byte_rate": 1048576.0,  # whole, as a float
                "request_percentage": 0.5,  # a fraction of one thread: a DOUBLE
                "controller_mutation_rate": "2.5",
            },
        )
        == []
    )
    assert quota_errors("x", {}) == []


def test_users_quotas_are_checked_and_absent_users_hold_none():
    users = [
        {"name": "a", "password": "p", "quotas": {"producer_byte_rate": -1}},
        {"name": "b", "state": "absent", "quotas": {"producer_byte_rate": 1}},
        {"name": "c", "password": "p", "mechanism": "SCRAM-SHA-256", "quotas": {"consumer_byte_rate": 1}},
        {"name": "c", "password": "p", "quotas": {"consumer_byte_rate": 2}},
        {"name": "d", "password": "p"},
        "not a user",
    ]
    assert user_quota_errors(users) == [
        "kafka_users[0] (a): producer_byte_rate=-1 must be above 0 (Kafka refuses a quota of 0 or less; to lift a "
        "quota, remove it)",
        "kafka_users[1] (b): quotas on a user declared state: absent; remove them (its quotas go with it)",
        "kafka_users[3] (c): its quotas are declared in kafka_users[2] too; keep them in one entry",
    ]


# --- what the declaration owns --------------------------------------------------------------


def test_only_users_with_quotas_absent_users_and_given_defaults_are_owned():
    users = [
        {"name": "a", "password": SECRET, "quotas": {"producer_byte_rate": "65536"}},
        {"name": "b", "password": SECRET, "quotas": {}},
        {"name": "c", "password": SECRET},
        {"name": "d", "state": "absent"},
        {"name": "e", "password": SECRET, "quotas": None},  # as a spec's validation could leave it
    ]
    assert declared_quotas(users, None) == {"a": {"producer_byte_rate": 65536.0}, "b": {}, "d": {}}
    assert declared_quotas(users, {})[None] == {}
    assert declared_quotas([], {"consumer_byte_rate": 1024}) == {None: {"consumer_byte_rate": 1024.0}}


def test_invalid_declarations_are_refused_together():
    with pytest.raises(QuotaError) as info:
        declared_quotas([{"name": "a", "quotas": {"producer_byte_rat": 1}}], {"request_percentage": 0})
    text = str(info.value)
    assert "users[0] (a): unknown quota 'producer_byte_rat' (did you mean 'producer_byte_rate'?)" in text
    assert "defaults: request_percentage=0 must be above 0" in text


# --- the plan ---------------------------------------------------------------------------------


def test_plan_adds_changes_and_deletes_what_each_owned_entity_declares():
    declared = {
        "quota-writer": {"producer_byte_rate": 131072.0},  # changed
        "batch": {"request_percentage": 50.0},  # controller_mutation_rate removed from the declaration
        "new": {"consumer_byte_rate": 1024.0},  # added
        None: {"consumer_byte_rate": 10485760.0, "producer_byte_rate": 1048576.0},  # as it is
    }
    plan = plan_quotas(declared, CLUSTER, exclusive=False)
    assert plan.changes == [
        Change("batch", {}, ("controller_mutation_rate",)),
        Change("new", {"consumer_byte_rate": 1024.0}),
        Change("quota-writer", {"producer_byte_rate": 131072.0}),
    ]
    assert plan.after == {**CLUSTER, **declared}
    assert plan.undeclared == {}


def test_an_empty_mapping_deletes_every_quota_of_the_user():
    plan = plan_quotas({"batch": {}}, CLUSTER, exclusive=False)
    assert plan.changes == [Change("batch", {}, ("controller_mutation_rate", "request_percentage"))]
    assert "batch" not in plan.after


def test_undeclared_quotas_are_kept_and_reported_unless_exclusive():
    kept = plan_quotas({"quota-writer": {"producer_byte_rate": 65536.0}}, CLUSTER, exclusive=False)
    assert not kept.changed and kept.after == CLUSTER
    assert lines(kept.undeclared) == [
        "<default> consumer_byte_rate=10485760",
        "<default> producer_byte_rate=1048576",
        "User:batch controller_mutation_rate=2.5",
        "User:batch request_percentage=50",
    ]
    removed = plan_quotas({"quota-writer": {"producer_byte_rate": 65536.0}}, CLUSTER, exclusive=True)
    assert removed.changes == [
        Change(None, {}, ("consumer_byte_rate", "producer_byte_rate")),
        Change("batch", {}, ("controller_mutation_rate", "request_percentage")),
    ]
    assert removed.after == {"quota-writer": {"producer_byte_rate": 65536.0}}
    assert removed.undeclared == kept.undeclared  # what it removes is still listed


def test_the_cluster_as_declared_plans_nothing_and_the_plan_reaches_its_after():
    assert not plan_quotas(CLUSTER, parse_describe(DESCRIBE_4_X), exclusive=True).changed
    declared = {"quota-writer": {"producer_byte_rate": 1.0}, "batch": {}, None: {"request_percentage": 0.25}}
    first = plan_quotas(declared, CLUSTER, exclusive=True)
    assert first.changed
    # Applied, the cluster is `after`: the next run (the "second apply") has nothing to do.
    assert not plan_quotas(declared, first.after, exclusive=True).changed


def test_the_diff_lists_each_quota_before_and_after():
    plan = plan_quotas({"quota-writer": {"producer_byte_rate": 131072.0}, "batch": {}}, CLUSTER, exclusive=False)
    assert diff(plan) == {
        "before": (
            "<default> consumer_byte_rate=10485760\n<default> producer_byte_rate=1048576\n"
            "User:batch controller_mutation_rate=2.5\nUser:batch request_percentage=50\n"
            "User:quota-writer producer_byte_rate=65536\n"
        ),
        "after": (
            "<default> consumer_byte_rate=10485760\n<default> producer_byte_rate=1048576\n"
            "User:quota-writer producer_byte_rate=131072\n"
        ),
    }
    assert as_result(plan.after)["User:quota-writer"] == {"producer_byte_rate": 131072}


# --- the tool's command lines ------------------------------------------------------------------

BOOTSTRAP = "10.99.0.11:9093,10.99.0.12:9093"
CONNECT = ["kafka.admin.ConfigCommand", "--bootstrap-server", BOOTSTRAP, "--command-config", "/dev/stdin"]


def test_commands_name_one_entity_each_and_read_the_login_from_stdin():
    assert describe_command(BOOTSTRAP, "3.9.2") == [*CONNECT, "--describe", "--entity-type", "users"]
    both = Change("batch", {"request_percentage": 12.5, "producer_byte_rate": 1048576.0}, ("consumer_byte_rate",))
    assert alter_command(BOOTSTRAP, "3.9.2", both) == [
        *CONNECT,
        "--alter",
        "--entity-type",
        "users",
        "--entity-name",
        "batch",
        "--add-config",
        "producer_byte_rate=1048576,request_percentage=12.5",
        "--delete-config",
        "consumer_byte_rate",
    ]
    default = alter_command(BOOTSTRAP, "3.9.2", Change(None, {"controller_mutation_rate": 10.0}))
    assert default[-4:] == ["users", "--entity-default", "--add-config", "controller_mutation_rate=10"]
    removal = alter_command(BOOTSTRAP, "3.9.2", Change("a", {}, ("producer_byte_rate", "request_percentage")))
    assert removal[-2:] == ["--delete-config", "producer_byte_rate,request_percentage"]
    assert "--add-config" not in removal


def test_the_tool_class_is_the_release_s_own():
    # Kafka 4.4 moved ConfigCommand from the core jar to the tools jar (each archive: test_kafka_artifacts).
    assert tool_class("3.9.2") == tool_class("4.3.1") == "kafka.admin.ConfigCommand"
    assert tool_class("4.4.0") == tool_class("4.4") == tool_class("5.0.1") == "org.apache.kafka.tools.ConfigCommand"
    assert describe_command(BOOTSTRAP, "4.4.0")[0] == "org.apache.kafka.tools.ConfigCommand"
    assert alter_command(BOOTSTRAP, "4.4.0", Change("a", {"producer_byte_rate": 1.0}))[0] == tool_class("4.4.0")
    with pytest.raises(QuotaError, match="'latest' is not a Kafka release"):
        tool_class("latest")


def properties_value(text: str) -> str:
    """A .properties line's value as java.util.Properties reads it (escapes, \\uXXXX)."""
    out, i = [], 0
    while i < len(text):
        if text[i] == "\\":
            if text[i + 1] == "u":
                out.append(chr(int(text[i + 2 : i + 6], 16)))
                i += 6
                continue
            out.append(text[i + 1])
            i += 2
            continue
        out.append(text[i])
        i += 1
    return "".join(out)


def jaas_value(jaas: str, key: str) -> str:
    """A quoted option of a JAAS line as Kafka's JaasConfig tokenizer reads it (backslash escapes)."""
    start = jaas.index(f'{key}="') + len(key) + 2
    out, i = [], start
    while jaas[i] != '"':
        if jaas[i] == "\\":
            i += 1
        out.append(jaas[i])
        i += 1
    return "".join(out)


def test_the_client_settings_carry_any_password_intact():
    text = command_config("admin", SECRET, "/etc/kafka/tls/truststore.pem")
    settings = dict(line.split("=", 1) for line in text.splitlines())
    assert settings["security.protocol"] == "SASL_SSL"
    assert settings["sasl.mechanism"] == "SCRAM-SHA-512"
    assert settings["ssl.truststore.type"] == "PEM"
    assert settings["ssl.truststore.location"] == "/etc/kafka/tls/truststore.pem"
    assert text.isascii()  # the tool reads the file as ISO-8859-1
    jaas = properties_value(settings["sasl.jaas.config"])
    assert jaas.startswith("org.apache.kafka.common.security.scram.ScramLoginModule required ")
    assert jaas_value(jaas, "username") == "admin"
    assert jaas_value(jaas, "password") == SECRET


def test_client_settings_refused_rather_than_broken():
    with pytest.raises(QuotaError, match="line break"):
        command_config("admin", "two\nlines", "/t.pem")
    with pytest.raises(QuotaError, match="unknown SASL mechanism 'PLAIN'"):
        command_config("admin", "p", "/t.pem", "PLAIN")
    with pytest.raises(QuotaError, match="needs a user name and a password"):
        command_config("admin", "", "/t.pem")


def test_no_password_in_any_output_but_the_client_settings():
    users = [{"name": "a", "password": SECRET, "quotas": {"producer_byte_rate": 1}}, {"name": "b", "password": SECRET}]
    plan = plan_quotas(declared_quotas(users, {"consumer_byte_rate": 5}), CLUSTER, exclusive=True)
    shown = [str(diff(plan)), str(as_result(plan.after)), str(lines(plan.undeclared)), str(plan.changes)]
    shown += [" ".join(alter_command(BOOTSTRAP, "3.9.2", c)) for c in plan.changes] + [
        " ".join(describe_command(BOOTSTRAP, "3.9.2"))
    ]
    assert plan.changed and not [s for s in shown if SECRET in s or "wörd" in s]
    assert mask(f"login {SECRET} failed ({SECRET[:4]})", [SECRET, SECRET[:4]]) == "login ******** failed (********)"


@needs_archives
@each_archive
def test_each_archive_holds_its_releases_tool_class(archive: Path) -> None:
    version = archive.name.removeprefix("kafka_2.13-").removesuffix(".tgz")
    wanted = tool_class(version).replace(".", "/") + ".class"
    with tarfile.open(archive) as tar:
        jars = [m for m in tar.getmembers() if m.name.endswith(".jar") and "/libs/" in m.name]
        found = []
        for member in jars:
            with zipfile.ZipFile(io.BytesIO(tar.extractfile(member).read())) as jar:
                if wanted in jar.namelist():
                    found.append(member.name)
    assert found, f"{archive.name}: no {wanted} in its libs"
