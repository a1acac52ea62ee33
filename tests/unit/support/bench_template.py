"""A role's templates rendered the way the template module does (trim_blocks, Ansible's filters
and tests): template_env for any role, render for the broker's server.properties.j2 with the role
defaults and a sample dc1 broker's host facts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jinja2
import yaml
from ansible.plugins.filter.core import FilterModule as CoreFilters
from ansible.plugins.test.core import TestModule as CoreTests

ROOT = Path(__file__).resolve().parents[3]
DEFAULTS = [ROOT / "roles" / role / "defaults" / "main.yml" for role in ("kafka_common", "kafka_broker")]

# Host facts and the defaults that are themselves templates over the inventory (derived here).
SAMPLE_HOST: dict[str, Any] = {
    "ansible_managed": "Ansible managed",
    "broker_id": 1,
    "kafka_rack": "dc1-az1",
    "dc": "dc1",
    "private_ip": "10.213.7.11",
    "kafka_keystore_password": "keystore-secret",
    "kafka_zookeeper_password": "zookeeper-secret",
    "kafka_cluster_brokers": ["dc1-kafka1", "dc1-kafka2", "dc1-kafka3"],
    "kafka_super_users": ["dc1:brokers", "admin"],
    "kafka_zookeeper_connect": "10.213.7.11:2182,10.213.7.12:2182,10.213.7.13:2182/kafka",
}


def role_vars(**overrides: Any) -> dict[str, Any]:
    variables: dict[str, Any] = {}
    for path in DEFAULTS:
        variables.update(yaml.safe_load(path.read_text()))
    return {**variables, **SAMPLE_HOST, **overrides}


def template_env(role: str) -> jinja2.Environment:
    """A role's templates as the template module loads them: trim_blocks, Ansible's core filters
    and tests, and an undefined variable an error."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(ROOT / "roles" / role / "templates"),
        trim_blocks=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    env.filters.update(CoreFilters().filters())
    env.tests.update(CoreTests().tests())
    return env


def render(name: str = "server.properties.j2", **overrides: Any) -> str:
    return template_env("kafka_broker").get_template(name).render(role_vars(**overrides))
