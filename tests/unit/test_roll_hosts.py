"""The roll's choice of hosts (filters of ansible/plugins/filter/kafkakit.py): kafkakit_marked_hosts
run inside ansible-playbook, where hostvars are Ansible's lazy objects and the markers are set_fact
results, as in the roles; kafkakit_roll_waves, one host per data centre in each wave."""

from __future__ import annotations

from pathlib import Path

from tests.unit.support import plugin_files
from tests.unit.support.ansible_run import run_playbook

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
    done = run_playbook(tmp_path / "hosts.ini", tmp_path / "play.yml", tmp_path=tmp_path, local=True)
    assert done.returncode == 0, done.stdout + done.stderr
    # h2 is marked false, h4 never marked (its role skipped the step): neither rolls.
    assert "marked=h1,h3" in done.stdout, done.stdout


def test_roll_waves_take_one_host_per_data_centre_in_each_dc_order() -> None:
    filters = plugin_files.load("filter/kafkakit.py", "kafkakit_filters")
    kafkakit_roll_waves = filters.kafkakit_roll_waves
    hostvars = {h: {"dc": h.split("-")[0]} for h in ["dc1-a", "dc1-b", "dc1-c", "dc2-a", "dc2-b"]}
    order = ["dc1-b", "dc1-c", "dc1-a", "dc2-b", "dc2-a"]
    assert kafkakit_roll_waves(order, hostvars) == [["dc1-b", "dc2-b"], ["dc1-c", "dc2-a"], ["dc1-a"]]
    assert kafkakit_roll_waves([], hostvars) == []
