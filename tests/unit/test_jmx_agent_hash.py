"""The JMX agent's basic-auth hash as roles/monitoring/tasks/jmx-agent.yml renders it must equal
what the agent computes: hex of BigInteger(1, SHA-256(salt:password)), which has no leading zeros."""

from __future__ import annotations

import hashlib
import itertools
from pathlib import Path

import jinja2
import yaml
from ansible.plugins.filter.core import FilterModule as CoreFilters

TASKS = Path(__file__).resolve().parents[2] / "roles" / "monitoring" / "tasks" / "jmx-agent.yml"


def agent_hash(salt: str, password: str) -> str:
    digest = hashlib.sha256(f"{salt}:{password}".encode()).digest()
    return format(int.from_bytes(digest, "big"), "x")


def rendered_hash(salt: str, password: str) -> str:
    task = next(t for t in yaml.safe_load(TASKS.read_text()) if "monitoring_jmx_auth" in t.get("vars", {}))
    expression = task["vars"]["monitoring_jmx_auth"]["httpServer"]["authentication"]["basic"]["passwordHash"]
    env = jinja2.Environment()
    env.filters.update(CoreFilters().filters())
    return env.from_string(expression).render(monitoring_jmx_salt=salt, monitoring_scrape_password=password)


def test_the_rendered_hash_matches_the_agent_even_with_a_leading_zero() -> None:
    salt = "kafkakit-dc2-kafka1-kafka_broker"
    password = next(
        p for p in (f"pw{i}" for i in itertools.count()) if hashlib.sha256(f"{salt}:{p}".encode()).hexdigest()[0] == "0"
    )
    assert rendered_hash(salt, password) == agent_hash(salt, password)
    assert rendered_hash(salt, "no-zero-needed") == agent_hash(salt, "no-zero-needed")
