"""Policy pack entry point: `pulumi preview --policy-pack infra/policy` runs this."""

import sys
from pathlib import Path

# Pulumi runs this directory as a script; make the repository's `infra` package importable.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from pulumi_policy import EnforcementLevel, PolicyPack  # noqa: E402

from infra.policy.pack import PACK_NAME, POLICIES  # noqa: E402

PolicyPack(name=PACK_NAME, policies=POLICIES, enforcement_level=EnforcementLevel.MANDATORY)
