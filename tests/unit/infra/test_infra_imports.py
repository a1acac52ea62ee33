"""The infra modules import each other without a circle.

Every import counts: at module level, inside functions and under `if TYPE_CHECKING:`. A circle
hidden in a function or behind TYPE_CHECKING still ties the modules together, and each such
import is a place where a later change turns it into an ImportError at load time.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path

from stack_harness import ROOT

PACKAGE = "infra"


def module_files(root: Path = ROOT) -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package (a package by its __init__)."""
    found = {}
    for path in sorted((root / PACKAGE).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def imported_names(module: str, path: Path) -> Iterator[str]:
    """Every module name an import statement anywhere in the file names, relative ones resolved;
    `from a import b` yields both `a` and `a.b` (b may be a submodule)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            yield base
            yield from (f"{base}.{alias.name}" for alias in node.names)


def import_graph(files: Mapping[str, Path]) -> dict[str, set[str]]:
    """module -> the package's modules it imports (itself left out)."""
    return {
        module: {name for name in imported_names(module, path) if name in files and name != module}
        for module, path in files.items()
    }


def find_cycle(graph: Mapping[str, set[str]]) -> list[str] | None:
    """One circle of imports as [a, b, ..., a], or None."""
    done: set[str] = set()
    trail: list[str] = []

    def visit(module: str) -> list[str] | None:
        if module in trail:
            return [*trail[trail.index(module) :], module]
        if module in done:
            return None
        trail.append(module)
        for target in sorted(graph.get(module, ())):
            cycle = visit(target)
            if cycle:
                return cycle
        trail.pop()
        done.add(module)
        return None

    for module in sorted(graph):
        cycle = visit(module)
        if cycle:
            return cycle
    return None


def test_the_cycle_finder_sees_circles_through_any_import(tmp_path: Path) -> None:
    pkg = tmp_path / PACKAGE
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from infra.b import x\n")
    (pkg / "b.py").write_text("def f():\n    from infra.sub import c\n")
    (pkg / "sub" / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .. import a\n")
    graph = import_graph(module_files(tmp_path))
    assert graph["infra.a"] == {"infra.b"}
    assert graph["infra.b"] == {"infra.sub", "infra.sub.c"}
    assert graph["infra.sub.c"] == {"infra", "infra.a"}
    assert find_cycle(graph) == ["infra.a", "infra.b", "infra.sub.c", "infra.a"]
    (pkg / "sub" / "c.py").write_text("import infra.b\n")
    assert find_cycle(import_graph(module_files(tmp_path))) == ["infra.b", "infra.sub.c", "infra.b"]
    (pkg / "sub" / "c.py").write_text("")
    assert find_cycle(import_graph(module_files(tmp_path))) is None


def test_infra_imports_form_no_circle() -> None:
    graph = import_graph(module_files())
    assert "infra.placement" in graph["infra.program"]  # the graph is read at all
    cycle = find_cycle(graph)
    assert cycle is None, "infra modules import each other in a circle: " + " -> ".join(cycle or [])
