"""Ansible's linear strategy over Mitogen (the `mitogen` package in requirements.txt).

Mitogen keeps one Python interpreter per host for the whole run instead of starting one, and
copying the module, for every task (a no-op site.yml on the lab: 124 s instead of 185 s, README).
The linear semantics are unchanged. Opt-in (ANSIBLE_STRATEGY=mitogen_linear), not the default: a
cold site.yml over it took 17 min instead of 7 on 2026-11-26, and `make lab` from scratch 916 s
against 394-414 s plain on 2026-12-01 with the collection list below made once; two other cold
runs over it that day took 328 and 374 s (README).
"""

from __future__ import annotations

from typing import Any

from ansible.collections.list import list_collection_dirs
from ansible_mitogen import loaders, planner, strategy

DOCUMENTATION = """
name: mitogen_linear
short_description: the linear strategy, its connections run through Mitogen
description: Task by task across all hosts, as ansible.builtin.linear, over Mitogen's connections.
"""


# Mitogen lists every installed collection (each one's metadata read from disk) in each forked
# worker that runs a collection's module, for the paths the host needs to import it: about a tenth
# of a second of the controller's CPU each time. The list does not change during a run: made once
# here, in the main process (the strategy loads before the first worker forks), the workers
# inherit it. tests/unit/test_warm_callback.py checks the replaced function is still Mitogen's.
_COLLECTION_DIRS = tuple(path.decode("utf-8") for path in list_collection_dirs())


def _load_collections(invocation: Any) -> None:
    invocation._extra_sys_paths.update(_COLLECTION_DIRS)


planner._load_collections = _load_collections


class StrategyModule(strategy.StrategyMixin, loaders.strategy_loader.get("linear", class_only=True)):  # type: ignore[misc]
    pass
