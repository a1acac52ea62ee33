"""kafkakit.rules.settings: the values an inventory gives the roles, each refused with one message
before any host is touched, and each with a neighbour value that passes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kafkakit.rules.broker_properties import connect_protected, protected
from kafkakit.rules.settings import (
    KIT_PROPERTIES,
    ROLE_GROUPS,
    admin_client_errors,
    argument_spec_errors,
    extra_property_value_errors,
    kit_property_errors,
    port_errors,
    property_problem,
    super_user_errors,
)

ROOT = Path(__file__).resolve().parents[3]
SPECS = {
    p.parents[1].name: yaml.safe_load(p.read_text())["argument_specs"]
    for p in sorted((ROOT / "roles").glob("*/meta/argument_specs.yml"))
}
GROUPS = {
    "all": ["b1", "b2", "w1", "m1", "z1"],
    "kafka_broker": ["b1", "b2"],
    "kafka_connect": ["w1"],
    "mirrormaker": ["m1"],
    "zookeeper": ["z1"],
}


def reader(values: dict[str, dict[str, Any]]):  # noqa: ANN201
    def read(host: str, name: str) -> tuple[Any, str | None]:
        return values.get(host, {}).get(name), None

    return read


def everywhere(**variables: Any) -> dict[str, dict[str, Any]]:
    return {h: dict(variables) for h in GROUPS["all"]}


# --- a property's value against Kafka's definition --------------------------------------------


@pytest.mark.parametrize(
    ("component", "name", "value", "version", "problem"),
    [
        (
            "broker",
            "num.network.threads",
            "eight",
            "3.9.2",
            "is not a whole number (Kafka 3.x defines num.network.threads as INT [1,...])",
        ),
        ("broker", "num.network.threads", "8", "3.9.2", None),
        ("broker", "num.io.threads", 0, "4.3.1", "is outside Kafka's range [1,...] (Kafka 4.x)"),
        ("broker", "num.io.threads", 1, "4.3.1", None),
        (
            "broker",
            "unclean.leader.election.enable",
            "yes",
            "3.9.2",
            "is not true or false (Kafka 3.x defines unclean.leader.election.enable as BOOLEAN)",
        ),
        ("broker", "unclean.leader.election.enable", False, "3.9.2", None),
        (
            "broker",
            "log.retention.hours",
            -5,
            "3.9.2",
            "is negative: Kafka reads any negative value as no limit; write -1 if that is meant",
        ),
        ("broker", "log.retention.hours", -1, "3.9.2", None),
        (
            "broker",
            "log.retention.bytes",
            "-2",
            "4.3.1",
            "is negative: Kafka reads any negative value as no limit; write -1 if that is meant",
        ),
        ("broker", "log.segment.bytes", 1000, "4.3.1", "is outside Kafka's range [1048576,...] (Kafka 4.x)"),
        ("broker", "log.segment.bytes", 1000, "3.9.2", None),
        (
            "broker",
            "inter.broker.protocol.version",
            "3.10",
            "3.9.2",
            "is not one of Kafka's 57 values ['0.8.0', "
            "'0.8.1', '0.8.2'] ... ['3.9-IV0', '4.0-IV0', '4.0-IV1'] (did you mean '3.1-IV0'?) (Kafka 3.x)",
        ),
        ("broker", "inter.broker.protocol.version", "3.8", "3.9.2", None),
        ("broker", "no.such.property", "x", "3.9.2", None),  # a plugin's: not Kafka's to define
        (
            "connect",
            "plugin.discovery",
            "serviceload",
            "4.3.1",
            "is not one of Kafka's ['ONLY_SCAN', "
            "'SERVICE_LOAD', 'HYBRID_WARN', 'HYBRID_FAIL'] (in any case) (did you mean 'SERVICE_LOAD'?) (Kafka 4.x)",
        ),
        ("connect", "plugin.discovery", "hybrid_warn", "4.3.1", None),
        ("source", "tasks.max", 0, "4.3.1", "is outside Kafka's range [1,...] (Kafka 4.x)"),
    ],
)
def test_property_problem(component, name, value, version, problem) -> None:
    assert property_problem(component, name, value, version) == problem


# --- extra properties ----------------------------------------------------------------------------


def test_an_extra_broker_property_of_the_wrong_type_names_its_hosts_once() -> None:
    extras = {h: ("3.9.2", {"num.network.threads": "eight", "background.threads": 4}) for h in ("b1", "b2")}
    assert extra_property_value_errors("kafka_extra_properties", "broker", extras, protected) == [
        "kafka_extra_properties of ['b1', 'b2']: num.network.threads='eight' is not a whole number "
        "(Kafka 3.x defines num.network.threads as INT [1,...])"
    ]


def test_protected_and_unknown_extra_properties_are_left_to_their_own_rules() -> None:
    extras = {
        "b1": ("3.9.2", {"ssl.client.auth": "optional", "my.plugin.flag": "maybe", "offsets.retention.minutes": 1})
    }
    assert extra_property_value_errors("kafka_extra_properties", "broker", extras, protected) == []


def test_the_release_line_of_each_host_applies() -> None:
    extras = {"b1": ("3.9.2", {"log.segment.bytes": 1000}), "b2": ("4.3.1", {"log.segment.bytes": 1000})}
    assert extra_property_value_errors("kafka_extra_properties", "broker", extras, protected) == [
        "kafka_extra_properties of ['b2']: log.segment.bytes=1000 is outside Kafka's range [1048576,...] (Kafka 4.x)"
    ]


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (
            {"offset.flush.interval.ms": "5s"},
            [
                "kafka_connect_extra_properties of ['w1']: offset.flush.interval.ms='5s' "
                "is not a whole number (Kafka 4.x defines offset.flush.interval.ms as LONG)"
            ],
        ),
        (
            {"producer.linger.ms": "5ms", "consumer.isolation.level": "committed"},
            [
                "kafka_connect_extra_properties of ['w1']: producer.linger.ms='5ms' is not a whole number (Kafka 4.x "
                "defines linger.ms as LONG [0,...])",
                "kafka_connect_extra_properties of ['w1']: consumer.isolation.level='committed' is not one of Kafka's "
                "['read_committed', 'read_uncommitted'] (did you mean 'read_committed'?) (Kafka 4.x)",
            ],
        ),
        (
            {
                "offset.flush.interval.ms": 5000,
                "exactly.once.source.support": "ENABLED",
                "producer.linger.ms": 5,
                "consumer.isolation.level": "read_committed",
                "producer.my.interceptor.setting": "anything",
            },
            [],
        ),
    ],
)
def test_connect_extra_properties(extra, expected) -> None:
    extras = {"w1": ("4.3.1", extra)}
    assert (
        extra_property_value_errors("kafka_connect_extra_properties", "connect", extras, connect_protected) == expected
    )


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (
            {"replication.factor": "three"},
            [
                "mirrormaker_extra_properties of ['m1']: replication.factor='three' is not "
                "a whole number (Kafka 4.x defines replication.factor as INT)"
            ],
        ),
        (
            {"dc1->dc2.tasks.max": 0},
            [
                "mirrormaker_extra_properties of ['m1']: dc1->dc2.tasks.max=0 is outside "
                "Kafka's range [1,...] (Kafka 4.x)"
            ],
        ),
        (
            {"dc2.offset.flush.interval.ms": "soon"},
            [
                "mirrormaker_extra_properties of ['m1']: "
                "dc2.offset.flush.interval.ms='soon' is not a whole number (Kafka 4.x defines "
                "offset.flush.interval.ms as "
                "LONG)"
            ],
        ),
        (
            {"dc2.producer.acks": "everyone"},
            [
                "mirrormaker_extra_properties of ['m1']: dc2.producer.acks='everyone' is not one of Kafka's ['all', "
                "'-1', '0', '1'] (Kafka 4.x)"
            ],
        ),
        (
            {
                "replication.factor": 3,
                "dc1->dc2.tasks.max": 4,
                "dc2.offset.flush.interval.ms": 1000,
                "dc2.producer.acks": "all",
                "x.y": "z",
            },
            [],
        ),
    ],
)
def test_mirrormaker_extra_properties(extra, expected) -> None:
    extras = {"m1": ("4.3.1", extra)}
    errors = extra_property_value_errors(
        "mirrormaker_extra_properties", "mirrormaker", extras, connect_protected, {"dc1", "dc2"}
    )
    assert errors == expected


# --- the kit's variables written as Kafka properties ----------------------------------------------


def release(host: str, component: str) -> str:
    return "3.9.2" if component == "broker" else "4.3.1"


@pytest.mark.parametrize(
    ("variables", "expected"),
    [
        (
            {"kafka_auto_create_topics": "yes"},
            [
                "kafka_auto_create_topics='yes' on ['b1', 'b2'] is not true or false "
                "(Kafka 3.x defines auto.create.topics.enable as BOOLEAN); the kit writes it as "
                "auto.create.topics.enable"
            ],
        ),
        ({"kafka_auto_create_topics": False}, []),
        (
            {"kafka_num_io_threads": 0},
            [
                "kafka_num_io_threads=0 on ['b1', 'b2'] is outside Kafka's range [1,...] "
                "(Kafka 3.x); the kit writes it as num.io.threads"
            ],
        ),
        ({"kafka_num_io_threads": 16}, []),
        (
            {"kafka_log_retention_hours": -5},
            [
                "kafka_log_retention_hours=-5 on ['b1', 'b2'] is negative: Kafka reads "
                "any negative value as no limit; write -1 if that is meant; the kit writes it as log.retention.hours"
            ],
        ),
        ({"kafka_inter_broker_protocol_version": ""}, []),  # blank: not written
        (
            {"kafka_connect_plugin_discovery": "serviceload"},
            [
                "kafka_connect_plugin_discovery='serviceload' on ['w1'] "
                "is not one of Kafka's ['ONLY_SCAN', 'SERVICE_LOAD', 'HYBRID_WARN', 'HYBRID_FAIL'] (in any case) "
                "(did you "
                "mean 'SERVICE_LOAD'?) (Kafka 4.x); the kit writes it as plugin.discovery"
            ],
        ),
        (
            {"kafka_connect_offset_partitions": 0},
            [
                "kafka_connect_offset_partitions=0 on ['w1'] is neither a positive "
                "number nor -1 (the broker's default) (Kafka 4.x); the kit writes it as offset.storage.partitions"
            ],
        ),
        (
            {"mirrormaker_sync_group_offsets": "yes"},
            [
                "mirrormaker_sync_group_offsets='yes' on ['m1'] is not true or "
                "false (Kafka 4.x defines sync.group.offsets.enabled as BOOLEAN); the kit writes it as "
                "sync.group.offsets.enabled"
            ],
        ),
        ({"mirrormaker_sync_group_offsets": True, "mirrormaker_tasks_max": 2}, []),
    ],
)
def test_kit_variables_written_as_kafka_properties(variables, expected) -> None:
    assert kit_property_errors(GROUPS, reader(everywhere(**variables)), release) == expected


def test_a_variable_refused_by_its_argument_spec_is_said_once() -> None:
    read = reader(everywhere(kafka_num_io_threads="eight"))
    assert kit_property_errors(GROUPS, read, release, skip={"kafka_num_io_threads"}) == []


def test_every_kit_property_is_one_kafka_defines() -> None:
    from kafkakit.rules.property_values import property_types

    for variable, (_, component, name) in KIT_PROPERTIES.items():
        assert any(name in property_types(component, v) for v in ("3.9.2", "4.3.1")), variable


def test_every_kit_property_is_written_by_its_template() -> None:
    templates = {
        "kafka_broker": ROOT / "roles/kafka_broker/templates/server.properties.j2",
        "kafka_connect": ROOT / "roles/kafka_connect/templates/connect-distributed.properties.j2",
        "mirrormaker": ROOT / "roles/mirrormaker2/templates/mm2.properties.j2",
    }
    for variable, (group, _, name) in KIT_PROPERTIES.items():
        lines = [line for line in templates[group].read_text().splitlines() if variable in line]
        assert any(name in line.split("=")[0] for line in lines), variable


# --- the roles' argument specs --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("variables", "expected"),
    [
        (
            {"kafka_log_cleanup_policy": "compacted"},
            {
                "kafka_log_cleanup_policy": [
                    "kafka_log_cleanup_policy='compacted' on ['b1', 'b2']: value of kafka_log_cleanup_policy must be "
                    "one of: "
                    "delete, compact, compact,delete, got: compacted (roles/kafka_broker/meta/argument_specs.yml)"
                ]
            },
        ),
        ({"kafka_log_cleanup_policy": "compact,delete"}, {}),
        (
            {"kafka_metadata_mode": "Kraft"},
            {
                "kafka_metadata_mode": [
                    "kafka_metadata_mode='Kraft' on ['b1', 'b2', 'w1', 'm1', 'z1']: value of kafka_metadata_mode "
                    "must be one of: zookeeper, kraft, got: Kraft (roles/kafka_common/meta/argument_specs.yml)",
                ]
            },
        ),
        (
            {"kafka_num_network_threads": "eight"},
            {
                "kafka_num_network_threads": [
                    "kafka_num_network_threads='eight' on ['b1', 'b2']: argument 'kafka_num_network_threads' is of "
                    "type str "
                    "and we were unable to convert to int: \"'eight'\" cannot be converted to an int "
                    "(roles/kafka_broker/meta/argument_specs.yml)"
                ]
            },
        ),
        ({"kafka_num_network_threads": "8"}, {}),
        (
            {"kafka_connect_plugin_discovery": "serviceload"},
            {
                "kafka_connect_plugin_discovery": [
                    "kafka_connect_plugin_discovery='serviceload' on ['w1']: value of kafka_connect_plugin_discovery "
                    "must be "
                    "one of: only_scan, hybrid_warn, hybrid_fail, service_load, got: serviceload "
                    "(roles/kafka_connect/meta/argument_specs.yml)"
                ]
            },
        ),
    ],
)
def test_argument_specs_are_applied_to_the_inventorys_values(variables, expected) -> None:
    found = argument_spec_errors(GROUPS, reader(everywhere(**variables)), SPECS)
    # Only the hosts whose roles declare the variable; first the role that refused it.
    assert {k: v[:1] for k, v in found.items()} == expected


def test_the_role_groups_are_the_playbooks() -> None:
    # The plays of site.yml and the playbooks it imports that apply roles, and the roles they pull in.
    groups: dict[str, set[str]] = {}
    for name in ("site.yml", "monitoring.yml", "spark.yml"):
        for play in yaml.safe_load((ROOT / "ansible" / name).read_text()):
            for entry in play.get("roles") or []:
                role = entry if isinstance(entry, str) else entry["role"]
                groups.setdefault(role, set()).update(play["hosts"].split(":"))
    for role in list(groups):
        meta = yaml.safe_load((ROOT / "roles" / role / "meta" / "main.yml").read_text()) or {}
        for dependency in meta.get("dependencies") or []:
            name = dependency if isinstance(dependency, str) else dependency["role"]
            groups.setdefault(name, set()).update(groups[role])
    assert {role: set(g) for role, g in ROLE_GROUPS.items()} == groups


def test_a_variable_another_rule_checks_is_left_to_it() -> None:
    read = reader(everywhere(mirrormaker_replication_policy="identical"))
    assert argument_spec_errors(GROUPS, read, SPECS)
    assert argument_spec_errors(GROUPS, read, SPECS, skip={"mirrormaker_replication_policy"}) == {}


def test_a_secret_is_never_shown() -> None:
    specs = {"kafka_broker": {"main": {"options": {"kafka_pin": {"type": "int", "no_log": True}}}}}
    found = argument_spec_errors(GROUPS, reader(everywhere(kafka_pin="s3cret")), specs)
    assert "s3cret" not in str(found)
    assert found["kafka_pin"][0].startswith("kafka_pin=(secret) on ['b1', 'b2']: ")


def test_an_unreadable_value_is_left_to_the_role() -> None:
    def read(host: str, name: str) -> tuple[Any, str | None]:
        return (None, "undefined") if name == "kafka_num_io_threads" else (None, None)

    assert argument_spec_errors(GROUPS, read, SPECS) == {}


# --- ports and super users ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("variables", "expected"),
    [
        (
            {"kafka_client_port": 99999},
            ["kafka_client_port=99999 on ['b1', 'b2', 'w1', 'm1', 'z1'] is not a TCP port (a whole number 1..65535)"],
        ),
        (
            {"kafka_client_port": 0},
            ["kafka_client_port=0 on ['b1', 'b2', 'w1', 'm1', 'z1'] is not a TCP port (a whole number 1..65535)"],
        ),
        ({"kafka_client_port": 9093, "kafka_connect_rest_port": "8443"}, []),
    ],
)
def test_ports(variables, expected) -> None:
    assert port_errors(GROUPS["all"], reader(everywhere(**variables))) == expected


@pytest.mark.parametrize(
    ("variables", "expected"),
    [
        (
            {"kafka_super_users": ["dc1:brokers", "*"]},
            [
                "kafka_super_users on ['b1', 'b2', 'w1', 'm1', 'z1'] names "
                "['*']: every principal (or every unauthenticated client) would be a super user, to whom no ACL "
                "applies; "
                "name the users"
            ],
        ),
        (
            {"kafka_admin_user": "ANONYMOUS"},
            [
                "kafka_admin_user on ['b1', 'b2', 'w1', 'm1', 'z1'] names ['ANONYMOUS']: "
                "every principal (or every unauthenticated client) would be a super user, to whom no ACL applies; "
                "name the "
                "users"
            ],
        ),
        ({"kafka_admin_user": "admin", "kafka_super_users": ["dc1:brokers", "admin"]}, []),
    ],
)
def test_super_users(variables, expected) -> None:
    assert super_user_errors(GROUPS["all"], reader(everywhere(**variables))) == expected


SECURE_ADMIN = {"security.protocol": "SASL_SSL", "sasl.mechanisms": "SCRAM-SHA-512", "ssl.ca.location": "/ca.crt"}


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        (SECURE_ADMIN, []),
        ({**SECURE_ADMIN, "security.protocol": "sasl_ssl", "enable.ssl.certificate.verification": True}, []),
        ({**SECURE_ADMIN, "ssl.endpoint.identification.algorithm": "https"}, []),
        (
            {**SECURE_ADMIN, "security.protocol": "SASL_PLAINTEXT"},
            [
                "kafka_admin_client_config on ['b1', 'b2', 'w1', 'm1', 'z1'] sets security.protocol='SASL_PLAINTEXT': "
                "the admin client must use SASL_SSL (the kit's brokers take the admin's password over TLS only, with "
                "their certificate and name checked)"
            ],
        ),
        (
            {**SECURE_ADMIN, "enable.ssl.certificate.verification": False},
            [
                "kafka_admin_client_config on ['b1', 'b2', 'w1', 'm1', 'z1'] sets enable.ssl.certificate.verification="
                "False: the admin client must use true (the kit's brokers take the admin's password over TLS only, "
                "with their certificate and name checked)"
            ],
        ),
        (
            {**SECURE_ADMIN, "ssl.endpoint.identification.algorithm": "none"},
            [
                "kafka_admin_client_config on ['b1', 'b2', 'w1', 'm1', 'z1'] sets ssl.endpoint.identification.algorithm"
                "='none': the admin client must use https (the kit's brokers take the admin's password over TLS only, "
                "with their certificate and name checked)"
            ],
        ),
    ],
)
def test_the_admin_client_stays_on_verified_tls(config, expected) -> None:
    assert admin_client_errors(GROUPS["all"], reader(everywhere(kafka_admin_client_config=config))) == expected


def test_a_value_made_of_a_role_default_is_left_to_the_role() -> None:
    # The preflight has not loaded every role's defaults: a value templated from one is Jinja's
    # Undefined when read (the lab's kafka_archive_src names kafka_version, a role default for dc1).
    import jinja2

    from kafkakit.rules.inventory import setting_errors

    undefined = jinja2.StrictUndefined(name="kafka_version")
    hostvars = {
        h: {"kafka_num_io_threads": undefined, "kafka_extra_properties": {"x": undefined}} for h in GROUPS["all"]
    }
    assert setting_errors(GROUPS, hostvars, {}, SPECS) == []
