"""Pulumi entry point (Pulumi.yaml: main: infra/)."""

import sys
from pathlib import Path

# Pulumi runs this directory as a script; make `infra` importable as a package.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pulumi  # noqa: E402

from infra.program import build_stack, load_stack_config  # noqa: E402

for name, value in build_stack(load_stack_config()).items():
    pulumi.export(name, value)
