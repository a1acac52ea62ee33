"""The packages role on this machine (Debian, like the hosts): dpkg is asked once per host and run,
and a later call whose packages are all installed asks nothing and runs no apt."""

from __future__ import annotations

from pathlib import Path

from tests.unit.ansible_run import run_playbook

PLAYBOOK = """
- name: Two roles' packages, as site.yml asks for them
  hosts: all
  gather_facts: false
  tasks:
    - name: First role
      ansible.builtin.include_role:
        name: packages
      vars:
        packages_names: [bash, coreutils]
    - name: Second role, in a later play in a real run
      ansible.builtin.include_role:
        name: packages
      vars:
        packages_names: [dpkg]
    - name: Show what is known
      ansible.builtin.debug:
        msg: "known {{ packages_installed | length }} bash={{ 'bash' in packages_installed }}"
"""


def test_dpkg_is_asked_once_and_apt_not_at_all_when_nothing_is_missing(tmp_path: Path) -> None:
    (tmp_path / "inventory.ini").write_text("here\n")
    (tmp_path / "play.yml").write_text(PLAYBOOK)
    proc = run_playbook(tmp_path / "inventory.ini", tmp_path / "play.yml", tmp_path=tmp_path, local=True)
    out = proc.stdout
    assert proc.returncode == 0, out[-3000:]
    listed = out.split("TASK [packages : List the installed packages]")
    assert len(listed) == 3, "one listing task per call"
    # The first call asks dpkg; the second is skipped: the list is a fact of the host by then.
    assert "ok: [here]" in listed[1].split("TASK [")[0]
    assert "skipping: [here]" in listed[2].split("TASK [")[0]
    # Nothing missing: apt never runs.
    apt = out.split("TASK [packages : Install the missing packages]")
    assert len(apt) == 3 and all("skipping: [here]" in part.split("TASK [")[0] for part in apt[1:])
    assert "bash=True" in out
