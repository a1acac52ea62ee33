"""Every kafkakit module documents itself in YAML that Ansible can parse (ansible-doc, lint)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import yaml

MODULES = sorted((Path(__file__).parents[2] / "ansible/plugins/modules").glob("*.py"))


def docstring_constant(path: Path, name: str) -> str:
    tree = ast.parse(path.read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == name for t in node.targets):
            return ast.literal_eval(node.value)
    raise AssertionError(f"{path.name} has no {name}")


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.stem)
def test_module_documentation_parses(path):
    doc = yaml.safe_load(docstring_constant(path, "DOCUMENTATION"))
    assert doc["module"] == path.stem
    assert doc["short_description"]
    assert isinstance(doc["options"], dict) and doc["options"]
