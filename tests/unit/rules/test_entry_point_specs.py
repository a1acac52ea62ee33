"""Argument specs for every entry point (issue 45): each task file of a role that something outside
the role includes (include_role/import_role with tasks_from, in a playbook or another role) and
each one the roll (roles/roll) includes on the services it rolls has its entry in the role's
meta/argument_specs.yml. A spec names only variables its task files read (a stale option fails),
and every variable a caller passes that the entry point reads; an option is required only when
every caller passes it or the inventory always sets it; and the values the kit itself sets (role
defaults, the inventories, the lab's host facts, the callers' literals) are of the spec's types.

Entry points are named here without the file extension, as the specs are. Ansible looks a spec up
by tasks_from verbatim (ansible/ansible#75456): it validates `tasks_from: jmx-agent` against the
spec `jmx-agent`, and a call `tasks_from: reassign.yml` against none; so every call names its
entry point without the extension, and the specs are checked when the kit runs."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from kafkakit.rules.inventory import INVENTORY_VARIABLES
from tests.unit.support.ansible_run import run_playbook
from tests.unit.support.task_files import ROOT, Task, all_tasks, load

ROLES = ROOT / "roles"
INCLUDE_ROLE = ("ansible.builtin.include_role", "ansible.builtin.import_role", "include_role", "import_role")
INCLUDE_TASKS = ("ansible.builtin.include_tasks", "ansible.builtin.import_tasks", "include_tasks", "import_tasks")
# The roll includes `{{ roll_services[roll_service].role }}`'s roll-plan.yml (the services whose
# `plan` is true) and wait-ready.yml (every service).
ROLL_ROLE = "{{ roll_services[roll_service].role }}"
# Set on every inventory host by the provisioner (lab-up.yml, the Pulumi inventory).
HOST_FACTS = {"dc", "private_ip", "private_dns", "kafka_rack", "broker_id", "controller_id", "zookeeper_id"}
# What the preflight makes the inventory set (kafkakit.rules.inventory).
INVENTORY = {v.name for v in INVENTORY_VARIABLES}
# ansible/lab/lab-config.yml's host keys, as the inventory names them (lab-up.yml).
LAB_FACTS = {
    "dc": "dc",
    "rack": "kafka_rack",
    "ip": "private_ip",
    "broker_id": "broker_id",
    "controller_id": "controller_id",
    "zookeeper_id": "zookeeper_id",
}
WORD = re.compile(r"[A-Za-z_]\w*")
TEMPLATE = re.compile(r"([\w.-]*)\.j2\b")


@cache
def specs(role: str) -> dict[str, Any]:
    return (load(ROLES / role / "meta" / "argument_specs.yml") or {}).get("argument_specs") or {}


def options(role: str, entry: str) -> dict[str, dict]:
    return {name: opt or {} for name, opt in ((specs(role).get(entry) or {}).get("options") or {}).items()}


def tasks_file(role: str, entry: str) -> Path:
    return ROLES / role / "tasks" / f"{entry}.yml"


def entry_name(tasks_from: str) -> str:
    return str(tasks_from).removesuffix(".yml").removesuffix(".yaml")


def role_of(path: Path) -> str | None:
    """The role a tasks or handlers file belongs to; None for a playbook."""
    parts = path.relative_to(ROOT).parts
    return parts[1] if parts[0] == "roles" else None


# --- the calls ---------------------------------------------------------------------------------


@dataclass
class Call:
    where: str  # the calling file
    role: str
    entry: str
    passed: dict[str, Any]  # the include's vars
    scope: set[str] = field(default_factory=set)  # loop variables the included tasks see


def included_by(tasks: list[Task], role: str, name: str) -> list[Task]:
    """The tasks of `role` that include its tasks file `name` (include_tasks/import_tasks)."""
    return [
        t
        for t in tasks
        if role_of(t.source) == role
        for key in INCLUDE_TASKS
        if isinstance(t.task.get(key), str) and t.task[key] == name
    ]


def loop_var(task: Task) -> set[str]:
    return {str((task.task.get("loop_control") or {}).get("loop_var", "item"))} if "loop" in task.task else set()


def roll_services() -> dict[str, dict]:
    return load(ROLES / "roll" / "defaults" / "main.yml")["roll_services"]


def calls() -> tuple[list[Call], list[str]]:
    """Every include_role/import_role with tasks_from whose caller is outside the included role,
    the roll's dynamic ones once per service they reach; and the dynamic ones this cannot follow."""
    tasks = list(all_tasks())
    found, unknown = [], []
    for task in tasks:
        for key in INCLUDE_ROLE:
            call = task.task.get(key)
            if not isinstance(call, dict) or "tasks_from" not in call:
                continue
            where = str(task.source.relative_to(ROOT))
            scope = loop_var(task)
            if role_of(task.source):
                scope |= {v for t in included_by(tasks, role_of(task.source), task.source.name) for v in loop_var(t)}
            entry = entry_name(call["tasks_from"])
            if call["name"] == ROLL_ROLE and role_of(task.source) == "roll":
                services = roll_services().values()
                names = [s["role"] for s in services if s.get("plan") or entry != "roll-plan"]
            elif "{{" in f"{call['name']}{entry}":
                unknown.append(f"{where}: {call['name']} {entry}")
                continue
            else:
                names = [str(call["name"])]
            passed = dict(task.task.get("vars") or {})
            found += [Call(where, name, entry, passed, scope) for name in names if name != role_of(task.source)]
    return found, unknown


CALLS, UNKNOWN_CALLS = calls()


def callers(role: str, entry: str) -> list[Call]:
    return [c for c in CALLS if (c.role, c.entry) == (role, entry)]


ENTRY_POINTS = sorted({(c.role, c.entry) for c in CALLS})
SPECIFIED = sorted((r.name, e) for r in ROLES.iterdir() if (r / "meta").is_dir() for e in specs(r.name) if e != "main")


def test_the_calls_include_those_of_the_playbooks_roles_and_roll():
    assert UNKNOWN_CALLS == [], "dynamic includes this test does not follow (teach calls() about them)"
    callers_seen = {c.where for c in CALLS}
    assert {
        "ansible/verify.yml",
        "ansible/ops/rotate-certificates.yml",
        "roles/kafka_broker/tasks/certificates.yml",
    } <= callers_seen
    assert ("zookeeper", "roll-plan") in ENTRY_POINTS and ("mirrormaker2", "roll-plan") not in ENTRY_POINTS
    assert ("mirrormaker2", "wait-ready") in ENTRY_POINTS
    roll_waits = [c for c in CALLS if c.entry == "wait-ready" and c.where == "roles/roll/tasks/wait-one.yml"]
    assert {c.role for c in roll_waits} == {s["role"] for s in roll_services().values()}
    assert all(c.scope == {"roll_host"} for c in roll_waits)


def raw_calls() -> list[str]:
    """Every tasks_from of an include_role/import_role, as written, with where it is."""
    return [
        f"{t.source.relative_to(ROOT)}: {t.task[key]['tasks_from']}"
        for t in all_tasks()
        for key in INCLUDE_ROLE
        if isinstance(t.task.get(key), dict) and "tasks_from" in t.task[key]
    ]


def test_every_call_names_its_entry_point_so_that_ansible_checks_its_spec():
    written = raw_calls()
    assert len(written) > 50
    with_extension = [c for c in written if c.endswith((".yml", ".yaml"))]
    assert with_extension == [], "a tasks_from with the extension bypasses the argument spec"


def test_every_entry_point_called_from_outside_its_role_has_a_spec():
    missing = [
        f"{role}: {entry} (called from {', '.join(sorted({c.where for c in callers(role, entry)}))})"
        for role, entry in ENTRY_POINTS
        if entry not in specs(role)
    ]
    assert missing == [], "entry points without an argument spec:\n" + "\n".join(missing)


def test_every_spec_is_of_an_entry_point_something_calls():
    # A spec of a file nothing includes from outside (restart.yml, imported within its role) is
    # never checked against what its callers pass.
    assert [f"{role}: {entry}" for role, entry in SPECIFIED if (role, entry) not in ENTRY_POINTS] == []
    assert [f"{role}: {entry}" for role, entry in SPECIFIED if not tasks_file(role, entry).exists()] == []


# --- what an entry point reads -----------------------------------------------------------------


def strings(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield str(key)
            yield from strings(value)
    elif isinstance(node, list):
        for item in node:
            yield from strings(item)
    elif node is not None:
        yield str(node)


def entry_files(role: str, entry: str) -> list[Path]:
    """The entry point's tasks file, the role's tasks files it includes (and those include), and
    the templates they render (the role's own, or kafka_common's shared ones)."""
    tasks_dir = ROLES / role / "tasks"
    template_dirs = [ROLES / role / "templates", ROLES / "kafka_common" / "templates"]
    seen: list[Path] = []
    todo = [tasks_file(role, entry)]
    while todo:
        path = todo.pop()
        if path in seen or not path.is_file():
            continue
        seen.append(path)
        if path.suffix == ".j2":
            continue
        data = load(path)
        text = "\n".join(strings(data))
        for node in nodes(data):
            for key in INCLUDE_TASKS:
                target = node.get(key)
                target = target.get("file") if isinstance(target, dict) else target
                if isinstance(target, str) and "{{" in target:
                    # A file named by a variable: any of the role's files with that ending.
                    todo += sorted(tasks_dir.glob("*" + target.split("}}")[-1]))
                elif isinstance(target, str):
                    todo.append(tasks_dir / target)
        for fragment in TEMPLATE.findall(text):
            todo += [p for d in template_dirs if fragment for p in sorted(d.glob(f"*{fragment}.j2"))]
    return seen


def nodes(data: Any) -> Iterator[dict]:
    if isinstance(data, list):
        for item in data:
            yield from nodes(item)
    elif isinstance(data, dict):
        yield data
        for value in data.values():
            yield from nodes(value)


@cache
def referenced(role: str, entry: str) -> frozenset[str]:
    """Every name the entry point's files use (comments left out), and those the role's own
    vars/main.yml and defaults/main.yml values it uses use in turn."""
    words: set[str] = set()
    for path in entry_files(role, entry):
        text = path.read_text() if path.suffix == ".j2" else "\n".join(strings(load(path)))
        words |= set(WORD.findall(text))
    worked_out = {**(load(ROLES / role / "defaults" / "main.yml") or {})}
    worked_out.update(load(ROLES / role / "vars" / "main.yml") or {})
    todo = [w for w in words if w in worked_out]
    while todo:
        for word in WORD.findall(" ".join(strings(worked_out[todo.pop()]))):
            if word not in words:
                words.add(word)
                if word in worked_out:
                    todo.append(word)
    return frozenset(words)


def test_the_reference_finder_follows_includes_templates_and_worked_out_values():
    files = {str(p.relative_to(ROLES)) for p in entry_files("kafka_broker", "renew")}
    assert {"kafka_broker/tasks/certificates.yml", "kafka_broker/tasks/restart.yml"} <= files
    # trust-read.yml reads kafka_connect_truststore_file.dest (vars/main.yml), in kafka_connect_tls_dir,
    # below kafka_connect_conf_dir (defaults/main.yml).
    assert "kafka_connect_conf_dir" in referenced("kafka_connect", "trust-read")
    assert "kafka_connect_plugins" not in referenced("kafka_connect", "trust-read")
    assert "tools-log4j" in " ".join(str(p) for p in entry_files("kafka_controller", "main"))


@pytest.mark.parametrize(("role", "entry"), SPECIFIED, ids=[f"{r}:{e}" for r, e in SPECIFIED])
def test_each_option_is_a_variable_the_entry_point_reads(role, entry):
    stale = sorted(set(options(role, entry)) - referenced(role, entry))
    assert stale == [], f"{role} {entry}: options its task files never read"


@pytest.mark.parametrize(("role", "entry"), ENTRY_POINTS, ids=[f"{r}:{e}" for r, e in ENTRY_POINTS])
def test_each_variable_a_caller_passes_and_the_entry_point_reads_is_an_option(role, entry):
    reads = referenced(role, entry)
    passed = {(c.where, name) for c in callers(role, entry) for name in {*c.passed, *c.scope} if name in reads}
    assert sorted(f"{where}: {name}" for where, name in passed if name not in options(role, entry)) == []


@pytest.mark.parametrize(("role", "entry"), SPECIFIED, ids=[f"{r}:{e}" for r, e in SPECIFIED])
def test_an_option_is_required_only_when_it_is_always_there(role, entry):
    """Ansible refuses the include when a required option is undefined: each must be passed by
    every caller, be a host fact, the role's own default, or a variable the preflight requires."""
    defaults = load(ROLES / role / "defaults" / "main.yml") or {}
    loose = [
        name
        for name, opt in options(role, entry).items()
        if opt.get("required")
        and not all(name in c.passed for c in callers(role, entry))
        and name not in HOST_FACTS | INVENTORY | set(defaults)
    ]
    assert loose == []


# --- the values' types -------------------------------------------------------------------------


def set_values() -> list[tuple[str, str, Any]]:
    """(where, variable, value) of every value the kit sets without a template: the roles'
    defaults, the inventories' group_vars, the lab's host facts."""
    out = []
    files = sorted(ROLES.glob("*/defaults/main.yml")) + sorted((ROOT / "inventories").glob("*/group_vars/*.yml"))
    for path in files:
        out += [(str(path.relative_to(ROOT)), k, v) for k, v in (load(path) or {}).items()]
    lab = load(ROOT / "ansible" / "lab" / "lab-config.yml")
    for host in lab["lab_hosts"] + lab["lab_spare_hosts"] + lab["lab_dc3_hosts"]:
        out += [(f"lab host {host['name']}", LAB_FACTS[k], v) for k, v in host.items() if k in LAB_FACTS]
    return [(where, name, value) for where, name, value in out if "{{" not in yaml.safe_dump(value)]


SET_VALUES = set_values()


def type_errors(spec: dict, name: str, value: Any) -> list[str]:
    checked = {k: v for k, v in spec.items() if k not in ("description", "required", "default", "no_log")}
    result = ArgumentSpecValidator({name: checked}).validate({name: value}, validate_role_argument_spec=True)
    return result.error_messages


def test_the_type_check_refuses_a_wrong_value():
    assert type_errors({"type": "int"}, "x", "sixty")
    assert type_errors({"type": "list", "elements": "int"}, "x", ["a"])
    assert type_errors({"type": "str", "choices": ["fill", "drain"]}, "x", "empty")
    assert not type_errors({"type": "int"}, "x", 60)


@pytest.mark.parametrize(("role", "entry"), SPECIFIED, ids=[f"{r}:{e}" for r, e in SPECIFIED])
def test_the_values_the_kit_sets_and_passes_are_of_the_options_types(role, entry):
    opts = options(role, entry)
    values = [(w, n, v) for w, n, v in SET_VALUES if n in opts]
    values += [
        (c.where, name, value)
        for c in callers(role, entry)
        for name, value in c.passed.items()
        if name in opts and "{{" not in yaml.safe_dump(value)
    ]
    wrong = [f"{w}: {name}={value!r}: {e}" for w, name, value in values for e in type_errors(opts[name], name, value)]
    assert wrong == []


KEYSTORE_CALL = """
- hosts: all
  gather_facts: false
  tasks:
    - ansible.builtin.include_role:
        name: kafka_pki
        tasks_from: keystore
      vars: {keystore_vars}
"""


def _keystore_play(tmp_path: Path, keystore_vars: dict[str, Any]) -> str:
    inventory = tmp_path / "hosts.yml"
    inventory.write_text(yaml.safe_dump({"all": {"hosts": {"h1": {"dc": "dc1"}}}}))
    play = tmp_path / "play.yml"
    play.write_text(KEYSTORE_CALL.format(keystore_vars=json.dumps(keystore_vars)))
    out = run_playbook(inventory, play, tmp_path=tmp_path, local=True)
    return out.stdout + out.stderr


def test_ansible_checks_an_entry_points_spec_when_the_kit_runs(tmp_path: Path):
    """The calls' names reach the specs (the test above); here Ansible applies one: the keystore
    entry point refuses a missing required option and a value of the wrong type before its task
    runs, and lets a complete call through to the task (the control)."""
    complete = {
        "kafka_pki_keystore_path": str(tmp_path / "keystore.p12"),
        "kafka_pki_keystore_password": "not-a-secret",
        "kafka_pki_keystore_owner": "root",
        "kafka_pki_keystore_group": "root",
        "kafka_pki_dir": str(tmp_path / "no-pki"),
        "kafka_pki_intermediates": [],
    }
    missing = _keystore_play(tmp_path, {k: v for k, v in complete.items() if k != "kafka_pki_keystore_path"})
    assert "missing required arguments: kafka_pki_keystore_path" in missing, missing[-3000:]
    wrong = _keystore_play(tmp_path, {**complete, "kafka_pki_intermediates": {"not": "a list"}})
    assert "kafka_pki_intermediates" in wrong and "is of type" in wrong and "list" in wrong, wrong[-3000:]
    passed = _keystore_play(tmp_path, complete)
    assert "The arg spec validation passed" in passed or "Validating arguments" in passed, passed[-3000:]
    assert "missing required arguments" not in passed and "is of type" not in passed
    # The task itself ran (and failed on the absent host key: there is none here).
    assert "Build the keystore from the host key and certificate" in passed
    assert "not-a-secret" not in missing + wrong + passed
