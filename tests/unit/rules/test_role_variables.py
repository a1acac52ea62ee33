"""One definition per value (issue 13): each role variable is defined in one role's defaults, the
argument specs agree with the defaults, and the secrets are listed once (kafkakit.rules.inventory)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from kafkakit.rules.inventory import INVENTORY_VARIABLES, SECRETS, required_variables

ROOT = Path(__file__).resolve().parents[3]


@dataclass(frozen=True)
class Role:
    name: str
    defaults: dict[str, Any]
    specs: dict[str, Any]


def load(path: Path) -> Any:
    return yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) if path.exists() else None


ROLES = [
    Role(
        p.name,
        load(p / "defaults" / "main.yml") or {},
        (load(p / "meta" / "argument_specs.yml") or {}).get("argument_specs") or {},
    )
    for p in sorted((ROOT / "roles").iterdir())
    if (p / "meta").is_dir()
]
ROLE_NAMES = [r.name for r in ROLES]


def top_level_options(role: Role) -> list[tuple[str, str, dict]]:
    """(entry point, option, spec) of every top-level option of the role's argument specs."""
    return [
        (entry, name, opt or {})
        for entry, spec in role.specs.items()
        for name, opt in ((spec or {}).get("options") or {}).items()
    ]


# --- one definition ----------------------------------------------------------------------------


def test_each_variable_is_defined_in_one_role() -> None:
    """A value several roles need lives in the role that owns it; the others read it from there
    (a meta dependency on kafka_common, the role of shared defaults)."""
    seen: dict[str, list[str]] = {}
    for role in ROLES:
        for name in role.defaults:
            seen.setdefault(name, []).append(role.name)
    assert {name: roles for name, roles in seen.items() if len(roles) > 1} == {}


def test_a_role_reads_shared_defaults_through_its_dependency_not_an_empty_include() -> None:
    """kafka_common holds the values several roles read, and nothing else: a role that needs them
    depends on it (meta/main.yml), which adds no tasks and no handlers to the play; kafka_pki, whose
    CA tasks run on localhost (no data centre), imports kafka_common's principals instead."""
    readers = {"zookeeper", "monitoring", "kafka_broker", "kafka_controller", "kafka_connect"}
    for name in readers:
        deps = yaml.safe_load((ROOT / "roles" / name / "meta" / "main.yml").read_text())["dependencies"]
        assert {"role": "kafka_common"} in deps, name
    tasks = (ROOT / "roles").glob("*/tasks/*.yml")
    empty = [str(p.relative_to(ROOT)) for p in tasks if yaml.safe_load(p.read_text()) in ([], None)]
    assert empty == ["roles/kafka_common/tasks/main.yml"]
    assert [p for p in (ROOT / "roles").rglob("tasks/*.yml") if "tasks_from: defaults" in p.read_text()] == []
    assert not (ROOT / "roles" / "kafka_common" / "handlers").exists()


# The Ansible side names these values once: in the owning role's defaults (and its own spec).
VALUE_HOMES = {
    "/etc/kafkakit/pki": {"roles/kafka_common/defaults/main.yml", "roles/kafka_common/meta/argument_specs.yml"},
    "2182": {"roles/kafka_common/defaults/main.yml", "roles/kafka_common/meta/argument_specs.yml"},
}
# promtool's test data for the alert rules: sample label values, not settings.
NOT_SETTINGS = {"roles/monitoring/files/tests/alerts_test.yml"}


@pytest.mark.parametrize("value", sorted(VALUE_HOMES))
def test_a_shared_value_is_written_only_where_it_is_defined(value: str) -> None:
    files = [p for d in ("roles", "ansible", "inventories") for p in (ROOT / d).rglob("*") if p.is_file()]
    pattern = re.compile(rf"(?<![\w/.]){re.escape(value)}(?![\w.])")
    found = {
        str(p.relative_to(ROOT))
        for p in files
        if p.suffix in {".yml", ".yaml", ".j2", ".py", ".cfg", ".sh"} and pattern.search(p.read_text(errors="replace"))
    }
    assert found - NOT_SETTINGS == VALUE_HOMES[value]


@pytest.mark.parametrize("role", ROLES, ids=ROLE_NAMES)
def test_spec_defaults_are_the_defaults_file(role: Role) -> None:
    """A spec's `default:` documents the role's own defaults/main.yml value; a variable another
    role defines is listed without one (docs/variables.md shows the owner's)."""
    owner = {name: other.name for other in ROLES for name in other.defaults}
    for entry, name, opt in top_level_options(role):
        if "default" not in opt:
            continue
        where = f"{role.name} {entry}: {name}"
        if name in role.defaults:
            assert opt["default"] == role.defaults[name], where
        else:
            assert name not in owner, f"{where} repeats the default of {owner.get(name)}; drop it from the spec"


@pytest.mark.parametrize("role", ROLES, ids=ROLE_NAMES)
def test_every_default_is_in_the_roles_spec(role: Role) -> None:
    specced = {name for _, name, _ in top_level_options(role)}
    assert sorted(set(role.defaults) - specced) == []


# --- the secrets ----------------------------------------------------------------------------


# Entry points' parameters a caller passes a secret in (not inventory variables).
PASSED_SECRETS = {"kafka_pki_keystore_password"}


def test_the_argument_specs_mark_exactly_the_listed_secrets_no_log() -> None:
    no_log = {name for role in ROLES for _, name, opt in top_level_options(role) if opt.get("no_log")}
    assert no_log == set(SECRETS) | PASSED_SECRETS


def test_a_secret_is_no_log_in_every_spec_that_names_it() -> None:
    loose = [
        f"{role.name} {entry}: {name}"
        for role in ROLES
        for entry, name, opt in top_level_options(role)
        if name in SECRETS and not opt.get("no_log")
    ]
    assert loose == []


def test_every_listed_variable_is_one_a_role_takes() -> None:
    taken = {name for role in ROLES for _, name, _ in top_level_options(role)}
    assert [v.name for v in INVENTORY_VARIABLES if v.name not in taken] == []


def test_preflight_reads_the_list_rather_than_repeating_it() -> None:
    text = (ROOT / "ansible" / "preflight.yml").read_text()
    assert "kafkakit_missing_variables" in text
    assert [name for name in SECRETS if name in text] == []


def test_the_lab_sets_every_required_variable() -> None:
    lab = yaml.safe_load((ROOT / "inventories" / "local" / "group_vars" / "all.yml").read_text())
    assert [v.name for v in INVENTORY_VARIABLES if v.required and v.name not in lab] == []


def test_required_variables_follow_the_groups() -> None:
    always = [
        "kafka_admin_password",
        "kafka_keystore_password",
        "kafka_zookeeper_password",
        "zookeeper_keystore_password",
        "kafka_pki_ca_passphrase",
        "kafka_pki_ca_dir",
    ]
    assert required_variables({"kafka_broker": ["b1"], "mirrormaker": []}) == always
    assert required_variables({"kafka_broker": ["b1"], "mirrormaker": ["m1"], "monitoring": ["p1"]}) == [
        *always,
        "kafka_mirrormaker_password",
        "kafka_monitoring_password",
        "monitoring_scrape_password",
    ]
    # spark_auth_secret is optional: an empty one is generated on the master.
    assert required_variables({"spark_master": ["s1"]}) == [*always, "kafka_spark_password"]


# --- what the callers pass -------------------------------------------------------------------


def role_calls() -> list[tuple[str, str, str, dict[str, Any]]]:
    """(where, role, entry point, vars) of every include_role/import_role in the roles and playbooks."""
    calls = []
    paths = [*(ROOT / "roles").glob("*/tasks/*.yml"), *(ROOT / "ansible").rglob("*.yml")]

    def walk(node: Any, where: str) -> None:
        if isinstance(node, list):
            for item in node:
                walk(item, where)
        elif isinstance(node, dict):
            for key in ("ansible.builtin.include_role", "ansible.builtin.import_role"):
                call = node.get(key)
                if isinstance(call, dict) and "{{" not in str(call.get("name", "{{")):
                    entry = str(call.get("tasks_from", "main")).removesuffix(".yml")
                    calls.append((where, str(call["name"]), entry, node.get("vars") or {}))
            for value in node.values():
                walk(value, where)

    for path in paths:
        walk(load(path), str(path.relative_to(ROOT)))
    return calls


def test_every_literal_a_caller_passes_is_one_of_the_entry_points_choices():
    """A role's argument spec rejects at run time a value outside its choices (a new component
    passed to monitoring's jmx-agent, say): caught here first, for every literal a caller passes."""
    specs = {r.name: r.specs for r in ROLES}
    wrong = []
    for where, role, entry, variables in role_calls():
        options = (specs.get(role, {}).get(entry) or {}).get("options") or {}
        for name, value in variables.items():
            choices = (options.get(name) or {}).get("choices")
            if choices and isinstance(value, str) and "{{" not in value and value not in choices:
                wrong.append(f"{where}: {role}/{entry} {name}={value} is none of {choices}")
    assert wrong == []
    assert any(entry == "jmx-agent" for _, _, entry, _ in role_calls()), "no call of monitoring's jmx-agent found"
