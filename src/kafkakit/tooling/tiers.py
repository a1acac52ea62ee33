"""The two tiers of proof and the map between them and the code.

`make test` runs the contract tests (tests/integration, every file outside scenarios/); `make
test-scenarios` runs the long proofs (tests/integration/scenarios), each of which is also a target
of its own (`make test-<name>`). What a test exercises is read from the files, not declared: the
playbooks its file names ("ops/scale-out.yml", "site.yml"), the kit's Python it imports, and from
each playbook onwards the roles it reaches (`roles:`, include/import_role, `role:` values such as
the roll's service table, meta dependencies), the task files it includes, the kit's modules its
tasks call, the filters its templates use and the kafkakit modules those plugins import; a module's action plugin
(ansible/plugins/action, same name) with it, and the modules that action plugin runs.

`python -m kafkakit.tooling.tiers affected --base REV` names the scenarios whose reach a change since REV
touches; `files NAME...` names a scenario's test files; `names` lists every scenario.
"""

from __future__ import annotations

import argparse
import ast
import re
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
SCENARIO_DIR = "tests/integration/scenarios"
CONTRACT_DIR = "tests/integration"
# What `make lab` runs before any test: the contract tier reaches these too.
LAB_PLAYBOOKS = ("ansible/lab/lab-up.yml", "ansible/lab/source-db.yml", "ansible/site.yml", "ansible/verify.yml")
# What no test runs, and why (tests/unit/tooling/test_tiers.py keeps each one's reason).
NOT_RUN_BY_A_TEST = {
    "ansible/lab/bench-listener.yml": "make bench turns its PLAINTEXT listener on and off",
    "ansible/plugins/modules/kafka_broker_listener.py": "bench-listener.yml's module (tests/unit/bench/)",
    "ansible/lab/lab-down.yml": "make lab-down and lab-clean remove the lab; no test may",
}


@dataclass(frozen=True)
class Scenario:
    name: str
    files: tuple[str, ...]  # under SCENARIO_DIR
    what: str
    # What the test exercises that no playbook it runs reaches (what `make lab` deployed).
    also: tuple[str, ...] = ()


SCENARIOS: tuple[Scenario, ...] = (
    Scenario("rotation", ("test_rotation.py",), "CA rotation and certificate renewal under load"),
    Scenario("upgrade", ("test_upgrade.py",), "the KRaft data centre made again on 4.3, moved to 4.4 under load"),
    Scenario("scale", ("test_scale.py",), "a broker added, partitions moved onto it, then removed, under load"),
    Scenario(
        "faults",
        ("test_faults.py", "test_quota_restart.py", "test_metadata_replay.py"),
        "the fault matrix: ZooKeeper, hosts paused and stopped, the roll; a quota across its broker's restart;"
        " a KRaft broker's metadata log lost and replayed, every login kept",
    ),
    Scenario("controllers", ("test_controllers.py",), "KRaft controllers added, removed and replaced"),
    Scenario("migration", ("test_migration.py",), "ZooKeeper to KRaft, rolled back, migrated again, upgraded"),
    Scenario(
        "dr",
        ("test_dr.py", "test_mirror_offsets.py"),
        "MirrorMaker 2 restarts, its lag check, the DR drill, a group resumed from its translated offsets",
    ),
    Scenario(
        "connect",
        ("test_connect_cdc.py", "test_connector_states.py"),
        "the Connect roll, a broker roll, a plugin version change and a worker SIGKILLed under"
        " change-data-capture load; a connector paused, stopped, deleted and declared again; a config typo"
        " refused by Connect's validation",
        also=("roles/postgresql", "spark-jobs/cdc.py"),
    ),
    Scenario("disk-full", ("test_disk_full.py",), "a broker's data disk filled, alerted on and recovered"),
    Scenario("alerts", ("test_alerts.py",), "a stalled consumer group's lag growing in Prometheus and alerted on"),
    Scenario(
        "drift",
        ("test_drift.py",),
        "an ACL binding added by hand shown by --check --diff and removed; a declared quota changed and removed",
    ),
    Scenario(
        "spark-pipeline",
        ("test_spark_pipeline.py",),
        "the streaming pipeline across a restart and a lost worker; the CDC job across a worker lost mid-batch",
        also=("roles/spark", "spark-jobs/pipeline.py", "spark-jobs/cdc.py"),
    ),
)

PLAYBOOK_REF = re.compile(r"""["']((?:ops|lab)/[\w.-]+\.ya?ml|(?:site|verify|preflight|spark|monitoring)\.ya?ml)["']""")
ROLE_REF = re.compile(
    r"""(?:\brole|\bname)\s*:\s*["']?([a-z0-9_]+)["']?\s*(?:[,}#]|$)|^\s*-\s+([a-z0-9_]+)\s*$""", re.M
)
TASK_KEY = re.compile(r"^\s*(?:-\s+)?([a-z0-9_]+):", re.M)
INCLUDED_FILE = re.compile(
    r"""(?:import_playbook|include_tasks|import_tasks|file)\s*:\s*["']?([\w./-]+\.ya?ml)"""
    r"""|^\s*-\s+([\w./-]+\.ya?ml)\s*$""",
    re.M,
)
TASKS_FROM = re.compile(r"""\btasks_from\s*:\s*["']?([\w.-]+)["']?\s*$""", re.M)
# The tests' helpers that run a playbook (tests/integration/playbooks.py).
HELPER_RUNS = {"run_site(": "site.yml", "lab_up(": "lab/lab-up.yml"}
FILTER_NAME = re.compile(r"""["'](\w+)["']\s*:""")


def scenario(name: str) -> Scenario:
    found = next((s for s in SCENARIOS if s.name == name), None)
    if found is None:
        raise KeyError(f"no scenario {name!r}; the scenarios are: {', '.join(s.name for s in SCENARIOS)}")
    return found


def scenario_files(name: str, root: Path = ROOT) -> list[str]:
    return [f"{SCENARIO_DIR}/{f}" for f in scenario(name).files]


def contract_files(root: Path = ROOT) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in (root / CONTRACT_DIR).glob("test_*.py"))


class Reach:
    """What a set of test files and playbooks reaches in the tree at `root`."""

    def __init__(self, root: Path = ROOT) -> None:
        self.root = root
        self.roles = {p.name for p in (root / "roles").iterdir() if p.is_dir()} if (root / "roles").is_dir() else set()
        plugins = root / "ansible/plugins"
        self.modules = {p.stem: p for p in (plugins / "modules").glob("*.py")}
        self.actions = {p.stem: p for p in (plugins / "action").glob("*.py")}
        self.filters: dict[str, Path] = {}
        for path in sorted((plugins / "filter").glob("*.py")):
            body = path.read_text()
            if "def filters" in body:
                for name in FILTER_NAME.findall(body.split("def filters", 1)[1]):
                    self.filters[name] = path
        self.filter_use = (
            re.compile(r"\b(" + "|".join(map(re.escape, sorted(self.filters))) + r")\b") if self.filters else None
        )
        # A role reached by name: all but its task files, and tasks/main.yml; its other task files
        # are reached where something includes them (include_tasks, or tasks_from with the role).
        self.role_files = {
            name: sorted(
                p
                for p in (root / "roles" / name).rglob("*")
                if p.is_file() and (p.parent.name != "tasks" or p.name == "main.yml")
            )
            for name in sorted(self.roles)
        }
        self.role_refs = {name: self.refs_in_role(name) for name in sorted(self.roles)}
        self.edges: dict[Path, list[Path]] = {}

    def rel(self, path: Path) -> str:
        return str(path.relative_to(self.root))

    def of(self, files: Iterable[str]) -> set[str]:
        """Every file (relative to root) reached from `files` (test files or playbooks)."""
        seen: set[str] = set()
        todo = [self.root / f for f in files]
        while todo:
            path = todo.pop()
            if not path.is_file() or self.rel(path) in seen:
                continue
            seen.add(self.rel(path))
            if path not in self.edges:
                self.edges[path] = self.next_of(path)
            todo.extend(self.edges[path])
        return seen

    def next_of(self, path: Path) -> list[Path]:
        text = path.read_text(errors="replace")
        found: list[Path] = []
        if path.suffix == ".py":
            found += self.python_imports(path, text)
            # A task calls a module by name; where an action plugin of that name exists, it runs
            # instead, and runs the modules it names (a string constant such as "kafkakit_tool").
            if path.parent.name == "modules" and path.stem in self.actions:
                found.append(self.actions[path.stem])
            if path.parent.name == "action" and path in self.actions.values():
                found += [self.modules[name] for name in self.string_constants(text) if name in self.modules]
            # A test file's own runs; a helper's strings count where a test calls it.
            if path.name.startswith("test_"):
                found += [self.root / "ansible" / p for p in PLAYBOOK_REF.findall(text)]
                found += [self.root / "ansible" / p for call, p in HELPER_RUNS.items() if call in text]
            return found
        # YAML or a template.
        for match in INCLUDED_FILE.finditer(text):
            included = match.group(1) or match.group(2)
            candidate = (path.parent / included).resolve()
            if candidate.is_file() and candidate.is_relative_to(self.root):
                found.append(candidate)
        refs = self.refs_in(text)
        for name in refs:
            found += self.role_files[name]
        # tasks_from names a task file of a role the same file names, or (for a role's own files, such
        # as the roll's table of services in its defaults) any role that role names.
        role = self.role_of(path)
        scope = refs | (self.role_refs[role] if role else set())
        for task_file in TASKS_FROM.findall(text):
            for name in scope:
                candidate = (
                    self.root
                    / "roles"
                    / name
                    / "tasks"
                    / (task_file if task_file.endswith(".yml") else f"{task_file}.yml")
                )
                if candidate.is_file():
                    found.append(candidate)
        found += [self.modules[key] for key in TASK_KEY.findall(text) if key in self.modules]
        if self.filter_use is not None:
            found += [self.filters[name] for name in set(self.filter_use.findall(text))]
        return found

    def refs_in(self, text: str) -> set[str]:
        return {m.group(1) or m.group(2) for m in ROLE_REF.finditer(text)} & self.roles

    def refs_in_role(self, name: str) -> set[str]:
        files = (p for p in (self.root / "roles" / name).rglob("*.yml") if p.is_file())
        return set().union(*(self.refs_in(p.read_text(errors="replace")) for p in files)) | {name}

    def role_of(self, path: Path) -> str | None:
        parts = path.relative_to(self.root).parts
        return parts[1] if len(parts) > 2 and parts[0] == "roles" and parts[1] in self.roles else None

    @staticmethod
    def string_constants(text: str) -> set[str]:
        try:
            tree = ast.parse(text)
        except SyntaxError:
            return set()
        return {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}

    def python_imports(self, path: Path, text: str) -> list[Path]:
        try:
            tree = ast.parse(text)
        except SyntaxError:
            return []
        names: list[str] = []
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names += [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names += [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        found = []
        for name in names:
            parts = name.split(".")
            if parts[0] == "kafkakit":
                base = self.root / "src" / Path(*parts)
            elif parts[0] == "tests":
                base = self.root / Path(*parts)
            elif parts[:2] == ["ansible", "module_utils"] and len(parts) > 2:
                base = self.root / "ansible/plugins/module_utils" / Path(*parts[2:])
            else:
                continue
            for candidate in (base.with_suffix(".py"), base / "__init__.py"):
                if candidate.is_file():
                    found.append(candidate)
        return found


@cache
def _reach(root: Path) -> Reach:
    return Reach(root)


def contract_reach(root: Path = ROOT) -> set[str]:
    return _reach(root).of([*contract_files(root), *LAB_PLAYBOOKS])


def scenario_reach(name: str, root: Path = ROOT) -> set[str]:
    reach = _reach(root)
    also: list[str] = []
    for item in scenario(name).also:
        role = item.removeprefix("roles/")
        paths = reach.role_files[role] if role in reach.roles else [root / item, *(root / item).rglob("*")]
        also += [str(p.relative_to(root)) for p in paths]
    return reach.of([*scenario_files(name, root), *also])


def covered_by_nothing(root: Path = ROOT) -> list[str]:
    """Roles, playbooks and plugins that no contract test and no scenario reaches."""
    reached = contract_reach(root).union(*(scenario_reach(s.name, root) for s in SCENARIOS))
    wanted = [f"roles/{r}" for r in sorted(_reach(root).roles)]
    wanted += sorted(str(p.relative_to(root)) for p in (root / "ansible").glob("**/*.yml"))
    wanted += sorted(str(p.relative_to(root)) for p in (root / "ansible/plugins").glob("*/*.py"))
    return [
        w for w in wanted if w not in NOT_RUN_BY_A_TEST and not any(r == w or r.startswith(f"{w}/") for r in reached)
    ]


def affected(changed: Iterable[str], root: Path = ROOT) -> list[str]:
    """The scenarios whose reach holds one of the `changed` paths, in the map's order."""
    changed = set(changed)
    return [s.name for s in SCENARIOS if changed & scenario_reach(s.name, root)]


def changed_since(base: str, root: Path = ROOT) -> list[str]:
    """Paths changed since `base`: its diff to the work tree, and files git does not track yet."""

    def git(*args: str) -> list[str]:
        out = subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout
        return [line for line in out.splitlines() if line]

    return git("diff", "--name-only", base) + git("ls-files", "--others", "--exclude-standard")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kafkakit.tooling.tiers", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("names", help="every scenario, one a line, with what it proves")
    files = sub.add_parser("files", help="the test files of the named scenarios")
    files.add_argument("names", nargs="+")
    aff = sub.add_parser("affected", help="the scenarios a change since BASE touches")
    aff.add_argument("--base", required=True)
    sub.add_parser("uncovered", help="roles, playbooks and plugins no test reaches")
    args = parser.parse_args(argv)
    try:
        if args.command == "names":
            for s in SCENARIOS:
                print(f"{s.name:16} {s.what}")
        elif args.command == "files":
            print(" ".join(f for name in args.names for f in scenario_files(name)))
        elif args.command == "affected":
            print(" ".join(affected(changed_since(args.base))))
        else:
            print("\n".join(covered_by_nothing()))
    except (KeyError, subprocess.CalledProcessError) as exc:
        print(f"kafkakit.tooling.tiers: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
