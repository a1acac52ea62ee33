"""Policy pack entry point: `pulumi preview --policy-pack infra/policy` runs this."""

import sys
from pathlib import Path

# Pulumi runs this directory as a script, in the program's venv: make `infra` (the repository
# root) and `kafkakit` (src/, which infra.ports imports; not pip-installed there) importable.
ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "src")]

from pulumi_policy import EnforcementLevel, PolicyPack  # noqa: E402

from infra.policy.pack import PACK_NAME, POLICIES  # noqa: E402

PolicyPack(name=PACK_NAME, policies=POLICIES, enforcement_level=EnforcementLevel.MANDATORY)
