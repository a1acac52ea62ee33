"""A real `ansible-playbook --check --diff` with a changed password prints neither password (issue 16).

The tasks run are the roles' own (read from their tasks files, only the owner and group dropped,
and MirrorMaker's unit file and unit check, which need systemd), so taking `diff: false` off one
of them, or moving a secret from `secret_content` to `content`, fails this test. They render the
real templates into tmp_path on localhost (connection local): first with the old password, then a
dry run with a new one. A leak control, the same MirrorMaker task with its secrets in `content`,
shows that this run would print a password if a task let it through. The client quotas task logs
in with the admin's password too: its dry run shows a quota changed by hand, and no password (Kafka's
ConfigCommand is tests/unit/support/config_command.py there).
"""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
import uuid
from pathlib import Path

import yaml

from tests.unit.support.ansible_run import REPO, run_playbook

MM2_TASK = ("mirrormaker2", "main.yml", "Write the MirrorMaker configuration and unit")
CLIENT_TASK = (
    "kafka_resources",
    "main.yml",
    "Write the admin's and the users' client configs of {{ dc }}",
)
QUOTA_TASK = ("kafka_resources", "quotas.yml", "Apply the client quotas of {{ dc }}")
FAKE_TOOL = REPO / "tests/unit/support/config_command.py"
LEAK_CONTROL = "Leak control, MirrorMaker configuration with a diff"


def role_task(role: str, tasks_file: str, name: str) -> dict:
    """The named task of a role (blocks searched too), made runnable here: template src absolute,
    no owner or group (the service accounts do not exist on this machine)."""

    def find(tasks: list) -> dict | None:
        for task in tasks:
            if task.get("name") == name:
                return task
            for key in ("block", "rescue", "always"):
                if key in task and (found := find(task[key])):
                    return found
        return None

    task = find(yaml.safe_load((REPO / "roles" / role / "tasks" / tasks_file).read_text()))
    assert task is not None, f"{role}/tasks/{tasks_file} has no task {name!r}"
    task = copy.deepcopy(task)
    templates = f"{REPO}/roles/{role}/templates/"
    if "kafka_quotas" in task:  # Kafka's tool: the stand-in's launcher, written by the test
        task["kafka_quotas"]["launcher"] = "{{ quota_launcher }}"
        return task
    if "kafkakit_files" in task:
        args = task["kafkakit_files"]
        args.pop("unit", None)
        args.pop("watch", None)
        if isinstance(args["files"], str):  # one expression that renders the whole list (kafka_resources)
            args["files"] = args["files"].replace(
                "lookup('ansible.builtin.template', ", f"lookup('ansible.builtin.template', '{templates}' ~ "
            )
            # Its play's first broker, on the controller: here the one host, localhost.
            task.pop("when", None)
            task.pop("delegate_to", None)
            return task
        # The unit, the service's directories, and the entries a role variable gives whole (the
        # truststore: a copy on the host).
        args.pop("directories", None)
        args["files"] = [
            item for item in args["files"] if isinstance(item, dict) and not item["dest"].startswith("/etc/systemd/")
        ]
        for item in args["files"]:
            item.pop("owner", None)
            item.pop("group", None)
            for key in ("content", "secret_content"):
                if key in item:
                    item[key] = item[key].replace(
                        "lookup('ansible.builtin.template', ", f"lookup('ansible.builtin.template', '{templates}' ~ "
                    )
        return task
    args = task["ansible.builtin.template"]
    args["src"] = templates + args["src"]
    args.pop("owner", None)
    args.pop("group", None)
    return task


def playbook(tmp_path: Path) -> list[dict]:
    mm2 = role_task(*MM2_TASK)
    mm2["vars"] = {**mm2.get("vars", {}), "mirrormaker_conf_dir": str(tmp_path / "mm2")}
    leak = copy.deepcopy(mm2)
    leak["name"] = LEAK_CONTROL
    for item in leak["kafkakit_files"]["files"]:
        if "secret_content" in item:
            item["content"] = item.pop("secret_content")
    leak["vars"] = {**mm2["vars"], "mirrormaker_conf_dir": str(tmp_path / "control")}
    client = role_task(*CLIENT_TASK)
    client["vars"] = {**client.get("vars", {}), "kafka_client_config_dir": str(tmp_path / "clients")}
    quotas = role_task(*QUOTA_TASK)
    # The kit's service users come from groups this inventory lacks.
    quotas["vars"] = {"quota_launcher": str(tmp_path / "kafkakit-run"), "kafka_service_users": []}
    return [
        {
            "name": "Render secret-bearing templates of the roles",
            "hosts": "localhost",
            "gather_facts": False,
            # The roles' defaults, then this host's (vars_files outrank play vars).
            "vars_files": [
                str(REPO / "roles/kafka_common/defaults/main.yml"),
                str(REPO / "roles/mirrormaker2/defaults/main.yml"),
                str(REPO / "roles/kafka_resources/defaults/main.yml"),
                str(tmp_path / "host.yml"),
            ],
            "tasks": [mm2, leak, client, quotas],
        }
    ]


HOST_VARS = {
    "dc": "dc2",
    "mirrormaker_flows": [{"source": "dc1", "target": "dc2", "topics": [{"name": "orders"}]}],
    "mirrormaker_bootstrap": {"dc1": "10.99.0.11:9093", "dc2": "10.99.0.21:9093"},
    "mirrormaker_internal_rest": False,
    "kafka_bootstrap_servers": "10.99.0.21:9093",
    "kafka_ca_cert": "/etc/kafkakit/ca.crt",
    # A user's client configs hold its password: it changes with the others here.
    "kafka_users": [
        {"name": "reader", "password": "{{ kafka_admin_password }}", "quotas": {"consumer_byte_rate": 1048576}}
    ],
}


def run(tmp_path: Path, passwords: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return run_playbook(
        tmp_path / "hosts.ini",
        "-e",
        f"kafka_mirrormaker_password={passwords} kafka_admin_password={passwords}",
        *extra,
        tmp_path / "play.yml",
        tmp_path=tmp_path,
        local=True,
        timeout=180,
    )


def sections(stdout: str) -> dict[str, str]:
    """Each task's output, by task name."""
    parts = re.split(r"^TASK \[(.*?)\] \**$", stdout, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def test_a_dry_run_with_a_changed_password_prints_neither_password(tmp_path: Path) -> None:
    old, new = f"Old{uuid.uuid4().hex}", f"New{uuid.uuid4().hex}"
    for folder in ("mm2", "control", "clients/dc2"):
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / "play.yml").write_text(yaml.safe_dump(playbook(tmp_path), sort_keys=False))
    (tmp_path / "hosts.ini").write_text("localhost\n")
    (tmp_path / "host.yml").write_text(yaml.safe_dump(HOST_VARS))
    cluster = tmp_path / "quotas.json"
    cluster.write_text(json.dumps({"entities": {}}))
    (tmp_path / "kafkakit-run").write_text(f'#!/bin/sh\nexec {sys.executable} {FAKE_TOOL} {cluster} "$@"\n')
    (tmp_path / "kafkakit-run").chmod(0o755)

    first = run(tmp_path, old)
    assert first.returncode == 0, first.stdout + first.stderr
    # The first run set the reader's quota; someone changes it by hand: the dry run shows it.
    state = json.loads(cluster.read_text())
    assert state["entities"] == {"reader": {"consumer_byte_rate": 1048576.0}}
    state["entities"]["reader"]["consumer_byte_rate"] = 999.0
    cluster.write_text(json.dumps(state))
    written = [
        tmp_path / "mm2/mm2.properties",
        tmp_path / "clients/dc2/client.properties",
        tmp_path / "clients/dc2/client.conf",
        tmp_path / "clients/dc2/users/reader.properties",
        tmp_path / "clients/dc2/users/reader.conf",
    ]
    assert all(old in p.read_text() for p in written)

    dry = run(tmp_path, new, "--check", "--diff")
    assert dry.returncode == 0, dry.stdout + dry.stderr
    tasks = sections(dry.stdout)
    guarded = [MM2_TASK[2], CLIENT_TASK[2].replace("{{ dc }}", "dc2"), QUOTA_TASK[2].replace("{{ dc }}", "dc2")]
    assert set(guarded) | {LEAK_CONTROL} <= set(tasks), list(tasks)
    for name in guarded:
        # Positive control: the change is still reported, only its content is not shown.
        assert "changed: [localhost]" in tasks[name], tasks[name]
        assert old not in tasks[name] and new not in tasks[name], tasks[name]
    # The same run does print a password where a task has no diff: false.
    assert old in tasks[LEAK_CONTROL] and new in tasks[LEAK_CONTROL], tasks[LEAK_CONTROL]
    outside = dry.stdout.replace(tasks[LEAK_CONTROL], "") + dry.stderr
    assert old not in outside and new not in outside
    # A dry run: the files still hold the old password.
    assert all(old in p.read_text() and new not in p.read_text() for p in written)
    # The quotas' dry run: the difference shown, only the describe run (with the new login, on stdin).
    quota_shown = tasks[guarded[2]]
    assert (
        "-User:reader consumer_byte_rate=999" in quota_shown
        and "+User:reader consumer_byte_rate=1048576" in quota_shown
    )
    calls = json.loads(cluster.read_text())["calls"]
    assert [c["args"][5] for c in calls[-1:]] == ["--describe"] and new in calls[-1]["config"]
    assert json.loads(cluster.read_text())["entities"] == {"reader": {"consumer_byte_rate": 999.0}}
