"""docs/variables.md, generated from every role's meta/argument_specs.yml: per role and entry point,
each variable's type, default, whether it is required and what it does, secrets marked.

    python -m kafkakit.tooling.specdoc                              # print it
    python -m kafkakit.tooling.specdoc --write docs/variables.md    # make docs
    python -m kafkakit.tooling.specdoc --check [docs/variables.md]  # exit 1 when the file is stale

A default is shown as the roles' defaults/main.yml hold it (that is what Ansible uses; the spec's
`default:` is documentation, tied to it by tests/unit/rules/test_role_variables.py): the role's own, or
the one of the role that owns the variable (kafka_common, kafka_pki), named beside it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from kafkakit.rules.inventory import INVENTORY_VARIABLES, InventoryVariable

ROOT = Path(__file__).resolve().parents[3]
ROLES = ROOT / "roles"
DOC = ROOT / "docs" / "variables.md"
# Longer defaults (JVM flags, jar lists) are left to the defaults file.
MAX_DEFAULT_CHARS = 60


@dataclass(frozen=True)
class Role:
    name: str
    description: str
    defaults: Mapping[str, Any]
    # entry point (main, or a tasks_from file without .yml) -> its argument spec
    specs: Mapping[str, Mapping[str, Any]]
    has_readme: bool

    def entry_points(self) -> list[str]:
        return sorted(self.specs, key=lambda name: (name != "main", name))

    def options(self) -> dict[str, dict[str, Any]]:
        """Every top-level option of every entry point (the first spec naming it wins)."""
        out: dict[str, dict[str, Any]] = {}
        for entry in self.entry_points():
            for name, option in (self.specs[entry].get("options") or {}).items():
                out.setdefault(name, option)
        return out


def _load_yaml(path: Path) -> Any:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when present: 10x faster
    return yaml.load(path.read_text(), Loader=loader) if path.exists() else None


def load_roles(roles_dir: Path = ROLES) -> list[Role]:
    roles = []
    for path in sorted(p for p in roles_dir.iterdir() if (p / "meta").is_dir()):
        meta = _load_yaml(path / "meta" / "main.yml") or {}
        specs = (_load_yaml(path / "meta" / "argument_specs.yml") or {}).get("argument_specs") or {}
        roles.append(
            Role(
                name=path.name,
                description=str((meta.get("galaxy_info") or {}).get("description", "")),
                defaults=_load_yaml(path / "defaults" / "main.yml") or {},
                specs=specs,
                has_readme=(path / "README.md").exists(),
            )
        )
    return roles


def owners(roles: Sequence[Role]) -> dict[str, Role]:
    """variable -> the role whose defaults/main.yml defines it."""
    out: dict[str, Role] = {}
    for role in roles:
        for name in role.defaults:
            out.setdefault(name, role)
    return out


# --- formatting ------------------------------------------------------------------------------


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _code(text: str) -> str:
    return "`" + text.replace("`", "'") + "`"


def _sentence(text: str) -> str:
    text = " ".join(str(text).split())
    return text if not text or text.endswith((".", "!", "?")) else text + "."


def format_value(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, str):
        text = value if value else '""'
    elif isinstance(value, int | float):
        text = str(value)
    else:
        text = yaml.safe_dump(value, default_flow_style=True, width=10_000).strip()
    text = " ".join(text.split())
    if len(text) <= MAX_DEFAULT_CHARS:
        return _code(text)
    return "*computed, see defaults/main.yml*" if "{{" in text else "*long, see defaults/main.yml*"


def format_type(option: Mapping[str, Any]) -> str:
    kind = str(option.get("type", "str"))
    if kind == "list" and option.get("elements"):
        return f"list of {option['elements']}"
    return kind


def default_of(role: Role, name: str, option: Mapping[str, Any], owner: Mapping[str, Role]) -> str:
    """The role's own default, else the owning role's (named), else the spec's."""
    if name in role.defaults:
        return format_value(role.defaults[name])
    home = owner.get(name)
    if home is not None:
        return f"{format_value(home.defaults[name])} ({home.name})"
    return format_value(option["default"]) if "default" in option else ""


def _rows(role: Role, options: Mapping[str, Any], owner: Mapping[str, Role], prefix: str = "") -> list[str]:
    rows = []
    for name, option in options.items():
        option = option or {}
        full = f"{prefix}{name}"
        label = _code(full) + (" (secret)" if option.get("no_log") else "")
        if prefix:
            default = format_value(option["default"]) if "default" in option else ""
        else:
            default = default_of(role, name, option, owner)
        text = option.get("description", "")
        description = _sentence(" ".join(text) if isinstance(text, list) else str(text))
        if option.get("choices"):
            description += " One of " + ", ".join(_code(str(c)) for c in option["choices"]) + "."
        required = "yes" if option.get("required") else ""
        rows.append(f"| {label} | {format_type(option)} | {_cell(default)} | {required} | {_cell(description)} |")
        if option.get("options"):
            sub = f"{full}[]." if option.get("type") == "list" else f"{full}."
            rows += _rows(role, option["options"], owner, sub)
    return rows


def _needed_when(v: InventoryVariable) -> str:
    when = "always" if v.needed_with == "all" else f"when the inventory has `{v.needed_with}` hosts"
    if not v.required:
        when = "optional " + when.replace("always", "").strip()
    return f"{when}; {v.note}" if v.note else when


def render(roles: Sequence[Role], variables: Sequence[InventoryVariable] = INVENTORY_VARIABLES) -> str:
    owner = owners(roles)
    out = [
        "# Role variables",
        "",
        "<!-- Generated by `make docs` (python -m kafkakit.tooling.specdoc) from roles/*/meta/argument_specs.yml and",
        "     roles/*/defaults/main.yml. Do not edit: change the specs, then run make docs. -->",
        "",
        "Every variable the roles take, per role and entry point: `main` is what `roles:` runs, the",
        "others are task files (`tasks_from`) that other roles and playbooks include. The default is the",
        "value in the role's `defaults/main.yml`; a role name beside it says which role defines a variable",
        "that several roles use. Defaults in `{{ }}` are computed from other variables and the inventory.",
        "Set variables in the inventory's `group_vars`, secrets in an ansible-vault file.",
        "",
        "## Secrets and controller paths",
        "",
        "What the inventory must set besides the host facts (`dc`, `kafka_rack`, `private_ip`, `broker_id`,",
        "`zookeeper_id`). The preflight refuses an inventory that lacks one",
        "(kafkakit.rules.inventory.INVENTORY_VARIABLES).",
        "",
        "| variable | needed | kind |",
        "| --- | --- | --- |",
    ]
    for v in variables:
        out.append(f"| {_code(v.name)} | {_needed_when(v)} | {'secret' if v.secret else 'controller path'} |")
    out += ["", "## Roles", ""]
    for role in roles:
        out.append(f"- [{role.name}](#{role.name}): {_cell(role.description)}")
    for role in roles:
        about = _sentence(role.description)
        if role.has_readme:
            about += f" See [roles/{role.name}/README.md](../roles/{role.name}/README.md)."
        out += ["", f"## {role.name}", "", about]
        for entry in role.entry_points():
            spec = role.specs[entry] or {}
            out += ["", f"### {role.name}: `{entry}`", ""]
            if spec.get("short_description"):
                out += [_sentence(spec["short_description"]), ""]
            options = spec.get("options") or {}
            if not options:
                out.append("No variables.")
                continue
            out += [
                "| variable | type | default | required | description |",
                "| --- | --- | --- | --- | --- |",
                *_rows(role, options, owner),
            ]
    return "\n".join(out) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m kafkakit.tooling.specdoc", description=__doc__.split("\n\n")[0])
    action = p.add_mutually_exclusive_group()
    action.add_argument("--write", type=Path, nargs="?", const=DOC, metavar="FILE", help="write it to FILE (%(const)s)")
    action.add_argument(
        "--check", type=Path, nargs="?", const=DOC, metavar="FILE", help="exit 1 when FILE (%(const)s) is stale"
    )
    p.add_argument("--roles", type=Path, default=ROLES, help="roles folder (%(default)s)")
    args = p.parse_args(argv)
    text = render(load_roles(args.roles))
    if args.write:
        args.write.write_text(text)
        print(f"wrote {args.write}")
    elif args.check:
        current = args.check.read_text() if args.check.exists() else ""
        if current != text:
            print(
                f"{args.check} is stale: run `make docs` (kafkakit.tooling.specdoc --write {args.check})",
                file=sys.stderr,
            )
            return 1
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
