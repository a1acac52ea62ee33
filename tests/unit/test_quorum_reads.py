"""The roles read each kafka-metadata-quorum output with the parser made for it: `describe --status`
(the voter set with directory ids) for kafkakit_voter_directory and as quorum_health's first
argument, `describe --replication` (lag per replica) as its second. A directory id looked up in
--replication output is '' and a voter change is silently skipped (remove-controller.yml did so)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
TASK_FILES = sorted(ROOT.glob("roles/*/tasks/*.yml")) + sorted(ROOT.glob("ansible/**/*.yml"))

# (what the template reads, the describe mode its registered output must come from)
READS = (
    (re.compile(r"(\w+)\.stdout \| kafkakit_voter_directory"), "--status"),
    (re.compile(r"(\w+)\.stdout(?: \| default\(''\))? \| kafkakit_quorum_health"), "--status"),
    (re.compile(r"'' \| kafkakit_quorum_health\((\w+)\.stdout"), "--replication"),
)


def tasks(node: object) -> Iterator[dict]:
    """Every task of a task file or playbook, blocks and plays included."""
    if isinstance(node, list):
        for item in node:
            yield from tasks(item)
    elif isinstance(node, dict):
        yield node
        for key in ("block", "rescue", "always", "tasks", "pre_tasks", "post_tasks", "handlers"):
            yield from tasks(node.get(key))


def registered_commands() -> dict[str, str]:
    out: dict[str, str] = {}
    for path in TASK_FILES:
        for task in tasks(yaml.safe_load(path.read_text())):
            command = task.get("ansible.builtin.command")
            if "register" in task and command is not None:
                out[task["register"]] = " ".join(command) if isinstance(command, list) else str(command)
    return out


def test_each_quorum_output_is_read_by_its_own_parser() -> None:
    commands = registered_commands()
    reads = [
        (path.relative_to(ROOT), name, mode)
        for path in TASK_FILES
        for pattern, mode in READS
        for name in pattern.findall(path.read_text())
    ]
    # The scan finds the reads it is about (the roll plan, the gate, readiness, removal).
    assert len(reads) >= 5, reads
    wrong = [(str(path), name, mode) for path, name, mode in reads if f"describe {mode}" not in commands.get(name, "")]
    assert wrong == [], f"read with the parser of another describe mode (file, registered output, wanted): {wrong}"
