"""Integration test modules share helpers through helper modules (playbooks.py, faults.py,
clients.py, lab.py, conftest.py), never by importing another test module: pytest would collect
and run that module's tests a second time under a new name, and moving a test would break others."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

INTEGRATION = Path(__file__).resolve().parents[1] / "integration"
TEST_MODULES = sorted(INTEGRATION.glob("test_*.py"))


def imported_test_modules(path: Path) -> set[str]:
    """The test_ modules a file imports, at any depth (function-level imports included), as
    dotted names; relative imports keep their leading dots."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            # from . import test_x / from tests.integration import test_x name modules too.
            names = [base] + [f"{base}{'' if base.endswith('.') else '.'}{alias.name}" for alias in node.names]
        else:
            continue
        found |= {n for n in names if n.rsplit(".", 1)[-1].startswith("test_")}
    return found


def test_modules_found() -> None:
    assert len(TEST_MODULES) > 5


@pytest.mark.parametrize("path", TEST_MODULES, ids=lambda p: p.stem)
def test_no_test_module_imports_another(path: Path) -> None:
    imported = sorted(imported_test_modules(path))
    assert imported == [], f"{path.name} imports test module(s) {imported}: move the helpers to a helper module"


def test_the_check_sees_every_import_form(tmp_path: Path) -> None:
    sample = tmp_path / "test_sample.py"
    sample.write_text(
        "import tests.integration.test_a\n"
        "from tests.integration.test_b import x\n"
        "from .test_c import y\n"
        "from . import test_d\n"
        "from tests.integration import test_e\n"
        "def f():\n"
        "    from tests.integration.test_f import z\n"
        "from tests.integration.faults import run_scenario\n"
        "from tests.integration.conftest import wait_until\n"
    )
    assert imported_test_modules(sample) == {
        "tests.integration.test_a",
        "tests.integration.test_b",
        ".test_c",
        ".test_d",
        "tests.integration.test_e",
        "tests.integration.test_f",
    }
