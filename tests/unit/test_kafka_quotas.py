"""The kafka_quotas action plugin, with tests/unit/support/config_command.py standing in for Kafka's
ConfigCommand behind the launcher: through Ansible itself (`ansible localhost -m kafka_quotas`) where
Ansible's own handling matters (what it prints, check mode, a failure), in-process otherwise (the
plugin's class with its runner, the kafkakit_tool module, run in-process too).

What reaches the tool, and how: the login on standard input only (never on its command line), one
describe per run and one alteration per changed entity, none in check mode; a second apply changes
nothing; the diff shows the quotas and no password, neither does a failure.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from tests.unit.support.ansible_run import ANSIBLE_DIR, REPO
from tests.unit.support.plugin_files import load, run_module

FAKE = REPO / "tests/unit/support/config_command.py"
ADMIN_PASSWORD = "Adm1n-pa55-5ecret-7d0c"
USER_PASSWORD = "Us3r-pa55-5ecret-4b1e"
ALICE = {"name": "alice", "password": USER_PASSWORD, "quotas": {"producer_byte_rate": 65536}}
BOB = {"name": "bob", "password": USER_PASSWORD}


class Cluster:
    """The stand-in's state: the user quota entities ('' = the default) and the calls it got."""

    def __init__(self, tmp_path: Path, entities: dict | None = None) -> None:
        self.path = tmp_path / "state.json"
        self.path.write_text(json.dumps({"entities": entities or {}, "scram_users": ["admin", "alice", "bob"]}))
        self.launcher = tmp_path / "kafkakit-run"
        self.launcher.write_text(f'#!/bin/sh\nexec {sys.executable} {FAKE} {self.path} "$@"\n')
        self.launcher.chmod(0o755)
        self.tmp_path = tmp_path

    @property
    def state(self) -> dict:
        return json.loads(self.path.read_text())

    def entities(self) -> dict:
        return self.state["entities"]

    def calls(self) -> list[dict]:
        return self.state.get("calls", [])

    def forget_calls(self) -> None:
        state = self.state
        state["calls"] = []
        self.path.write_text(json.dumps(state))

    def args(self, users: list[dict], **extra: object) -> dict:
        return {
            "bootstrap_servers": "10.99.0.11:9093",
            "kafka_version": "4.4.0",
            "admin_user": "admin",
            "admin_password": ADMIN_PASSWORD,
            "truststore": "/etc/kafka/tls/truststore.pem",
            "users": users,
            "launcher": str(self.launcher),
            **extra,
        }

    def run(self, args: dict, *options: str, as_json: bool = True) -> subprocess.CompletedProcess[str]:
        env = {
            **os.environ,
            "ANSIBLE_CONFIG": str(ANSIBLE_DIR / "ansible.cfg"),
            "ANSIBLE_NOCOLOR": "1",
            "ANSIBLE_LOCAL_TEMP": str(self.tmp_path / "ansible-tmp"),
        }
        env.pop("ANSIBLE_FORCE_COLOR", None)
        if as_json:
            env.update(
                ANSIBLE_LOAD_CALLBACK_PLUGINS="1",
                ANSIBLE_STDOUT_CALLBACK="ansible.posix.json",
                ANSIBLE_CALLBACKS_ENABLED="ansible.posix.json",
            )
        return subprocess.run(
            [
                str(Path(sys.executable).parent / "ansible"),
                "localhost",
                "-i",
                "localhost,",
                "-c",
                "local",
                "-e",
                f"ansible_python_interpreter={sys.executable}",
                "-m",
                "kafka_quotas",
                "-a",
                json.dumps(args),
                *options,
            ],
            cwd=ANSIBLE_DIR,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    def apply(self, args: dict, *options: str) -> dict:
        proc = self.run(args, *options)
        assert proc.stdout.strip(), proc.stderr
        return json.loads(proc.stdout)["plays"][0]["tasks"][0]["hosts"]["localhost"]


def alters(calls: list[dict]) -> list[list[str]]:
    return [c["args"][5:] for c in calls if "--alter" in c["args"]]


class InProcess:
    """The action plugin's run() in-process; its runner the real kafkakit_tool in-process, or `answer`
    (a runner's result) when set. `asked` keeps what the plugin asked its runner."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
        self.action = load("action/kafka_quotas.py", "kafka_quotas_action")
        self.tool = load("modules/kafkakit_tool.py", "kafkakit_tool")
        self.monkeypatch, self.capsys = monkeypatch, capsys
        self.asked: list[dict] = []
        self.answer: dict | None = None

    def __call__(self, args: dict, check_mode: bool = False) -> dict:
        task = SimpleNamespace(args=args, check_mode=check_mode, async_val=0, action="kafka_quotas")
        connection = SimpleNamespace(_shell=SimpleNamespace(tmpdir=None))
        plugin = self.action.ActionModule(task, connection, None, None, None)

        def execute(module_name: str, module_args: dict, task_vars: dict) -> dict:
            assert module_name == "kafkakit_tool"
            self.asked.append(module_args)
            if self.answer is not None:
                return self.answer
            module_args = {**module_args, "_ansible_check_mode": check_mode}
            return run_module(self.tool, self.monkeypatch, self.capsys, module_args)

        plugin._execute_module = execute
        return plugin.run(task_vars={"inventory_hostname": "dc1-kafka1"})


@pytest.fixture
def apply(monkeypatch, capsys):
    return InProcess(monkeypatch, capsys)


def test_an_apply_sets_what_is_declared_and_the_second_apply_changes_nothing(tmp_path):
    cluster = Cluster(tmp_path, {"bob": {"consumer_byte_rate": 1024}})
    args = cluster.args([ALICE, BOB], defaults={"consumer_byte_rate": 10485760})
    first = cluster.apply(args)
    assert first["changed"] and not first.get("failed"), first
    assert cluster.entities() == {
        "bob": {"consumer_byte_rate": 1024},  # undeclared: kept, and reported
        "": {"consumer_byte_rate": 10485760.0},
        "alice": {"producer_byte_rate": 65536.0},
    }
    assert first["undeclared"] == ["User:bob consumer_byte_rate=1024"]
    assert first["quotas"] == {
        "<default>": {"consumer_byte_rate": 10485760},
        "User:alice": {"producer_byte_rate": 65536},
        "User:bob": {"consumer_byte_rate": 1024},
    }
    calls = cluster.calls()
    assert [c["args"][5] for c in calls] == ["--describe", "--alter", "--alter"]
    assert alters(calls) == [
        ["--alter", "--entity-type", "users", "--entity-default", "--add-config", "consumer_byte_rate=10485760"],
        ["--alter", "--entity-type", "users", "--entity-name", "alice", "--add-config", "producer_byte_rate=65536"],
    ]
    # The login reached the tool on its standard input, and only there.
    for call in calls:
        assert call["args"][3:5] == ["--command-config", "/dev/stdin"]
        assert call["login"] == "admin" and ADMIN_PASSWORD in call["config"]
        assert not [a for a in call["args"] if ADMIN_PASSWORD in a or USER_PASSWORD in a]

    cluster.forget_calls()
    second = cluster.apply(args)
    assert not second["changed"] and not second.get("failed"), second
    assert [c["args"][5] for c in cluster.calls()] == ["--describe"]


def test_a_declared_quota_changed_or_removed_is_applied_then_nothing_more(tmp_path, apply):
    cluster = Cluster(tmp_path, {"alice": {"producer_byte_rate": 65536, "request_percentage": 50}})
    changed = cluster.args([{**ALICE, "quotas": {"producer_byte_rate": 131072}}])
    result = apply(changed)
    assert result["changed"] and result["changes"] == [
        {"entity": "User:alice", "set": {"producer_byte_rate": 131072}, "delete": ["request_percentage"]}
    ]
    assert cluster.entities() == {"alice": {"producer_byte_rate": 131072.0}}
    assert not apply(changed)["changed"]
    # quotas: {} owns the user with no quota: the last one goes too.
    removed = cluster.args([{**ALICE, "quotas": {}}])
    assert apply(removed)["changed"] and cluster.entities() == {}
    assert not apply(removed)["changed"]


def test_exclusive_removes_what_is_not_declared(tmp_path, apply):
    cluster = Cluster(tmp_path, {"bob": {"consumer_byte_rate": 1024}, "": {"producer_byte_rate": 5}})
    result = apply(cluster.args([ALICE, BOB], exclusive=True))
    assert result["changed"] and cluster.entities() == {"alice": {"producer_byte_rate": 65536.0}}
    assert result["undeclared"] == ["<default> producer_byte_rate=5", "User:bob consumer_byte_rate=1024"]


def test_check_diff_shows_the_quotas_runs_only_the_describe_and_prints_no_password(tmp_path):
    cluster = Cluster(tmp_path, {"bob": {"consumer_byte_rate": 1024}})
    args = cluster.args([ALICE, {**BOB, "quotas": {}}], defaults={"request_percentage": 12.5})
    dry = cluster.run(args, "--check", "--diff", "-vvv", as_json=False)
    assert dry.returncode == 0, dry.stdout + dry.stderr
    for line in (
        "+<default> request_percentage=12.5",
        "+User:alice producer_byte_rate=65536",
        "-User:bob consumer_byte_rate=1024",
    ):
        assert line in dry.stdout, dry.stdout
    assert "CHANGED" in dry.stdout
    output = dry.stdout + dry.stderr
    assert ADMIN_PASSWORD not in output and USER_PASSWORD not in output
    assert cluster.entities() == {"bob": {"consumer_byte_rate": 1024}}
    assert [c["args"][5] for c in cluster.calls()] == ["--describe"]


def test_check_mode_asks_for_the_describe_only(tmp_path, apply):
    cluster = Cluster(tmp_path, {"bob": {"consumer_byte_rate": 1024}})
    result = apply(cluster.args([ALICE, {**BOB, "quotas": {}}]), check_mode=True)
    assert result["changed"] and len(result["changes"]) == 2, result
    assert [a["writes"] for a in apply.asked] == [False]
    assert [run[5] for a in apply.asked for run in a["runs"]] == ["--describe"]
    assert cluster.entities() == {"bob": {"consumer_byte_rate": 1024}}


def test_what_the_runner_returns_is_masked_again(tmp_path, apply):
    """The runner masks its own output; should one ever not, the plugin still shows no password."""
    cluster = Cluster(tmp_path)
    apply.answer = {"failed": True, "msg": f"login admin/{ADMIN_PASSWORD} refused; alice/{USER_PASSWORD}"}
    result = apply(cluster.args([ALICE]))
    assert result["failed"] and result["msg"].endswith("login admin/******** refused; alice/********"), result


BAD_ARGS = {
    "a-quota-kafka-refuses": (
        {"users": [{"name": "alice", "password": USER_PASSWORD, "quotas": {"producer_byte_rate": 0.5}}]},
        "users[0] (alice): producer_byte_rate=0.5 is not a whole number: Kafka defines producer_byte_rate as LONG",
    ),
    "an-unknown-quota": (
        {"defaults": {"consumer_rate": 1}},
        "defaults: unknown quota 'consumer_rate' (did you mean 'consumer_byte_rate'?)",
    ),
    "quotas-on-an-absent-user": (
        {"users": [{"name": "alice", "state": "absent", "quotas": {"producer_byte_rate": 1}}]},
        "users[0] (alice): quotas on a user declared state: absent",
    ),
    "no-password": ({"admin_password": None}, "missing required arguments: admin_password"),
    "unknown-argument": ({"exclusiv": True}, "Unsupported parameters for (kafka_quotas) module: exclusiv."),
    "a-mechanism-of-no-scram": ({"sasl_mechanism": "PLAIN"}, "value of sasl_mechanism must be one of"),
    "no-release": ({"kafka_version": "latest"}, "kafka_version='latest' is not a Kafka release like 4.4.0"),
    "no-version": ({"kafka_version": None}, "missing required arguments: kafka_version"),
}


@pytest.mark.parametrize("case", list(BAD_ARGS))
def test_bad_arguments_fail_before_the_tool_runs(case, tmp_path, apply):
    cluster = Cluster(tmp_path)
    change, message = BAD_ARGS[case]
    args = {k: v for k, v in {**cluster.args([ALICE]), **change}.items() if v is not None}
    result = apply(args)
    assert result.get("failed") and message in result["msg"], result
    assert cluster.calls() == []
    assert ADMIN_PASSWORD not in json.dumps(result) and USER_PASSWORD not in json.dumps(result)


@pytest.mark.parametrize(("version", "tool"), [("4.3.1", "kafka.admin"), ("4.4.0", "org.apache.kafka.tools")])
def test_the_tool_is_the_one_of_the_release_the_host_runs(version, tool, tmp_path):
    cluster = Cluster(tmp_path)
    result = cluster.apply(cluster.args([ALICE], kafka_version=version))
    assert not result.get("failed"), result
    assert cluster.calls() and {c["args"][0] for c in cluster.calls()} == {f"{tool}.ConfigCommand"}


def test_a_failing_tool_fails_the_task_with_its_message_masked(tmp_path):
    cluster = Cluster(tmp_path)
    state = cluster.state
    state["fail"] = f"Authentication failed for admin with {ADMIN_PASSWORD} (and {USER_PASSWORD})"
    cluster.path.write_text(json.dumps(state))
    result = cluster.apply(cluster.args([ALICE]))
    assert result.get("failed") and not result["changed"], result
    assert "Kafka's ConfigCommand on localhost: org.apache.kafka.tools.ConfigCommand failed (exit 1)" in result["msg"]
    assert "Authentication failed for admin with ********" in result["msg"]
    assert ADMIN_PASSWORD not in json.dumps(result) and USER_PASSWORD not in json.dumps(result)


def test_the_documentation_is_the_action_plugins_argument_spec():
    action = load("action/kafka_quotas.py", "kafka_quotas_action")
    tree = ast.parse((REPO / "ansible/plugins/modules/kafka_quotas.py").read_text())
    assert not [n for n in tree.body if isinstance(n, ast.FunctionDef)], "the module file is documentation only"
    doc = next(n.value.value for n in tree.body if isinstance(n, ast.Assign) and n.targets[0].id == "DOCUMENTATION")
    options = yaml.safe_load(doc)["options"]
    assert set(options) == set(action.ARGUMENT_SPEC)
    for name, spec in action.ARGUMENT_SPEC.items():
        for key in ("type", "default", "required", "no_log", "choices", "elements"):
            assert options[name].get(key) == spec.get(key), (name, key)


# --- the runner, kafkakit_tool, in-process ---------------------------------------------------------


@pytest.fixture
def tool():
    return load("modules/kafkakit_tool.py", "kafkakit_tool")


def echo(code: str) -> list[str]:
    """A run whose launcher is this python: `python -c code`."""
    return ["-c", code]


def test_the_runner_gives_stdin_and_masks_the_secrets(tool, monkeypatch, capsys):
    config = f'sasl.jaas.config=... password="{ADMIN_PASSWORD}";\n'
    out = run_module(
        tool,
        monkeypatch,
        capsys,
        {
            "runs": [
                echo("import sys; text = sys.stdin.read(); print(text[:16], text.split('\"')[1])"),
                echo("print(2)"),
            ],
            "command_config": config,
            "secrets": [ADMIN_PASSWORD],
            "launcher": sys.executable,
        },
    )
    assert not out.get("failed") and not out["changed"], out
    assert [r["rc"] for r in out["runs"]] == [0, 0] and out["runs"][1]["stdout"] == "2\n"
    # The run read its stdin (the settings' first characters), and the password in it is masked.
    assert out["runs"][0]["stdout"] == "sasl.jaas.config ********\n"
    assert ADMIN_PASSWORD not in json.dumps(out)


def test_the_runner_stops_at_a_failure_and_starts_no_write_in_check_mode(tool, monkeypatch, capsys, tmp_path):
    marker = tmp_path / "written"
    failed = run_module(
        tool,
        monkeypatch,
        capsys,
        {
            "runs": [echo(f"import sys; sys.exit('no {ADMIN_PASSWORD}')"), echo(f"open({str(marker)!r}, 'w')")],
            "command_config": "x=1\n",
            "secrets": [ADMIN_PASSWORD],
            "launcher": sys.executable,
        },
    )
    assert failed["failed"] and "failed (exit 1): no ********" in failed["msg"], failed
    assert len(failed["runs"]) == 1 and not marker.exists()
    checked = run_module(
        tool,
        monkeypatch,
        capsys,
        {
            "runs": [echo(f"open({str(marker)!r}, 'w')")],
            "command_config": "x=1\n",
            "launcher": sys.executable,
            "writes": True,
            "_ansible_check_mode": True,
        },
    )
    assert checked["changed"] and checked["runs"] == [] and not marker.exists()


# --- the other readers of kafka_users take its quotas ----------------------------------------------


def test_the_scram_users_module_takes_a_user_with_quotas():
    from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

    scram = load("modules/kafka_scram_users.py", "kafka_scram_users")
    spec = {"users": {"type": "list", "elements": "dict", "options": scram.USER_OPTIONS}}
    user = {"name": "quota-writer", "password": USER_PASSWORD, "quotas": {"producer_byte_rate": 65536}}
    assert ArgumentSpecValidator(spec).validate({"users": [user]}).error_messages == []


@pytest.mark.parametrize("dc", ["dc1", "dc2"])
def test_the_roles_spec_takes_the_labs_users_and_refuses_an_unknown_quota(dc):
    """What the role's argument validation checks when the preflight does not run (--tags)."""
    from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

    specs = yaml.safe_load((REPO / "roles/kafka_resources/meta/argument_specs.yml").read_text())
    options = specs["argument_specs"]["main"]["options"]
    spec = {k: options[k] for k in ("kafka_users", "kafka_user_quota_defaults")}
    users = yaml.safe_load((REPO / f"inventories/local/group_vars/{dc}.yml").read_text())["kafka_users"]
    assert any(u.get("quotas") for u in users)
    assert ArgumentSpecValidator(spec).validate({"kafka_users": users}).error_messages == []
    refused = ArgumentSpecValidator(spec).validate({"kafka_user_quota_defaults": {"producer_bytes_rate": 1}})
    assert "producer_bytes_rate" in " ".join(refused.error_messages)


def test_only_the_admins_password_travels_to_the_broker(tmp_path, apply):
    cluster = Cluster(tmp_path)
    apply(cluster.args([ALICE, BOB]))
    assert apply.asked and all(a["secrets"] == [ADMIN_PASSWORD] for a in apply.asked)
    assert not [a for a in apply.asked if USER_PASSWORD in json.dumps(a)]
