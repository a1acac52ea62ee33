"""Pulumi entry point (Pulumi.yaml: main: infra/)."""

import sys
from pathlib import Path

# Pulumi runs this directory as a script, in a venv built from infra/requirements.txt alone:
# make `infra` (the repository root) and `kafkakit` (src/, not pip-installed there) importable.
ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "src")]

import pulumi  # noqa: E402

from infra.program import build_stack, load_stack_config  # noqa: E402

for name, value in build_stack(load_stack_config()).items():
    pulumi.export(name, value)
