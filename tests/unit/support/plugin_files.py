"""The kit's Ansible plugins (ansible/plugins/...) loaded as Python modules for unit tests, and a
module's main() run in-process as Ansible would run it."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

PLUGINS = Path(__file__).resolve().parents[3] / "ansible" / "plugins"


def load(relative: str, name: str) -> ModuleType:
    """ansible/plugins/<relative> as module `name` (registered: dataclasses look their module up)."""
    spec = importlib.util.spec_from_file_location(name, PLUGINS / relative)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def run_module(module: ModuleType, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, args: dict) -> dict:
    """`module.main()` with `args` as its ANSIBLE_MODULE_ARGS; the JSON it exits with."""
    from ansible.module_utils import basic
    from ansible.module_utils.common.text.converters import to_bytes

    monkeypatch.setattr(basic, "_ANSIBLE_ARGS", to_bytes(json.dumps({"ANSIBLE_MODULE_ARGS": args})))
    monkeypatch.setattr(basic, "_ANSIBLE_PROFILE", "legacy", raising=False)
    with pytest.raises(SystemExit):
        module.main()
    return json.loads(capsys.readouterr().out)
