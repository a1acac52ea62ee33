"""The two directories Pulumi runs: infra/ (the program) and infra/policy/ (the policy pack)."""

from __future__ import annotations

import json
import runpy
import subprocess
import sys

import pulumi
from pulumi.runtime import config as runtime_config
from pulumi.runtime.mocks import MockMonitor
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await
from stack_harness import DEFAULT_ZONES, ROOT, AwsMocks, stack_file_settings


def test_the_program_directory_runs_as_pulumi_runs_it(monkeypatch) -> None:
    mocks = AwsMocks(DEFAULT_ZONES)
    pulumi.runtime.set_mocks(mocks, project="kafkakit", stack="small", monitor=MockMonitor(mocks))
    before = dict(runtime_config.CONFIG.get())
    runtime_config.set_all_config({f"kafkakit:{k}": json.dumps(v) for k, v in stack_file_settings("small").items()})
    exported: list[str] = []
    monkeypatch.setattr(pulumi, "export", lambda name, value: exported.append(name))
    try:
        _sync_await(run_pulumi_func(lambda: runpy.run_path(str(ROOT / "infra"), run_name="__main__")))
    finally:
        runtime_config.set_all_config(before)
    assert exported == ["inventory", "dataCentres", "peeringConnectionIds"]
    assert len([r for r in mocks.resources if r.typ == "aws:ec2/instance:Instance"]) == 19


def test_the_policy_pack_starts_and_announces_its_port() -> None:
    # The Pulumi CLI starts the pack and reads the analyzer's gRPC port from its first line.
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "infra" / "policy" / "__main__.py")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd="/",
    )
    try:
        line = proc.stdout.readline() if proc.stdout else ""
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert line.strip().isdigit(), proc.stderr.read() if proc.stderr else ""
