#!/usr/bin/env python3
"""Ansible dynamic inventory: the kafkakit Pulumi stack's `inventory` output.

    ansible-playbook -i inventories/aws ansible/site.yml

Where the stack outputs come from, first match wins:
  KAFKAKIT_PULUMI_OUTPUTS=<file>  a saved `pulumi stack output --json` (CI, air-gapped runs);
  otherwise `pulumi stack output --json` in the repository root, for the stack named by
  KAFKAKIT_PULUMI_STACK (or Pulumi's currently selected stack).

The output is already an Ansible YAML-inventory document (kafkakit.rules.inventory.build_inventory);
this script only re-expresses it in the script protocol (--list / --host). Standard library
only: Ansible runs it with whatever python3 the controller has.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
OUTPUTS_ENV = "KAFKAKIT_PULUMI_OUTPUTS"
STACK_ENV = "KAFKAKIT_PULUMI_STACK"


class InventoryError(RuntimeError):
    pass


def read_outputs(env: Mapping[str, str] = os.environ) -> dict[str, Any]:
    """The stack outputs as a dict, from the saved file or from the Pulumi CLI."""
    saved = env.get(OUTPUTS_ENV)
    if saved:
        path = Path(saved)
        if not path.is_file():
            raise InventoryError(f"{OUTPUTS_ENV}={saved}: no such file")
        text = path.read_text()
        source = str(path)
    else:
        cmd = ["pulumi", "stack", "output", "--json", "--cwd", str(REPO_ROOT)]
        if env.get(STACK_ENV):
            cmd += ["--stack", env[STACK_ENV]]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        except FileNotFoundError as e:
            raise InventoryError(
                f"the pulumi CLI is not installed; set {OUTPUTS_ENV} to a saved `pulumi stack output --json`"
            ) from e
        if done.returncode != 0:
            raise InventoryError(f"{' '.join(cmd)} failed: {done.stderr.strip()}")
        text, source = done.stdout, "pulumi stack output"
    try:
        outputs = json.loads(text)
    except json.JSONDecodeError as e:
        raise InventoryError(f"{source}: not JSON ({e})") from e
    if not isinstance(outputs, dict):
        raise InventoryError(f"{source}: expected a JSON object of stack outputs")
    return outputs


def to_script_inventory(doc: dict[str, Any]) -> dict[str, Any]:
    """A YAML-inventory document ({all: {children, vars}}) in Ansible's script JSON format."""
    if not isinstance(doc, dict) or not isinstance(doc.get("all"), dict):
        raise InventoryError("the `inventory` output has no `all` group")
    result: dict[str, Any] = {"_meta": {"hostvars": {}}}
    hostvars: dict[str, dict[str, Any]] = result["_meta"]["hostvars"]

    def add_group(name: str, body: dict[str, Any] | None) -> None:
        body = body or {}
        group = result.setdefault(name, {"hosts": [], "vars": {}, "children": []})
        for host, hvars in (body.get("hosts") or {}).items():
            if host not in group["hosts"]:
                group["hosts"].append(host)
            hostvars.setdefault(host, {}).update(hvars or {})
        group["vars"].update(body.get("vars") or {})
        for child, child_body in (body.get("children") or {}).items():
            if child not in group["children"]:
                group["children"].append(child)
            add_group(child, child_body)

    add_group("all", doc["all"])
    return result


def inventory(env: Mapping[str, str] = os.environ) -> dict[str, Any]:
    outputs = read_outputs(env)
    if "inventory" not in outputs:
        raise InventoryError(
            f"the stack has no `inventory` output (outputs: {sorted(outputs)}); "
            "was it deployed from this repository's infra/?"
        )
    return to_script_inventory(outputs["inventory"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--list", action="store_true", help="the whole inventory")
    mode.add_argument("--host", help="one host's variables")
    args = parser.parse_args(argv)
    try:
        inv = inventory()
    except InventoryError as e:
        print(f"inventories/aws: {e}", file=sys.stderr)
        return 1
    if args.host:
        print(json.dumps(inv["_meta"]["hostvars"].get(args.host, {}), indent=2))
    else:
        print(json.dumps(inv, indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
