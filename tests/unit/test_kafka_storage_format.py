"""kafka_storage_format: a directory is formatted only when empty, an own format is left alone,
a foreign or partial one is refused and never touched; the tool's command line (quorum flags,
--add-scram) and what the module says in check mode. No Kafka needed (the functional test runs
the real storage tool)."""

from __future__ import annotations

import json
import subprocess
import tarfile
from pathlib import Path

import pytest

from tests.unit.support import plugin_files
from tests.unit.support.kafka_archives import each_4x_archive, needs_archives

fmt = plugin_files.load("modules/kafka_storage_format.py", "kafka_storage_format")

CLUSTER = "MkU3OEVBNTcwNTJENDM2Qk"
OTHER = "OtherClusterIdAAAAAAAA"


def write_meta(d: Path, **keys: str) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    text = "#\n#Tue Nov 24 05:00:00 UTC 2026\n" + "".join(f"{k}={v}\n" for k, v in keys.items())
    (d / "meta.properties").write_text(text)
    return d


def own(d: Path, node: int = 101) -> Path:
    return write_meta(
        d, **{"cluster.id": CLUSTER, "directory.id": "pbvuBlaTTwKRxS5NLJwRFQ", "node.id": str(node), "version": "1"}
    )


# --- what is formatted, what is refused --------------------------------------------------------


def test_missing_and_empty_directories_are_formatted(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    plan = fmt.plan_format([str(tmp_path / "missing"), str(tmp_path / "empty")], CLUSTER, 101)
    assert plan.to_format == [str(tmp_path / "missing"), str(tmp_path / "empty")]
    assert plan.formatted == [] and plan.problems == []


def test_an_own_format_is_left_alone(tmp_path: Path) -> None:
    d = own(tmp_path / "meta")
    (d / "__cluster_metadata-0").mkdir()
    plan = fmt.plan_format([str(d)], CLUSTER, 101)
    assert plan.formatted == [str(d)] and plan.to_format == [] and plan.problems == []


def test_only_the_new_empty_disk_is_formatted_beside_formatted_ones(tmp_path: Path) -> None:
    plan = fmt.plan_format([str(own(tmp_path / "a", 1)), str(tmp_path / "b")], CLUSTER, 1)
    assert plan.to_format == [str(tmp_path / "b")] and plan.formatted == [str(tmp_path / "a")]


def test_a_zookeeper_brokers_directory_is_formatted_for_its_broker_id(tmp_path: Path) -> None:
    # A broker migrated from ZooKeeper keeps its version 0 meta.properties: never reformatted.
    d = write_meta(tmp_path / "data", **{"broker.id": "2", "cluster.id": CLUSTER, "version": "0"})
    (d / "orders-0").mkdir()
    plan = fmt.plan_format([str(d)], CLUSTER, 2)
    assert plan.formatted == [str(d)] and plan.to_format == [] and plan.problems == []
    other_node = fmt.plan_format([str(d)], CLUSTER, 3)
    assert len(other_node.problems) == 1 and "belongs to another node" in other_node.problems[0]
    other_cluster = fmt.plan_format([str(d)], OTHER, 2)
    assert len(other_cluster.problems) == 1 and "belongs to another cluster" in other_cluster.problems[0]


@pytest.mark.parametrize(
    ("meta", "message"),
    [
        ({"cluster.id": OTHER, "node.id": "101", "version": "1"}, "belongs to another cluster"),
        ({"cluster.id": CLUSTER, "node.id": "102", "version": "1"}, "belongs to another node"),
        ({"cluster.id": CLUSTER, "version": "1"}, "incomplete (no node.id)"),
        ({"node.id": "101", "version": "1"}, "incomplete (no cluster.id)"),
        ({"cluster.id": CLUSTER, "node.id": "101"}, "incomplete (no version)"),
        # ZooKeeper mode's meta.properties (version 0, broker.id): a 3.x log dir is not KRaft's.
        ({"cluster.id": CLUSTER, "node.id": "101", "version": "0"}, "version 0"),
        ({"cluster.id": CLUSTER, "node.id": "101", "version": "1", "broker.id": "101"}, "unexpected keys"),
    ],
    ids=[
        "foreign-cluster",
        "other-node",
        "no-node-id",
        "no-cluster-id",
        "no-version",
        "zookeeper-version",
        "extra-key",
    ],
)
def test_a_foreign_or_partial_format_is_refused(tmp_path: Path, meta: dict[str, str], message: str) -> None:
    d = write_meta(tmp_path / "meta", **meta)
    before = (d / "meta.properties").read_text()
    plan = fmt.plan_format([str(d)], CLUSTER, 101)
    assert plan.to_format == [] and len(plan.problems) == 1
    assert message in plan.problems[0]
    assert (d / "meta.properties").read_text() == before


def test_files_without_meta_properties_are_refused(tmp_path: Path) -> None:
    d = tmp_path / "data"
    (d / "orders-0").mkdir(parents=True)
    plan = fmt.plan_format([str(d)], CLUSTER, 1)
    assert plan.to_format == [] and "no meta.properties" in plan.problems[0]


def test_an_empty_meta_properties_is_refused(tmp_path: Path) -> None:
    d = tmp_path / "data"
    d.mkdir()
    (d / "meta.properties").write_text("")
    assert "incomplete" in fmt.plan_format([str(d)], CLUSTER, 1).problems[0]


def test_the_node_directories_come_from_the_config() -> None:
    config = fmt.read_properties("log.dirs=/d1, /d2\nmetadata.log.dir=/meta\n# log.dir=/x\n")
    assert fmt.node_dirs(config) == ["/d1", "/d2", "/meta"]
    assert fmt.node_dirs({"log.dir": "/only"}) == ["/only"]
    with pytest.raises(fmt.FormatError):
        fmt.node_dirs({})


# --- the command line ----------------------------------------------------------------------------


def params(**over: object) -> dict:
    base = {
        "config": "/etc/kafka/controller.properties",
        "cluster_id": CLUSTER,
        "node_id": None,
        "kafka_home": "/opt/kafka",
        "java": "/usr/bin/java",
        "java_opts": ["-Xmx256m"],
        "quorum": "no_initial_controllers",
        "initial_controllers": None,
        "scram_users": [],
        "release_version": None,
    }
    return {**base, **over}


def test_the_command_runs_kafkas_storage_tool_with_the_quorum_flags() -> None:
    cmd = fmt.storage_command(params(quorum="initial_controllers", initial_controllers="101@a:9094:x"), False)
    assert cmd[:4] == ["/usr/bin/java", "-Xmx256m", "-cp", "/opt/kafka/libs/*"]
    assert cmd[4:] == [
        "kafka.tools.StorageTool", "format", "--config", "/etc/kafka/controller.properties",
        "--cluster-id", CLUSTER, "--initial-controllers", "101@a:9094:x",
    ]  # fmt: skip
    assert "--no-initial-controllers" in fmt.storage_command(params(), False)
    assert "--standalone" in fmt.storage_command(params(quorum="standalone"), False)
    assert fmt.storage_command(params(release_version="4.3-IV0"), True)[-3:] == [
        "--release-version",
        "4.3-IV0",
        "--ignore-formatted",
    ]


def test_scram_users_become_add_scram_arguments() -> None:
    users = [{"name": "admin", "password": "s3cret", "mechanism": "SCRAM-SHA-512", "iterations": 8192}]
    cmd = fmt.storage_command(params(scram_users=users), False)
    assert cmd[cmd.index("--add-scram") + 1] == "SCRAM-SHA-512=[name=admin,password=s3cret,iterations=8192]"


@pytest.mark.parametrize("password", ["a,b", "a]b", 'a"b', "a b", ""])
def test_a_password_the_tool_cannot_carry_is_refused_without_showing_it(password: str) -> None:
    with pytest.raises(fmt.FormatError) as err:
        fmt.scram_argument({"name": "admin", "password": password})
    assert password == "" or password not in str(err.value)


def test_parameter_checks() -> None:
    config = {"node.id": "101", "process.roles": "controller"}
    assert fmt.check_params(params(quorum="standalone"), config) == 101
    with pytest.raises(fmt.FormatError, match="expected 102"):
        fmt.check_params(params(node_id=102), config)
    with pytest.raises(fmt.FormatError, match="not a Kafka cluster id"):
        fmt.check_params(params(cluster_id="short"), config)
    with pytest.raises(fmt.FormatError, match="for controllers"):
        fmt.check_params(params(quorum="standalone"), {"node.id": "1", "process.roles": "broker"})
    with pytest.raises(fmt.FormatError, match="needs initial_controllers"):
        fmt.check_params(params(quorum="initial_controllers"), config)


# --- the module as Ansible runs it (idempotence, refusal, check mode) ---------------------------


def run_module(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, args: dict) -> dict:
    return plugin_files.run_module(fmt, monkeypatch, capsys, args)


@pytest.fixture
def controller(tmp_path: Path) -> Path:
    conf = tmp_path / "controller.properties"
    conf.write_text(
        f"process.roles=controller\nnode.id=101\nmetadata.log.dir={tmp_path / 'meta'}\nlog.dirs={tmp_path / 'meta'}\n"
    )
    return conf


def module_args(conf: Path, **over: object) -> dict:
    return {
        "config": str(conf),
        "cluster_id": CLUSTER,
        "kafka_home": "/nonexistent",
        "quorum": "no_initial_controllers",
        **over,
    }


def test_module_leaves_an_own_format_unchanged_without_running_the_tool(monkeypatch, capsys, controller) -> None:
    own(controller.parent / "meta")
    monkeypatch.setattr(fmt.subprocess, "run", lambda *a, **k: pytest.fail("the tool must not run"))
    out = run_module(monkeypatch, capsys, module_args(controller))
    assert out["changed"] is False and out.get("failed") is not True
    assert out["already_formatted"] == [str(controller.parent / "meta")]


def test_module_refuses_a_foreign_cluster(monkeypatch, capsys, controller) -> None:
    write_meta(controller.parent / "meta", **{"cluster.id": OTHER, "node.id": "101", "version": "1"})
    monkeypatch.setattr(fmt.subprocess, "run", lambda *a, **k: pytest.fail("the tool must not run"))
    out = run_module(monkeypatch, capsys, module_args(controller))
    assert out["failed"] is True and "another cluster" in out["msg"] and OTHER in out["msg"]


def test_module_in_check_mode_reports_and_formats_nothing(monkeypatch, capsys, controller) -> None:
    monkeypatch.setattr(fmt.subprocess, "run", lambda *a, **k: pytest.fail("the tool must not run"))
    args = module_args(controller, _ansible_check_mode=True, scram_users=[{"name": "admin", "password": "Pw123"}])
    out = run_module(monkeypatch, capsys, args)
    assert out["changed"] is True and out["formatted"] == [str(controller.parent / "meta")]
    assert not (controller.parent / "meta").exists()
    assert "Pw123" not in json.dumps(out)


def test_module_never_shows_the_scram_password_when_the_tool_fails(monkeypatch, capsys, controller) -> None:
    class Failed:
        returncode = 1
        stdout = ""
        stderr = "bad SCRAM-SHA-512=[name=admin,password=Pw123]"

    monkeypatch.setattr(fmt.subprocess, "run", lambda *a, **k: Failed())
    out = run_module(monkeypatch, capsys, module_args(controller, scram_users=[{"name": "admin", "password": "Pw123"}]))
    assert out["failed"] is True and "Pw123" not in json.dumps(out)


# --- the release that formats: the node's own (Kafka 4.4's format is not forward-compatible) ------


def kafka_home(tmp_path: Path, *jars: str) -> Path:
    libs = tmp_path / "kafka" / "libs"
    libs.mkdir(parents=True)
    for jar in jars:
        (libs / jar).touch()
    return libs.parent


def test_the_tool_release_is_read_from_the_core_jar(tmp_path: Path) -> None:
    home = kafka_home(tmp_path, "kafka_2.13-4.4.0.jar", "kafka-clients-4.4.0.jar", "kafka_2.13-4.4.0-test.jar")
    assert fmt.tool_version(str(home)) == "4.4.0"
    assert fmt.tool_version(str(tmp_path / "none")) == ""
    (home / "libs" / "kafka_2.13-4.3.1.jar").touch()  # two releases in one libs/: unknown
    assert fmt.tool_version(str(home)) == ""


@pytest.mark.parametrize(
    ("tool", "node", "refused"),
    [
        ("4.4.0", "4.4.0", False),
        ("4.4.0", None, False),
        ("4.4.0", "4.3.1", True),
        ("4.3.1", "4.4.0", True),
        ("", "4.4.0", True),
    ],
)
def test_only_the_release_the_node_runs_formats_it(tool: str, node: str | None, refused: bool) -> None:
    assert bool(fmt.tool_refusal(tool, "/opt/kafka", node)) == refused


def test_module_refuses_another_releases_tool_before_formatting(monkeypatch, capsys, controller, tmp_path) -> None:
    home = kafka_home(tmp_path, "kafka_2.13-4.4.0.jar")
    monkeypatch.setattr(fmt.subprocess, "run", lambda *a, **k: pytest.fail("the tool must not run"))
    for check in (False, True):
        out = run_module(
            monkeypatch,
            capsys,
            module_args(controller, kafka_home=str(home), kafka_version="4.3.1", _ansible_check_mode=check),
        )
        assert out["failed"] is True and "Kafka 4.4.0's storage tool" in out["msg"] and "runs 4.3.1" in out["msg"]
    assert not (controller.parent / "meta").exists()


def test_module_records_the_release_that_formatted_each_directory(monkeypatch, capsys, controller, tmp_path) -> None:
    home = kafka_home(tmp_path, "kafka_2.13-4.4.0.jar")
    record = tmp_path / "formatted-by.json"

    class Formatted:
        returncode, stdout, stderr = 0, "Formatting", ""

    def storage_tool(cmd, **_):
        assert cmd[cmd.index("-cp") + 1] == f"{home}/libs/*"
        own(controller.parent / "meta")
        return Formatted()

    monkeypatch.setattr(fmt.subprocess, "run", storage_tool)
    args = module_args(controller, kafka_home=str(home), kafka_version="4.4.0", record=str(record))
    out = run_module(monkeypatch, capsys, args)
    assert out["changed"] is True and out["tool_version"] == "4.4.0"
    assert json.loads(record.read_text()) == {str(controller.parent / "meta"): "4.4.0"} == out["formatted_by"]
    # Formatted: nothing runs, the record stays as it is.
    monkeypatch.setattr(fmt.subprocess, "run", lambda *a, **k: pytest.fail("the tool must not run"))
    again = run_module(monkeypatch, capsys, args)
    assert again["changed"] is False and again["formatted_by"] == out["formatted_by"]


# --- Kafka's own storage tool, from each 4.x archive in build/artifacts ---------------------------


@needs_archives
@each_4x_archive
def test_the_kip_1170_format_from_4_4_on_and_the_module_reads_both(archive: Path, tmp_path: Path) -> None:
    """Formatted by 4.4 or later, a controller's bootstrap metadata is in the zero checkpoint and no
    bootstrap.checkpoint is written (a 4.3 node cannot start on it); by 4.3, bootstrap.checkpoint. The
    module's own check after formatting accepts both."""
    version = archive.name.removeprefix("kafka_2.13-").removesuffix(".tgz")
    with tarfile.open(archive) as tar:
        tar.extractall(tmp_path, members=[m for m in tar.getmembers() if "/libs/" in m.name], filter="data")
    home = next(tmp_path.glob("kafka_2.13-*"))
    meta = tmp_path / "meta"
    conf = tmp_path / "controller.properties"
    conf.write_text(
        "process.roles=controller\nnode.id=101\ncontroller.listener.names=CONTROLLER\n"
        "listeners=CONTROLLER://127.0.0.1:19094\ncontroller.quorum.bootstrap.servers=127.0.0.1:19094\n"
        f"log.dirs={meta}\n"
    )
    params = {
        "java": "java",
        "java_opts": ["-Xmx128m", "-XX:TieredStopAtLevel=1"],
        "kafka_home": str(home),
        "config": str(conf),
        "cluster_id": CLUSTER,
        "quorum": "standalone",
    }
    assert fmt.tool_version(str(home)) == version
    subprocess.run(fmt.storage_command(params, ignore_formatted=False), capture_output=True, check=True, timeout=120)
    plan = fmt.plan_format([str(meta)], CLUSTER, 101)
    assert plan.formatted == [str(meta)] and plan.problems == []
    zero = (meta / "__cluster_metadata-0" / "00000000000000000000-0000000000.checkpoint").read_bytes()
    if tuple(int(x) for x in version.split(".")[:2]) >= (4, 4):
        assert not (meta / "bootstrap.checkpoint").exists() and b"metadata.version" in zero
    else:
        assert (meta / "bootstrap.checkpoint").exists() and b"metadata.version" not in zero


def test_the_scram_credentials_the_tool_prints_are_never_returned(monkeypatch, capsys, controller) -> None:
    """kafka-storage format prints the bootstrap records it writes: a SCRAM user's salt, stored and
    server keys, from which the password can be guessed offline."""

    class Printed:
        returncode, stderr = 0, ""
        stdout = (
            "Bootstrap metadata: BootstrapMetadata(records=[ApiMessageAndVersion(UserScramCredentialRecord("
            "name='admin', mechanism=2, salt=[49, 52], storedKey=[-86, -124], serverKey=[-58, -48], "
            "iterations=8192) at version 0)], metadataVersionLevel=33)"
        )

    def storage_tool(cmd, **_):
        own(controller.parent / "meta")
        return Printed()

    monkeypatch.setattr(fmt.subprocess, "run", storage_tool)
    out = run_module(monkeypatch, capsys, module_args(controller, scram_users=[{"name": "admin", "password": "Pw123"}]))
    shown = json.dumps(out)
    assert out["changed"] is True and "UserScramCredentialRecord(name='admin', <redacted>)" in out["stdout"]
    assert "storedKey" not in shown and "salt=" not in shown and "-86" not in shown
