"""Spare ansible-playbook's forked workers what each would otherwise do anew.

Ansible forks a worker per host and task. A worker that meets the first filter of its task loads
every filter and test plugin file anew (the builtin ones, the kit's, and the collections' filters
it names): a no-op site.yml spent about a fifth of the controller's CPU on it. Loaded here, before
the first play, the workers inherit them from the main process. Each worker also compiled every
template and condition of its task: kafkakit.jinja_code_cache keeps the compiled code in
build/jinja-code (off with KAFKAKIT_JINJA_CODE_CACHE=off).
"""

from __future__ import annotations

import gc
import os
from pathlib import Path
from typing import Any

from ansible.plugins.loader import filter_loader, test_loader

from ansible.plugins.callback import CallbackBase
from kafkakit import jinja_code_cache

DOCUMENTATION = """
name: kafkakit_warm
type: aggregate
short_description: loads the Jinja plugins once, before Ansible forks its workers
description:
  - At the start of a playbook, loads every filter and test plugin of the configured paths and the
    collection filters the kit's roles use, so that the forked workers inherit them, and turns on
    the cache of compiled Jinja code the workers share (kafkakit.jinja_code_cache).
"""

# The clone's build/ (git ignores it): a fresh clone starts with no compiled code.
CODE_DIR = Path(__file__).resolve().parents[3] / "build" / "jinja-code"

# The collection filters the roles and playbooks use (tests/unit/test_warm_callback.py keeps this
# list whole): the loader resolves a collection's filter by name, one at a time.
COLLECTION_FILTERS = (
    "community.crypto.x509_certificate_info",
    "community.general.dict_kv",
)


def warm_jinja_plugins() -> None:
    """Load the builtin and configured filters and tests, and COLLECTION_FILTERS."""
    for loader in (filter_loader, test_loader):
        for _ in loader.all():
            pass
    for name in COLLECTION_FILTERS:
        filter_loader.get(name)


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "kafkakit_warm"
    # On for every run, whatever ANSIBLE_CALLBACKS_ENABLED names (the tests set it).
    CALLBACK_NEEDS_ENABLED = False

    def v2_playbook_on_start(self, playbook: Any) -> None:
        warm_jinja_plugins()
        if os.environ.get("KAFKAKIT_JINJA_CODE_CACHE", "on") != "off":
            jinja_code_cache.install(CODE_DIR)

    def v2_playbook_on_task_start(self, task: Any, is_conditional: bool) -> None:
        # What the main process holds now goes to the collector's permanent generation: a worker's
        # collections then leave those objects (and their memory pages, shared by fork) untouched.
        gc.freeze()
