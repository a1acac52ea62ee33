"""Runs a Pulumi program directory the way Pulumi's Python language host does, under mocks.

    python run_program.py PROGRAM_DIR PROJECT STACK OUT_JSON   (the stack's config in PULUMI_CONFIG)

The language host loads the config from PULUMI_CONFIG, changes into the program directory and
runs it with `runpy.run_path(".", run_name="__main__")`; this does the same after
`pulumi.runtime.set_mocks`. It writes what the fresh-clone test checks to OUT_JSON: the exported
names, the registered resource types, where `infra`, `kafkakit` and `pulumi` came from, and
`sys.path`. It imports nothing of the project: finding the project is the program's job.
"""

from __future__ import annotations

import json
import os
import runpy
import sys
from collections import Counter
from typing import Any

import pulumi
from aws_mocks import DEFAULT_ZONES, AwsMocks
from pulumi.runtime import config as runtime_config
from pulumi.runtime.mocks import MockMonitor
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await


def main(program_dir: str, project: str, stack: str, out: str) -> None:
    mocks = AwsMocks(DEFAULT_ZONES)
    pulumi.runtime.set_mocks(mocks, project=project, stack=stack, preview=False, monitor=MockMonitor(mocks))
    runtime_config.set_all_config(runtime_config.get_config_env(), runtime_config.get_config_secret_keys_env())

    exported: list[str] = []
    export = pulumi.export

    def recording_export(name: str, value: Any) -> None:
        exported.append(name)
        export(name, value)

    pulumi.export = recording_export
    os.chdir(program_dir)
    _sync_await(run_pulumi_func(lambda: runpy.run_path(".", run_name="__main__")))

    def origin(module: str) -> str | None:
        found = sys.modules.get(module)
        return getattr(found, "__file__", None)

    report = {
        "exported": exported,
        "resources": Counter(r.typ for r in mocks.resources),
        "modules": {name: origin(name) for name in ("infra", "kafkakit", "pulumi", "pulumi_aws")},
        "sys_path": sys.path,
    }
    with open(out, "w") as f:
        json.dump(report, f)


if __name__ == "__main__":
    main(*sys.argv[1:5])
