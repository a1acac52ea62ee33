"""The kit's Ansible tasks as unit tests read them: every task of every role's tasks and handlers
files and of every playbook, blocks flattened, with the block and play keywords it inherits."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[3]
PLAYBOOK_DIRS = [ROOT / "ansible", ROOT / "ansible" / "ops", ROOT / "ansible" / "lab"]
PLAY_TASK_KEYS = ("pre_tasks", "tasks", "post_tasks", "handlers")
BLOCK_KEYS = ("block", "rescue", "always")


def load(path: Path) -> Any:
    return yaml.safe_load(path.read_text()) if path.exists() else None


@dataclass
class Task:
    root: Path
    source: Path  # the tasks file or playbook
    templates: Path  # where a relative template src is looked up
    task: dict
    diff: object  # the effective `diff` keyword (task, else enclosing block or play)
    vars: dict  # enclosing block and play vars, then the task's own

    @property
    def name(self) -> str:
        return f"{self.source.relative_to(self.root)}: {self.task.get('name', '?')}"


def walk(
    root: Path, tasks: Any, source: Path, templates: Path, diff: object = None, scope: dict | None = None
) -> Iterator[Task]:
    for task in tasks or []:
        if not isinstance(task, dict):
            continue
        here_diff = task.get("diff", diff)
        here_vars = {**(scope or {}), **(task.get("vars") or {})}
        if any(k in task for k in BLOCK_KEYS):
            for key in BLOCK_KEYS:
                yield from walk(root, task.get(key), source, templates, here_diff, here_vars)
        else:
            yield Task(root, source, templates, task, here_diff, here_vars)


def all_tasks(root: Path = ROOT) -> Iterator[Task]:
    for role in sorted((root / "roles").iterdir()):
        for folder in ("tasks", "handlers"):
            for path in sorted((role / folder).glob("*.yml")):
                yield from walk(root, load(path), path, role / "templates")
    for folder in PLAYBOOK_DIRS if root == ROOT else [root]:
        for path in sorted(folder.glob("*.yml")):
            doc = load(path)
            if not isinstance(doc, list):
                continue
            for play in doc:
                if isinstance(play, dict) and "hosts" in play:
                    for key in PLAY_TASK_KEYS:
                        yield from walk(
                            root, play.get(key), path, path.parent / "templates", play.get("diff"), play.get("vars")
                        )
