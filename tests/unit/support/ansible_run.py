"""ansible-playbook run from a unit test: the kit's own ansible.cfg and plugins, from ansible/, on
an inventory the test wrote to tmp_path, and the failed task's message read back from its output;
and a snippet of code run in a fresh python with Ansible's plugin loader set up the same way."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Mapping
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[3]
ANSIBLE_DIR = REPO / "ansible"
# The one installed beside this python (the venv's), whatever PATH holds.
ANSIBLE_PLAYBOOK = Path(sys.executable).parent / "ansible-playbook"


def run_playbook(
    inventory: Path | str,
    *args: Path | str,
    tmp_path: Path,
    local: bool = False,
    timeout: float = 120,
    env: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """`ansible-playbook -i <inventory> [-c local ...] <args>` from ansible/, whatever its outcome.

    `args` hold the playbook(s) and options, in order. `local` runs every host on this machine with
    this python, so modules find the venv's packages. `env` adds to (or overrides) the environment.
    """
    run_env = {
        **os.environ,
        "ANSIBLE_CONFIG": str(ANSIBLE_DIR / "ansible.cfg"),
        # Plain text to match against, and Ansible's temp files kept out of the home folder.
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_LOCAL_TEMP": str(tmp_path / "ansible-tmp"),
        **(env or {}),
    }
    run_env.pop("ANSIBLE_FORCE_COLOR", None)  # it would win over ANSIBLE_NOCOLOR
    connection = ["-c", "local", "-e", f"ansible_python_interpreter={sys.executable}"] if local else []
    return subprocess.run(
        [str(ANSIBLE_PLAYBOOK), "-i", str(inventory), *connection, *map(str, args)],
        cwd=ANSIBLE_DIR,
        env=run_env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def failure_msg(stdout: str) -> object:
    """The `msg` of the first failed task, parsed from the yaml result format (ansible.cfg): a
    string, or whatever the task's msg was (a list of problems, for the preflight)."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if "FAILED! =>" in line)
    block = []
    for line in lines[start + 1 :]:
        if not line.strip():
            break
        block.append(line)
    return yaml.safe_load(textwrap.dedent("\n".join(block)))["msg"]


def failure_text(stdout: str) -> str:
    """failure_msg as text, for guards whose message is one string."""
    return str(failure_msg(stdout))


def run_in_ansible(code: str) -> dict:
    """`code` in a fresh python with the kit's ansible.cfg and Ansible's plugin loader set up as
    ansible-playbook sets it up; what it prints last, as JSON."""
    prelude = textwrap.dedent(
        """
        import json, sys
        sys.path.insert(0, {repo!r})
        from ansible.plugins.loader import init_plugin_loader
        from tests.unit.support.plugin_files import load
        init_plugin_loader()
        """
    ).format(repo=str(REPO))
    proc = subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)],
        cwd=ANSIBLE_DIR,
        env={"ANSIBLE_CONFIG": str(ANSIBLE_DIR / "ansible.cfg"), "PATH": "/usr/bin:/bin", "HOME": "/tmp"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.splitlines()[-1])
