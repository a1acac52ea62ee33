"""kafka_resources destroys nothing unasked (issue 16): topic deletion needs the topics named in
kafka_topics_allow_delete, and undeclared ACL bindings are kept unless kafka_acls_exclusive is set."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from kafkakit.guards.access import GuardError, delete_confirmation, topic_deletion_refusal
from tests.unit.support.ansible_run import REPO, run_playbook
from tests.unit.support.listener import Listener, loopback_listener
from tests.unit.support.wait import wait_until

MODULES = REPO / "ansible/plugins/modules"

OLD = {"name": "old", "partitions": 3, "state": "absent"}
KEEP = {"name": "keep", "partitions": 3}


@pytest.mark.parametrize(
    ("topics", "confirmation", "absent_anywhere", "message"),
    [
        # Nothing to delete, nothing confirmed: go ahead.
        ([KEEP], [], [], ""),
        ([KEEP], None, [], ""),
        # Named: go ahead (a list, or the comma-separated form -e gives).
        ([KEEP, OLD], ["old"], ["old"], ""),
        ([KEEP, OLD], "old", ["old"], ""),
        ([OLD, {**OLD, "name": "older"}], "old, older", ["old", "older"], ""),
        # Named for another data centre of the same run: fine here.
        ([KEEP], ["old"], ["old"], ""),
        # Not named: refused, saying how to confirm.
        ([KEEP, OLD], [], ["old"], "refusing to delete topic(s) old in dc1"),
        ([KEEP, OLD], None, ["old"], """-e '{"kafka_topics_allow_delete": ["old"]}'"""),
        ([OLD, {**OLD, "name": "older"}], ["old"], ["old", "older"], "refusing to delete topic(s) older in dc1"),
        # A name that is only a prefix or a near miss confirms nothing.
        ([{**OLD, "name": "orders"}], ["order"], ["orders"], "refusing to delete topic(s) orders"),
        # A confirmation naming a topic no data centre declares absent: a typo, refused.
        ([KEEP, OLD], ["old", "keep"], ["old"], "kafka_topics_allow_delete names keep, which no data centre"),
        ([KEEP], ["olde"], ["old"], "names olde, which no data centre"),
        # Not a list of names: refused.
        ([KEEP, OLD], True, ["old"], "must name the topics to delete"),
        ([KEEP, OLD], {"old": True}, ["old"], "must name the topics to delete"),
        ([KEEP, OLD], ["old", 3], ["old"], "must name the topics to delete"),
        ([KEEP, OLD], "old,,", ["old"], "empty topic name"),
    ],
)
def test_topic_deletion_guard(topics: list[dict], confirmation: Any, absent_anywhere: list[str], message: str) -> None:
    refusal = topic_deletion_refusal("dc1", topics, confirmation, absent_anywhere)
    if message:
        assert message in refusal
        assert "\n" not in refusal  # one line
    else:
        assert refusal == ""


def test_confirmation_forms() -> None:
    assert delete_confirmation("a,b") == ["a", "b"]
    assert delete_confirmation(["a"]) == ["a"]
    assert delete_confirmation("") == delete_confirmation([]) == delete_confirmation(None) == []
    with pytest.raises(GuardError):
        delete_confirmation(False)


MODULE_ENV = {**os.environ, "PYTHONPATH": str(REPO / "src")}


def module_command(name: str, args: dict, tmp_path: Path) -> list[str]:
    """ansible/plugins/modules/<name>.py on `args`, as Ansible runs a module from an args file."""
    path = tmp_path / f"{name}-args.json"
    path.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": args}))
    return [sys.executable, str(MODULES / f"{name}.py"), str(path)]


def run_module(name: str, args: dict, tmp_path: Path) -> dict:
    """The module run to its end; the JSON it exits with."""
    done = subprocess.run(
        module_command(name, args, tmp_path), capture_output=True, text=True, timeout=60, check=False, env=MODULE_ENV
    )
    return json.loads(done.stdout)


@pytest.fixture
def cluster() -> Iterator[Listener]:
    """The cluster the module is pointed at: a loopback listener that counts who connects to it."""
    with loopback_listener() as listener:
        yield listener


def test_kafka_topic_refuses_absent_without_allow_delete_before_contacting_the_cluster(
    tmp_path: Path, cluster: Listener
) -> None:
    args = {"bootstrap_servers": cluster.address, "name": "old", "state": "absent"}
    result = run_module("kafka_topic", args, tmp_path)
    assert result["failed"] and "refusing to delete topic old" in result["msg"], result
    # The module has exited: any connection it made is queued at the listener by now.
    assert cluster.connections() == 0, "kafka_topic contacted the cluster before refusing"


def test_kafka_topic_with_allow_delete_contacts_the_cluster(tmp_path: Path, cluster: Listener) -> None:
    """The control: the same deletion, confirmed, does reach the listener, so the count of 0 above
    means the refusal came first (not that the listener missed the module)."""
    args = {"bootstrap_servers": cluster.address, "name": "old", "state": "absent", "allow_delete": True}
    proc = subprocess.Popen(
        module_command("kafka_topic", args, tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=MODULE_ENV,
    )
    try:
        # The listener answers nothing, so the module would only give up at its own timeout.
        wait_until("kafka_topic connects or exits", lambda: cluster.connections() or proc.poll() is not None, 60)
    finally:
        proc.kill()
        output, _ = proc.communicate(timeout=10)
    assert cluster.connections() > 0, f"kafka_topic with allow_delete never connected: {output[-2000:]}"


def spec_default(module: str, option: str) -> object:
    """The default of `option` in the module's argument_spec literal."""
    tree = ast.parse((MODULES / f"{module}.py").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if isinstance(key, ast.Constant) and key.value == option and isinstance(value, ast.Dict):
                    return ast.literal_eval(value)["default"]
    raise AssertionError(f"{module} has no option {option}")


def doc_default(module: str, option: str) -> object:
    tree = ast.parse((MODULES / f"{module}.py").read_text())
    doc = next(
        ast.literal_eval(n.value)
        for n in tree.body
        if isinstance(n, ast.Assign) and any(getattr(t, "id", "") == "DOCUMENTATION" for t in n.targets)
    )
    return yaml.safe_load(doc)["options"][option]["default"]


@pytest.mark.parametrize(("module", "option"), [("kafka_acls", "exclusive"), ("kafka_topic", "allow_delete")])
def test_the_modules_destroy_nothing_by_default(module: str, option: str) -> None:
    assert spec_default(module, option) is False
    assert doc_default(module, option) is False


def test_the_role_keeps_undeclared_acls_by_default_and_the_lab_says_otherwise() -> None:
    role = REPO / "roles/kafka_resources"
    defaults = yaml.safe_load((role / "defaults/main.yml").read_text())
    specs = yaml.safe_load((role / "meta/argument_specs.yml").read_text())["argument_specs"]["main"]["options"]
    assert defaults["kafka_acls_exclusive"] is False and specs["kafka_acls_exclusive"]["default"] is False
    assert defaults["kafka_topics_allow_delete"] == [] and specs["kafka_topics_allow_delete"]["default"] == []
    # The lab owns its clusters, and tests/integration/test_acls.py expects a stray binding removed.
    lab = yaml.safe_load((REPO / "inventories/local/group_vars/all.yml").read_text())
    assert lab["kafka_acls_exclusive"] is True


def role_task(name: str) -> dict:
    tasks = yaml.safe_load((REPO / "roles/kafka_resources/tasks/main.yml").read_text())
    return next(t for t in tasks if t["name"] == name)


def run_tasks(
    tmp_path: Path, hosts: dict[str, dict], tasks: list[dict], *extra: str
) -> subprocess.CompletedProcess[str]:
    """The role's tasks in ansible-playbook, on kafka_broker hosts that are all this machine."""
    inventory = {
        "kafka_broker": {
            "hosts": hosts,
            "vars": {
                "ansible_connection": "local",
                "ansible_python_interpreter": sys.executable,
                "kafka_cluster_brokers": ["{{ inventory_hostname }}"],
            },
        }
    }
    play = [{"name": "kafka_resources tasks", "hosts": "kafka_broker", "gather_facts": False, "tasks": tasks}]
    (tmp_path / "hosts.yml").write_text(yaml.safe_dump(inventory))
    (tmp_path / "play.yml").write_text(yaml.safe_dump(play, sort_keys=False))
    return run_playbook(tmp_path / "hosts.yml", tmp_path / "play.yml", *extra, tmp_path=tmp_path)


def test_the_role_refuses_an_unconfirmed_deletion_in_one_message(tmp_path: Path) -> None:
    """The role's own guard, its first task: dc1's named deletion passes, dc2's unnamed one is
    refused with the guard's message."""
    guard = yaml.safe_load((REPO / "roles/kafka_resources/tasks/main.yml").read_text())[0]
    assert guard["name"].startswith("Refuse unconfirmed topic deletions"), "the guard must come first"
    hosts = {
        "b1": {"dc": "dc1", "kafka_topics": [KEEP, OLD]},
        "b2": {"dc": "dc2", "kafka_topics": [{**OLD, "name": "old2"}]},
    }
    done = run_tasks(tmp_path, hosts, [guard], "-e", '{"kafka_topics_allow_delete": ["old"]}')
    out = done.stdout
    assert done.returncode != 0, out
    assert "ok: [b1]" in out, out
    assert "fatal: [b2]" in out and "refusing to delete topic(s) old2 in dc2" in out, out


def test_the_role_says_how_many_undeclared_bindings_it_removes_or_keeps(tmp_path: Path) -> None:
    plan = {"undeclared": ["User:x ALLOW READ topic:a", "User:y ALLOW READ topic:b"]}
    hosts = {
        "b1": {"dc": "dc1", "kafka_acls_exclusive": True, "kafka_resources_acls": plan},
        "b2": {"dc": "dc2", "kafka_acls_exclusive": False, "kafka_resources_acls": plan},
        "b3": {"dc": "dc3", "kafka_acls_exclusive": False, "kafka_resources_acls": {"undeclared": []}},
    }
    done = run_tasks(tmp_path, hosts, [role_task("Report the undeclared ACL bindings of {{ dc }}")])
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    assert "2 undeclared ACL binding(s) in dc1: removing them (kafka_acls_exclusive)" in out, out
    assert "2 undeclared ACL binding(s) in dc2: kept (kafka_acls_exclusive is false)" in out, out
    assert "User:y ALLOW READ topic:b" in out
    assert "skipping: [b3]" in out
