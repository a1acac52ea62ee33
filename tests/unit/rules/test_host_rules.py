"""The small readers behind the preflight's input rules: numbers as typed, the protected
server.properties keys, and the storage role's default that host_rules mirrors."""

from __future__ import annotations

from pathlib import Path

import jinja2
import pytest
import yaml

from kafkakit.rules.broker_properties import PROTECTED_PROPERTIES, protected
from kafkakit.rules.hosts import STORAGE_BROKER_DIRS, STORAGE_MOUNT_POINT, encrypted_roots, host_name_errors
from kafkakit.rules.values import is_blank, is_true, whole_number

ROOT = Path(__file__).resolve().parents[3]
STORAGE = yaml.safe_load((ROOT / "roles" / "storage" / "defaults" / "main.yml").read_text())


def test_the_brokers_storage_dirs_are_the_storage_roles_default() -> None:
    # The role's default is a template of the host's groups: render it for a broker-only host.
    rendered = jinja2.Environment().from_string(STORAGE["storage_dirs"]).render(group_names=["kafka_broker"])
    dirs = yaml.safe_load(rendered)
    assert [(d["name"], d["path"]) for d in dirs] == list(STORAGE_BROKER_DIRS)
    assert STORAGE["storage_mount_point"] == STORAGE_MOUNT_POINT


def test_encrypted_roots_of_a_host_with_its_own_storage_dirs() -> None:
    hv = {
        "storage_mount_point": "/mnt/data",
        "storage_dirs": [{"name": "k", "path": "/data/k", "unit": "kafka.service"}],
    }
    assert encrypted_roots(hv, {}) == ["/data/k", "/mnt/data/k"]


@pytest.mark.parametrize(
    ("value", "number"),
    [(3, 3), ("3", 3), (" -1 ", -1), (0, 0), (True, None), ("three", None), (2.0, None), (None, None), ("", None)],
)
def test_whole_number(value: object, number: int | None) -> None:
    assert whole_number(value) == number


def test_true_and_blank() -> None:
    assert is_true(True) and is_true("TRUE") and not is_true("false") and not is_true(1)
    assert is_blank(None) and is_blank(" ") and not is_blank("x") and not is_blank(0)


@pytest.mark.parametrize(
    "key", ["listeners", "ssl.keystore.location", "sasl.enabled.mechanisms", "listener.name.client.foo", "super.users"]
)
def test_protected_keys(key: str) -> None:
    assert protected(key)


@pytest.mark.parametrize("key", ["num.io.threads", "log.retention.hours", "socket.send.buffer.bytes"])
def test_tuning_keys_are_free(key: str) -> None:
    assert not protected(key)


def test_every_protected_key_the_template_sets_is_protected() -> None:
    # Durability and security lines of server.properties.j2 must not be overridable.
    template = (ROOT / "roles" / "kafka_broker" / "templates" / "server.properties.j2").read_text()
    keys = {line.split("=", 1)[0] for line in template.splitlines() if "=" in line and not line.startswith(("#", "{"))}
    for key in ("unclean.leader.election.enable", "min.insync.replicas", "authorizer.class.name", "log.dirs"):
        assert key in keys and key in PROTECTED_PROPERTIES
    assert sorted(k for k in keys if k.startswith(("ssl.", "sasl.", "listener")) and not protected(k)) == []


@pytest.mark.parametrize(
    ("facts", "expected"),
    [
        ({"dc": "dc1", "kafka_rack": "dc1-az1"}, []),
        ({"dc": "dc1", "kafka_rack": 3}, []),  # a number is a name too
        (
            {"dc": "dc1", "kafka_rack": ["dc1-az1"]},
            ["host h: kafka_rack=['dc1-az1'] is not a name; give one word, like dc1 or dc1-az1"],
        ),
        ({"dc": {"name": "dc1"}}, ["host h: dc={'name': 'dc1'} is not a name; give one word, like dc1 or dc1-az1"]),
        (
            {"dc": "dc1", "kafka_rack": True},
            ["host h: kafka_rack=True is not a name; give one word, like dc1 or dc1-az1"],
        ),
    ],
)
def test_host_names(facts, expected) -> None:
    assert host_name_errors(["h"], {"h": facts}) == expected
