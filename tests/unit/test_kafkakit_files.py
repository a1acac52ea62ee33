"""kafkakit_files, the module that writes a role's directories and small files in one run: real
ansible-playbook runs on this machine (local connection), and its staleness rule read directly."""

from __future__ import annotations

import base64
import json
import os
import stat
from pathlib import Path
from types import ModuleType

from tests.unit.support import plugin_files
from tests.unit.support.ansible_run import run_playbook

SECRET = "canary-9f3e2b"

PLAYBOOK = """
- name: Files of a demo role
  hosts: all
  gather_facts: false
  tasks:
    - name: Write them
      kafkakit_files:
        directories:
          - {{path: "{root}/conf", mode: "0750"}}
          - {{path: "{root}/data", mode: "0700", create_only: true}}
        files:
          - {{dest: "{root}/conf/plain.conf", content: "{plain}", mode: "0644"}}
          - {{dest: "{root}/conf/secret.conf", secret_content: "password={secret}\\n", mode: "0600"}}
          - {{dest: "{root}/conf/copy.key", src: "{root}/host.key", mode: "0600"}}
      register: demo
    - name: Show the result
      ansible.builtin.debug:
        msg: "RESULT {{{{ demo | to_json | b64encode }}}}"  # one word: never folded
"""


def run(tmp_path: Path, plain: str = "a=1\\n", *options: str) -> tuple[dict, str]:
    root = tmp_path / "root"
    (tmp_path / "inventory.ini").write_text("here\n")
    (tmp_path / "play.yml").write_text(PLAYBOOK.format(root=root, plain=plain, secret=SECRET))
    proc = run_playbook(tmp_path / "inventory.ini", tmp_path / "play.yml", *options, tmp_path=tmp_path, local=True)
    assert proc.returncode == 0, proc.stdout[-3000:]
    line = next(line for line in proc.stdout.splitlines() if "RESULT " in line)
    return json.loads(base64.b64decode(line.split("RESULT ", 1)[1].strip().strip("'\""))), proc.stdout


def test_writes_once_then_changes_nothing_and_mends_drift(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "host.key").write_text("KEY\n")
    first, _ = run(tmp_path)
    assert first["changed"] is True
    assert sorted(Path(p).name for p in first["changed_paths"]) == [
        "conf",
        "copy.key",
        "data",
        "plain.conf",
        "secret.conf",
    ]
    assert (root / "conf" / "plain.conf").read_text() == "a=1\n"
    assert (root / "conf" / "secret.conf").read_text() == f"password={SECRET}\n"
    assert (root / "conf" / "copy.key").read_text() == "KEY\n"
    assert stat.S_IMODE((root / "conf" / "secret.conf").stat().st_mode) == 0o600
    assert stat.S_IMODE((root / "conf").stat().st_mode) == 0o750

    second, _ = run(tmp_path)
    assert second["changed"] is False and second["changed_paths"] == []

    # A mode changed by hand is put back; a create_only directory is left as it is.
    os.chmod(root / "conf" / "plain.conf", 0o666)
    os.chmod(root / "data", 0o755)
    third, _ = run(tmp_path)
    assert [Path(p).name for p in third["changed_paths"]] == ["plain.conf"]
    assert stat.S_IMODE((root / "conf" / "plain.conf").stat().st_mode) == 0o644
    assert stat.S_IMODE((root / "data").stat().st_mode) == 0o755


def test_check_diff_shows_plain_text_and_never_the_secret(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "host.key").write_text("KEY\n")
    run(tmp_path)
    (root / "conf" / "secret.conf").write_text("password=old\n")
    result, out = run(tmp_path, "a=2\\n", "--check", "--diff", "-vvv")
    # Positive control: the plain file's change is in the diff, so the diff is printed at all.
    assert "+a=2" in out and "-a=1" in out
    assert sorted(Path(p).name for p in result["changed_paths"]) == ["plain.conf", "secret.conf"]
    assert SECRET not in out and "password=old" not in out
    assert "KEY" not in out
    # Check mode changed nothing.
    assert (root / "conf" / "plain.conf").read_text() == "a=1\n"


def load_module() -> ModuleType:
    """The module_utils file kafkakit_files (and kafkakit_principal_state) read the unit with."""
    return plugin_files.load("module_utils/kafkakit_units.py", "kafkakit_units")


def test_a_file_written_after_the_unit_started_is_newer(tmp_path: Path) -> None:
    newer_than = load_module().newer_than
    old, new = tmp_path / "old", tmp_path / "new"
    old.write_text("x")
    new.write_text("y")
    os.utime(old, (1000.0, 1000.0))
    os.utime(new, (2000.0, 2000.0))
    assert newer_than([str(old), str(new), str(tmp_path / "missing")], 1500.0) == [str(new)]
    # The start time has whole seconds: a file of the same second is not newer.
    assert newer_than([str(new)], 1999.0) == [str(new)]
    assert newer_than([str(new)], 2000.0) == []


def test_the_unit_state_is_read_from_one_systemctl_show() -> None:
    parse = load_module().parse_unit_state
    running = "ActiveState=active\nActiveEnterTimestamp=@1795907795\nUnitFileState=enabled\n"
    assert parse(running) == {"active": True, "enabled": True, "start": 1795907795.0}
    # A stopped unit keeps its last start time: it is not running since then.
    stopped = "ActiveState=inactive\nActiveEnterTimestamp=@1795907795\nUnitFileState=disabled\n"
    assert parse(stopped) == {"active": False, "enabled": False, "start": None}
    assert parse("ActiveState=inactive\nActiveEnterTimestamp=\nUnitFileState=\n")["enabled"] is False


VALIDATED = """
- name: A validated file
  hosts: all
  gather_facts: false
  tasks:
    - name: Write it
      kafkakit_files:
        files:
          - {{dest: "{root}/checked.conf", content: "{text}", mode: "0644", validate: "grep -q ^ok= %s"}}
"""


def test_a_file_the_validate_command_refuses_is_not_written(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "inventory.ini").write_text("here\n")
    play = tmp_path / "play.yml"
    play.write_text(VALIDATED.format(root=root, text="ok=1\\n"))
    accepted = run_playbook(tmp_path / "inventory.ini", play, tmp_path=tmp_path, local=True)
    assert accepted.returncode == 0, accepted.stdout[-3000:]
    assert (root / "checked.conf").read_text() == "ok=1\n"
    play.write_text(VALIDATED.format(root=root, text="broken\\n"))
    refused = run_playbook(tmp_path / "inventory.ini", play, tmp_path=tmp_path, local=True)
    assert refused.returncode != 0 and "refused the new" in refused.stdout, refused.stdout[-3000:]
    # The old file stays, and no temporary copy is left beside it.
    assert (root / "checked.conf").read_text() == "ok=1\n"
    assert sorted(p.name for p in root.iterdir()) == ["checked.conf"]


READ = """
- name: Read files back
  hosts: all
  gather_facts: false
  tasks:
    - name: Read
      kafkakit_files:
        read: {{held: "{root}/held.crt", missing: "{root}/none.crt"}}
      register: back
    - name: Show the result
      ansible.builtin.debug:
        msg: "RESULT {{{{ back | to_json | b64encode }}}}"
"""


def test_read_returns_each_files_text_and_null_for_a_missing_one(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "held.crt").write_text("-----BEGIN CERTIFICATE-----\nabc\n")
    (tmp_path / "inventory.ini").write_text("here\n")
    (tmp_path / "play.yml").write_text(READ.format(root=root))
    proc = run_playbook(tmp_path / "inventory.ini", tmp_path / "play.yml", tmp_path=tmp_path, local=True)
    assert proc.returncode == 0, proc.stdout[-3000:]
    line = next(line for line in proc.stdout.splitlines() if "RESULT " in line)
    result = json.loads(base64.b64decode(line.split("RESULT ", 1)[1].strip().strip("'\"")))
    assert result["read"] == {"held": "-----BEGIN CERTIFICATE-----\nabc\n", "missing": None}
    assert result["changed"] is False


CHECKED = """
- name: A checked jar and a link
  hosts: all
  gather_facts: false
  tasks:
    - name: Check them
      kafkakit_files:
        files:
          - {{dest: "{root}/agent.jar", sha256: "{digest}", mode: "0644"}}
        links:
          - {{dest: "{root}/current", src: "{root}/pkg-2", require: "{root}/pkg-2/VERSION"}}
      register: demo
    - name: Show the result
      ansible.builtin.debug:
        msg: "RESULT {{{{ demo | to_json | b64encode }}}}"
"""


def run_checked(tmp_path: Path, digest: str) -> dict:
    root = tmp_path / "root"
    (tmp_path / "inventory.ini").write_text("here\n")
    (tmp_path / "play.yml").write_text(CHECKED.format(root=root, digest=digest))
    proc = run_playbook(tmp_path / "inventory.ini", tmp_path / "play.yml", tmp_path=tmp_path, local=True)
    assert proc.returncode == 0, proc.stdout[-3000:]
    line = next(line for line in proc.stdout.splitlines() if "RESULT " in line)
    return json.loads(base64.b64decode(line.split("RESULT ", 1)[1].strip().strip("'\"")))


def test_a_checked_file_is_reported_until_it_matches_and_a_link_waits_for_its_target(tmp_path: Path) -> None:
    import hashlib

    root = tmp_path / "root"
    (root / "pkg-1").mkdir(parents=True)
    (root / "current").symlink_to(root / "pkg-1")
    digest = hashlib.sha256(b"jar bytes").hexdigest()

    # Nothing there yet: the jar is missing, the link's target has no marker: both reported, the
    # link left pointing at the old target.
    first = run_checked(tmp_path, digest)
    assert sorted(Path(p).name for p in first["mismatched"]) == ["agent.jar", "current"]
    assert first["changed"] is False and os.readlink(root / "current") == str(root / "pkg-1")

    # A jar of other content is reported too; nothing is written.
    (root / "agent.jar").write_bytes(b"other bytes")
    assert [Path(p).name for p in run_checked(tmp_path, digest)["mismatched"]] == ["agent.jar", "current"]
    assert (root / "agent.jar").read_bytes() == b"other bytes"

    # The right jar (its mode mended) and an installed target: nothing reported, the link moved.
    (root / "agent.jar").write_bytes(b"jar bytes")
    os.chmod(root / "agent.jar", 0o600)
    (root / "pkg-2").mkdir()
    (root / "pkg-2" / "VERSION").write_text("pkg-2\n")
    third = run_checked(tmp_path, digest)
    assert third["mismatched"] == []
    assert sorted(Path(p).name for p in third["changed_paths"]) == ["agent.jar", "current"]
    assert os.readlink(root / "current") == str(root / "pkg-2")
    assert stat.S_IMODE((root / "agent.jar").stat().st_mode) == 0o644

    assert run_checked(tmp_path, digest)["changed"] is False
