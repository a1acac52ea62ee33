"""The roles read each kafka-metadata-quorum output with the parser made for it: `describe --status`
(the voter set with directory ids) for kafkakit_voter_directory and as quorum_health's first
argument, `describe --replication` (lag per replica) as its second. A directory id looked up in
--replication output is '' and a voter change is silently skipped (remove-controller.yml did so)."""

from __future__ import annotations

import re

from tests.unit.support.task_files import ROOT, all_tasks

# (what the template reads, the describe mode its registered output must come from)
READS = (
    (re.compile(r"(\w+)\.stdout \| kafkakit_voter_directory"), "--status"),
    (re.compile(r"(\w+)\.stdout(?: \| default\(''\))? \| kafkakit_quorum_health"), "--status"),
    (re.compile(r"'' \| kafkakit_quorum_health\((\w+)\.stdout"), "--replication"),
    (re.compile(r"(\w+) \| kafkakit_controller_roll_plan"), "--replication"),
)


def registered_commands() -> dict[str, str]:
    out: dict[str, str] = {}
    for task in all_tasks():
        command = task.task.get("ansible.builtin.command")
        if "register" in task.task and command is not None:
            out[task.task["register"]] = " ".join(command) if isinstance(command, list) else str(command)
    return out


def test_each_quorum_output_is_read_by_its_own_parser() -> None:
    commands = registered_commands()
    sources = sorted({task.source for task in all_tasks()})
    reads = [
        (path.relative_to(ROOT), name, mode)
        for path in sources
        for pattern, mode in READS
        for name in pattern.findall(path.read_text())
    ]
    # The scan finds the reads it is about (the roll plan, the gate, readiness, removal).
    assert len(reads) >= 5, reads
    wrong = [(str(path), name, mode) for path, name, mode in reads if f"describe {mode}" not in commands.get(name, "")]
    assert wrong == [], f"read with the parser of another describe mode (file, registered output, wanted): {wrong}"
