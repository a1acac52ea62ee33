"""kafkakit.cluster.connectors: the plan from declared to current connectors, Connect's validation answer,
the secrets as references, and the REST calls a plan makes (against a recording client)."""

from __future__ import annotations

from typing import Any

import pytest

from kafkakit.cluster.connect import RestError, TlsFiles
from kafkakit.cluster.connectors import (
    Action,
    Current,
    Declared,
    SourceSlot,
    apply,
    connector_acls,
    declared_connectors,
    declared_errors,
    plan,
    properties_text,
    properties_value,
    retire,
    secret_files,
    validate,
    validation_errors,
)

CLS = "io.debezium.connector.postgresql.PostgresConnector"
TLS = TlsFiles("ca", "cert", "key")


def current(name: str, config: dict[str, str], state: str = "RUNNING") -> Current:
    return Current(name, {**config, "connector.class": CLS, "name": name}, state)


def test_nothing_to_do_when_config_and_state_match():
    d = Declared("orders", CLS, "running", {"tasks.max": "1"})
    assert plan([d], {"orders": current("orders", {"tasks.max": "1"})}).actions == []


def test_values_are_stored_as_connect_writes_them():
    d = Declared("orders", CLS, "running", {"tasks.max": 1, "snapshot.locking": False, "tombstones.on.delete": True})
    assert d.full_config()["tasks.max"] == "1"
    assert (d.full_config()["snapshot.locking"], d.full_config()["tombstones.on.delete"]) == ("false", "true")


def test_a_new_connector_is_created_in_its_declared_state():
    todo = plan([Declared("orders", CLS, "stopped", {"tasks.max": 1})], {})
    assert todo.actions == [Action("orders", "create", "stopped")]
    assert todo.diffs["orders"] == ([], [f"connector.class={CLS}", "name=orders", "tasks.max=1"])


def test_a_changed_config_is_an_update_with_its_difference_and_a_state_change_follows():
    todo = plan(
        [Declared("orders", CLS, "paused", {"tasks.max": "2"})], {"orders": current("orders", {"tasks.max": "1"})}
    )
    assert todo.actions == [Action("orders", "update"), Action("orders", "pause")]
    before, after = todo.diffs["orders"]
    assert "tasks.max=1" in before and "tasks.max=2" in after


@pytest.mark.parametrize(
    ("have", "want", "verb"),
    [
        ("PAUSED", "running", "resume"),
        ("STOPPED", "running", "resume"),
        ("RUNNING", "stopped", "stop"),
        ("STOPPED", "paused", "pause"),
    ],
)
def test_each_state_change_takes_its_call(have: str, want: str, verb: str):
    todo = plan([Declared("orders", CLS, want, {})], {"orders": current("orders", {}, have)})
    assert todo.actions == [Action("orders", verb)]


@pytest.mark.parametrize("state", ["FAILED", "UNASSIGNED", "RESTARTING"])
def test_a_failed_or_moving_connector_declared_running_is_left_alone(state: str):
    # Its target state is already running; restarting what failed is ops/connect-restart-failed.yml's.
    todo = plan([Declared("orders", CLS, "running", {})], {"orders": current("orders", {}, state)})
    assert todo.actions == []
    paused = plan([Declared("orders", CLS, "paused", {})], {"orders": current("orders", {}, state)})
    assert paused.actions == [Action("orders", "pause")]


def test_a_deletion_is_refused_unless_named_and_undeclared_connectors_are_only_reported():
    mirror = {"connector.class": "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector"}
    have = {"old": Current("old", mirror, "RUNNING"), "stray": Current("stray", mirror, "RUNNING")}
    refused = plan([Declared("old", "", "absent")], have)
    assert (
        refused.actions == [] and len(refused.refusals) == 1 and "kafka_connectors_allow_delete" in refused.refusals[0]
    )
    assert refused.undeclared == ["stray"]
    allowed = plan([Declared("old", "", "absent")], have, allow_delete=["old"])
    assert allowed.actions == [Action("old", "delete")] and allowed.refusals == []
    assert plan([Declared("gone", "", "absent")], have).actions == [] and allowed.slots == []


PASSWORD_REF = "${file:/etc/kafka-connect/secrets/orders-cdc.properties:database.password}"
CDC_CONFIG = {
    "database.hostname": "10.0.0.9",
    "database.dbname": "shop",
    "database.user": "debezium",
    "database.password": PASSWORD_REF,
    "database.sslmode": "verify-full",
    "database.sslrootcert": "/etc/kafka-connect/files/db-ca.crt",
    "slot.name": "dbz_orders",
    "publication.name": "dbz_orders",
    "publication.autocreate.mode": "disabled",
}


def test_a_postgres_connectors_deletion_names_its_slot_and_drops_it_once_confirmed():
    have = {"orders-cdc": current("orders-cdc", CDC_CONFIG)}
    refused = plan([Declared("orders-cdc", "", "absent")], have)
    assert refused.actions == [] and refused.slots == []
    assert "replication slot dbz_orders in 10.0.0.9:5432/shop" in refused.refusals[0], refused.refusals
    # The database owner's publication (autocreate disabled) is theirs: not named, not dropped.
    assert "publication" not in refused.refusals[0].split("its source")[1]
    allowed = plan([Declared("orders-cdc", "", "absent")], have, allow_delete=["orders-cdc"])
    assert allowed.actions == [Action("orders-cdc", "delete")] and allowed.refusals == []
    assert allowed.slots == [
        SourceSlot(
            "orders-cdc",
            "10.0.0.9",
            5432,
            "shop",
            "debezium",
            "verify-full",
            "/etc/kafka-connect/files/db-ca.crt",
            "dbz_orders",
            "",
            "/etc/kafka-connect/secrets/orders-cdc.properties",
            "database.password",
        )
    ]


def test_a_publication_debezium_made_goes_with_its_slot_and_debeziums_defaults_fill_the_gaps():
    config = {k: v for k, v in CDC_CONFIG.items() if not k.startswith(("slot.", "publication.", "database.ssl"))}
    slot = plan([Declared("c", "", "absent")], {"c": current("c", config)}, allow_delete=["c"]).slots[0]
    assert (slot.slot, slot.publication, slot.port, slot.sslmode) == ("debezium", "dbz_publication", 5432, "prefer")
    refused = plan([Declared("c", "", "absent")], {"c": current("c", config)})
    assert "replication slot debezium and publication dbz_publication in" in refused.refusals[0]


def test_a_slot_the_kit_cannot_log_in_to_drop_refuses_the_deletion_before_anything_changes():
    config = {**CDC_CONFIG, "database.password": "in-clear"}
    refused = plan([Declared("c", "", "absent")], {"c": current("c", config)}, allow_delete=["c"])
    assert refused.actions == [] and refused.slots == []
    assert "no ${file:...} reference" in refused.refusals[0] and "in-clear" not in refused.refusals[0]


STOPPED = {"connector": {"state": "STOPPED"}, "tasks": []}


def test_a_deletion_stops_the_connector_waits_for_its_tasks_to_go_and_resets_its_offsets_first():
    answers = iter(
        [
            {"connector": {"state": "RUNNING"}, "tasks": [{"id": 0}]},
            {"connector": {"state": "STOPPED"}, "tasks": [{"id": 0}]},
            STOPPED,
        ]
    )
    calls: list[tuple[str, str]] = []

    def call(url: str, method: str, path: str, tls: TlsFiles, body: Any = None) -> tuple[int, Any]:
        calls.append((method, path))
        return 200, next(answers) if method == "GET" else {}

    retire("https://w:8083", TLS, "orders cdc", call, sleep=lambda _s: None)
    assert calls == [
        ("PUT", "/connectors/orders%20cdc/stop"),
        ("GET", "/connectors/orders%20cdc/status"),
        ("GET", "/connectors/orders%20cdc/status"),
        ("GET", "/connectors/orders%20cdc/status"),
        ("DELETE", "/connectors/orders%20cdc/offsets"),
        ("DELETE", "/connectors/orders%20cdc"),
    ]


def test_a_connector_that_does_not_stop_is_not_deleted():
    now = iter(range(0, 1000, 50))
    rec = Recorder({("GET", "/connectors/c/status"): {"connector": {"state": "RUNNING"}, "tasks": [{"id": 0}]}})
    with pytest.raises(RestError, match="did not stop within 120 s"):
        retire("https://w:8083", TLS, "c", rec, clock=lambda: next(now), sleep=lambda _s: None)
    assert ("DELETE", "/connectors/c", None) not in rec.calls and (
        "DELETE",
        "/connectors/c/offsets",
        None,
    ) not in rec.calls


def test_declaration_errors_name_the_entry():
    errors = declared_errors(
        [
            {"name": "a", "class": CLS},
            {"name": "a", "class": CLS},
            {"name": "b", "class": CLS, "state": "sleeping"},
            {"name": "c"},
            {"name": "d", "class": CLS, "config": {"name": "x"}},
            {"name": "e", "state": "absent"},
        ]
    )
    assert errors == [
        "kafka_connectors[1] (a): declared twice",
        "kafka_connectors[2] (b): state 'sleeping' is none of ['running', 'paused', 'stopped', 'absent']",
        "kafka_connectors[3] (c): no class",
        "kafka_connectors[4] (d): config names 'name' or 'connector.class' (the entry's name and class set them)",
    ]


# Connect's answer to PUT /connector-plugins/{class}/config/validate with a typo'd setting.
VALIDATE_ANSWER = {
    "name": CLS,
    "error_count": 1,
    "groups": ["Common"],
    "configs": [
        {"definition": {"name": "tasks.max"}, "value": {"name": "tasks.max", "value": "1", "errors": []}},
        {
            "definition": {"name": "plugin.name"},
            "value": {
                "name": "plugin.name",
                "value": "pgoutputt",
                "errors": ["Invalid value pgoutputt for configuration plugin.name"],
            },
        },
    ],
}


def test_validation_errors_are_read_from_connects_answer():
    assert validation_errors(VALIDATE_ANSWER) == ["plugin.name: Invalid value pgoutputt for configuration plugin.name"]
    assert validation_errors({"error_count": 0, "configs": []}) == []
    # A setting Connect only defines comes with "value": null (seen on Connect 4.3).
    with_null = {**VALIDATE_ANSWER, "configs": [*VALIDATE_ANSWER["configs"], {"definition": {}, "value": None}]}
    assert validation_errors(with_null) == ["plugin.name: Invalid value pgoutputt for configuration plugin.name"]


class Recorder:
    """The REST calls a function makes, answered from a table (path -> answer or error)."""

    def __init__(self, answers: dict[tuple[str, str], Any]) -> None:
        self.answers = answers
        self.calls: list[tuple[str, str, Any]] = []

    def __call__(self, url: str, method: str, path: str, tls: TlsFiles, body: Any = None) -> tuple[int, Any]:
        self.calls.append((method, path, body))
        answer = self.answers.get((method, path), {})
        if isinstance(answer, Exception):
            raise answer
        return 200, answer


def test_validate_names_the_connector_and_a_class_in_no_plugin():
    rec = Recorder(
        {
            ("PUT", f"/connector-plugins/{CLS}/config/validate"): VALIDATE_ANSWER,
            ("PUT", "/connector-plugins/com.example.Missing/config/validate"): RestError(404, "Unknown plugin"),
        }
    )
    errors = validate(
        "https://w:8083",
        TLS,
        [Declared("orders", CLS), Declared("x", "com.example.Missing"), Declared("g", "", "absent")],
        rec,
    )
    assert errors[0] == "connector orders: plugin.name: Invalid value pgoutputt for configuration plugin.name"
    assert errors[1].startswith("connector x: class com.example.Missing could not be validated")
    assert len(rec.calls) == 2  # nothing validated for the absent one


def test_apply_makes_one_call_per_action_in_order():
    rec = Recorder({("GET", "/connectors/old/status"): STOPPED})
    d = Declared("orders", CLS, "paused", {"tasks.max": "1"})
    apply(
        "https://w:8083",
        TLS,
        [d, Declared("old", "", "absent")],
        [Action("orders", "create", "paused"), Action("old", "delete")],
        rec,
    )
    assert rec.calls == [
        ("POST", "/connectors", {"name": "orders", "config": d.full_config(), "initial_state": "PAUSED"}),
        ("PUT", "/connectors/old/stop", None),
        ("GET", "/connectors/old/status", None),
        ("DELETE", "/connectors/old/offsets", None),
        ("DELETE", "/connectors/old", None),
    ]
    rec = Recorder({})
    apply("https://w:8083", TLS, [d], [Action("orders", "update"), Action("orders", "resume")], rec)
    assert [c[:2] for c in rec.calls] == [("PUT", "/connectors/orders/config"), ("PUT", "/connectors/orders/resume")]


def test_secrets_and_principals_become_references_and_their_files_hold_the_values():
    entries = [
        {
            "name": "orders-cdc",
            "class": CLS,
            "config": {"database.user": "kafkakit_cdc"},
            "secrets": {"database.password": "s3cr3t"},
            "principal": "orders-cdc",
        }
    ]
    [d] = declared_connectors(entries, "/etc/kafka-connect/secrets")
    assert d.config["database.password"] == "${file:/etc/kafka-connect/secrets/orders-cdc.properties:database.password}"
    for prefix in ("producer.override.", "consumer.override.", "admin.override."):
        jaas = d.config[f"{prefix}sasl.jaas.config"]
        assert (
            'username="orders-cdc"' in jaas
            and "${file:/etc/kafka-connect/secrets/principals.properties:orders-cdc}" in jaas
        )
    assert "s3cr3t" not in repr(d) and "pw-of-user" not in repr(d)
    files = secret_files(entries, "/etc/kafka-connect/secrets", {"orders-cdc": "pw-of-user"})
    assert files == {
        "/etc/kafka-connect/secrets/orders-cdc.properties": "database.password=s3cr3t\n",
        "/etc/kafka-connect/secrets/principals.properties": "orders-cdc=pw-of-user\n",
    }
    with pytest.raises(ValueError, match="principal orders-cdc is no declared user"):
        secret_files(entries, "/s", {})


def test_a_connector_declared_absent_keeps_its_login_acls_and_secrets_for_its_deletion():
    """Connect fences an exactly-once source's producers as the connector's principal before it
    resets the offsets, and the slot is dropped with the database login: both must still be there."""
    entry = {"name": "orders-cdc", "secrets": {"database.password": "s3cr3t"}, "principal": "orders-cdc"}
    for state in ("running", "absent"):
        e = {**entry, "state": state}
        files = secret_files([e], "/s", {"orders-cdc": "pw"})
        assert files == {
            "/s/orders-cdc.properties": "database.password=s3cr3t\n",
            "/s/principals.properties": "orders-cdc=pw\n",
        }
        acls = connector_acls([e], "connect-dc1", "connect-offsets")
        assert {(a["resource_type"], a["name"]) for a in acls} == {
            ("transactional_id", "connect-dc1-orders-cdc-"),
            ("topic", "connect-offsets"),
            ("group", "connect-orders-cdc"),
        }


def test_properties_escape_backslashes_and_refuse_line_breaks():
    assert properties_text({"p": "a\\b"}) == "p=a\\\\b\n"
    with pytest.raises(ValueError):
        properties_text({"p": "a\nb"})


def test_a_secrets_value_reads_back_as_written():
    text = properties_text({"database.password": "a\\b=c", "other": "x"})
    assert properties_value(text, "database.password") == "a\\b=c" and properties_value(text, "other") == "x"
    with pytest.raises(KeyError, match="no missing in the file"):
        properties_value(text, "missing")
