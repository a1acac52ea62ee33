"""kafkakit_marked_hosts, the roll's choice of hosts: run inside ansible-playbook, where hostvars
are Ansible's lazy objects and the markers are set_fact results, as in the roles."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ANSIBLE_PLAYBOOK = Path(sys.executable).parent / "ansible-playbook"

PLAY = """\
- name: Mark some hosts, as a role does before its roll
  hosts: all
  gather_facts: false
  tasks:
    - name: Mark
      ansible.builtin.set_fact:
        demo_restart_needed: "{{ inventory_hostname in ['h1', 'h3'] }}"
      when: inventory_hostname != 'h4'

    - name: Show the marked hosts
      ansible.builtin.debug:
        msg: "marked={{ ansible_play_hosts | kafkakit_marked_hosts(hostvars, 'demo_restart_needed') | join(',') }}"
      run_once: true
"""


def test_the_hosts_whose_marker_is_true_and_only_those(tmp_path: Path) -> None:
    (tmp_path / "play.yml").write_text(PLAY)
    (tmp_path / "hosts.ini").write_text("h1\nh2\nh3\nh4\n")
    env = {
        **os.environ,
        "ANSIBLE_CONFIG": str(REPO / "ansible/ansible.cfg"),
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_LOCAL_TEMP": str(tmp_path / "tmp"),
    }
    env.pop("ANSIBLE_FORCE_COLOR", None)
    done = subprocess.run(
        [
            str(ANSIBLE_PLAYBOOK),
            "-i",
            str(tmp_path / "hosts.ini"),
            "-c",
            "local",
            "-e",
            f"ansible_python_interpreter={sys.executable}",
            str(tmp_path / "play.yml"),
        ],
        cwd=REPO / "ansible",
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    # h2 is marked false, h4 never marked (its role skipped the step): neither rolls.
    assert "marked=h1,h3" in done.stdout, done.stdout
