"""The users' deploy workflow (.github/workflows/deploy.yml): the safety properties that would
break silently, since actionlint checks syntax and types, not intent."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

WORKFLOW = Path(__file__).resolve().parents[2] / ".github" / "workflows" / "deploy.yml"
TEST_JOBS = {"lint", "unit", "lab"}
# owner/repo[/path]@vMAJOR[.MINOR[.PATCH]] or a full commit SHA.
PINNED = re.compile(r"^[\w.-]+/[\w.-]+(/[\w./-]+)?@(v\d+(\.\d+){0,2}|[0-9a-f]{40})$")
LONG_LIVED_KEYS = ("aws-access-key-id", "aws-secret-access-key", "aws_access_key_id", "aws_secret_access_key")


@pytest.fixture(scope="module")
def text() -> str:
    return WORKFLOW.read_text()


@pytest.fixture(scope="module")
def workflow(text: str) -> dict[str, Any]:
    doc = yaml.safe_load(text)
    assert isinstance(doc, dict)
    return doc


@pytest.fixture(scope="module")
def jobs(workflow: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return workflow["jobs"]


def triggers(workflow: dict[str, Any]) -> dict[str, Any]:
    # PyYAML (YAML 1.1) reads a bare `on:` key as True.
    return workflow.get("on", workflow.get(True)) or {}


def steps_using(job: dict[str, Any], action: str) -> list[dict[str, Any]]:
    return [s for s in job.get("steps", []) if str(s.get("uses", "")).split("@")[0] == action]


def condition(job: dict[str, Any]) -> str:
    return " ".join(str(job.get("if", "")).split())


def test_no_long_lived_aws_keys(text: str) -> None:
    lowered = text.lower()
    for key in LONG_LIVED_KEYS:
        assert key not in lowered, f"{key} in {WORKFLOW.name}: AWS access goes through OIDC only"


def test_triggers_are_pull_requests_pushes_to_main_a_schedule_and_by_hand(workflow: dict[str, Any]) -> None:
    on = triggers(workflow)
    assert set(on) == {"pull_request", "push", "schedule", "workflow_dispatch"}
    assert on["push"]["branches"] == ["main"]


SCENARIO_EVENTS = "github.event_name == 'schedule' || github.event_name == 'workflow_dispatch'"


def test_changes_run_the_contract_tier_and_the_schedule_the_scenarios(jobs: dict[str, dict[str, Any]]) -> None:
    lab, scenarios = jobs["lab"], jobs["scenarios"]
    assert condition(lab) == "github.event_name == 'pull_request' || github.event_name == 'push'"
    assert [s["run"] for s in lab["steps"] if "run" in s] == ["make test", "make lab-down"]
    assert condition(scenarios) == SCENARIO_EVENTS
    assert scenarios["runs-on"] == lab["runs-on"]
    make, down = [s for s in scenarios["steps"] if "run" in s]
    assert make["run"] == 'make "$TARGET"' and "'test-scenarios'" in make["env"]["TARGET"]
    assert down == {"if": "always()", "run": "make lab-down"}
    # Every scenario the Makefile has can be asked for by hand, and nothing else.
    makefile = (WORKFLOW.parents[2] / "Makefile").read_text()
    names = re.search(r"^SCENARIOS := (.*)$", makefile, re.M)
    assert names
    options = triggers(yaml.safe_load(WORKFLOW.read_text()))["workflow_dispatch"]["inputs"]["scenario"]["options"]
    assert options == ["all", *names[1].split()]
    # No deploy and no preview from a scenario run.
    for name in ("deploy", "preview"):
        assert "schedule" not in condition(jobs[name]) and "workflow_dispatch" not in condition(jobs[name])


def test_every_action_is_pinned(jobs: dict[str, dict[str, Any]]) -> None:
    uses = [str(s["uses"]) for job in jobs.values() for s in job.get("steps", []) if "uses" in s]
    assert uses
    unpinned = [u for u in uses if not PINNED.match(u)]
    assert not unpinned, f"pin these to a version tag or a commit SHA: {unpinned}"


def test_concurrency_is_set(workflow: dict[str, Any], jobs: dict[str, dict[str, Any]]) -> None:
    assert workflow.get("concurrency", {}).get("group")
    deploy = jobs["deploy"]["concurrency"]
    assert deploy["group"]
    # A started `pulumi up` / site.yml must never be cancelled by a newer push.
    assert deploy["cancel-in-progress"] is False


def test_permissions_are_least_privilege(workflow: dict[str, Any], jobs: dict[str, dict[str, Any]]) -> None:
    assert workflow.get("permissions") == {}
    for name, job in jobs.items():
        perms = job.get("permissions")
        assert isinstance(perms, dict), f"job {name} must declare its own permissions"
        assert "write-all" not in perms.values()
        if name not in {"preview", "deploy"}:
            assert set(perms) == {"contents"} and perms["contents"] == "read", name


def test_deploy_job_is_guarded(jobs: dict[str, dict[str, Any]]) -> None:
    deploy = jobs["deploy"]
    env = deploy.get("environment")
    env_name = env.get("name") if isinstance(env, dict) else env
    assert env_name, "the deploy job needs an environment (required reviewers approve it)"
    assert deploy["permissions"].get("id-token") == "write"
    cond = condition(deploy)
    assert "github.event_name == 'push'" in cond
    assert "github.ref == 'refs/heads/main'" in cond
    assert "||" not in cond and "always()" not in cond
    assert TEST_JOBS <= set(deploy["needs"])


def test_deploy_job_runs_up_then_site_and_verify(jobs: dict[str, dict[str, Any]]) -> None:
    steps = jobs["deploy"]["steps"]
    pulumi = steps_using(jobs["deploy"], "pulumi/actions")
    assert [s["with"]["command"] for s in pulumi] == ["up"]
    runs = [str(s.get("run", "")) for s in steps]
    order = [
        next(i for i, s in enumerate(steps) if s in pulumi),
        next(i for i, r in enumerate(runs) if "-i ../inventories/aws site.yml" in r),
        next(i for i, r in enumerate(runs) if "-i ../inventories/aws verify.yml" in r),
    ]
    assert order == sorted(order)


def test_preview_runs_only_on_pull_requests(jobs: dict[str, dict[str, Any]]) -> None:
    preview = jobs["preview"]
    cond = condition(preview)
    assert cond.startswith("github.event_name == 'pull_request'")
    assert "push" not in cond and "||" not in cond
    assert [s["with"]["command"] for s in steps_using(preview, "pulumi/actions")] == ["preview"]
    assert TEST_JOBS <= set(preview["needs"])


def test_only_preview_and_deploy_touch_the_cloud(jobs: dict[str, dict[str, Any]]) -> None:
    for name, job in jobs.items():
        cloud = steps_using(job, "aws-actions/configure-aws-credentials") + steps_using(job, "pulumi/actions")
        if name in {"preview", "deploy"}:
            assert cloud
        else:
            assert not cloud and "id-token" not in job["permissions"], name


def test_aws_role_comes_from_a_variable(jobs: dict[str, dict[str, Any]]) -> None:
    for name in ("preview", "deploy"):
        (aws,) = steps_using(jobs[name], "aws-actions/configure-aws-credentials")
        assert re.fullmatch(r"\$\{\{ vars\.[A-Z_]+ \}\}", aws["with"]["role-to-assume"]), name


def test_pulumi_token_and_vault_password_come_from_secrets(jobs: dict[str, dict[str, Any]]) -> None:
    for name in ("preview", "deploy"):
        for step in steps_using(jobs[name], "pulumi/actions"):
            assert step["env"]["PULUMI_ACCESS_TOKEN"] == "${{ secrets.PULUMI_ACCESS_TOKEN }}"
    vault = [s for s in jobs["deploy"]["steps"] if "ANSIBLE_VAULT_PASSWORD" in str(s.get("env", {}))]
    assert vault and all("secrets.ANSIBLE_VAULT_PASSWORD" in str(s["env"]) for s in vault)
