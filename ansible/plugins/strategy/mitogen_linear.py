"""Ansible's linear strategy over Mitogen (the `mitogen` package in requirements.txt).

Mitogen keeps one Python interpreter per host for the whole run instead of starting one, and
copying the module, for every task (a no-op site.yml on the lab: 124 s instead of 185 s, README).
The linear semantics are unchanged. Opt-in (ANSIBLE_STRATEGY=mitogen_linear), not the default:
a cold site.yml over it took 17 min instead of 7 (package installs and archive copies are slower).
"""

from __future__ import annotations

from ansible_mitogen import loaders, strategy

DOCUMENTATION = """
name: mitogen_linear
short_description: the linear strategy, its connections run through Mitogen
description: Task by task across all hosts, as ansible.builtin.linear, over Mitogen's connections.
"""


class StrategyModule(strategy.StrategyMixin, loaders.strategy_loader.get("linear", class_only=True)):  # type: ignore[misc]
    pass
