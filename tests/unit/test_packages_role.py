"""The packages role on this machine (Debian, like the hosts): dpkg is asked once per host and run,
and a later call whose packages are all installed asks nothing and runs no apt."""

from __future__ import annotations

from pathlib import Path

from tests.unit.support.ansible_run import run_playbook

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
    include = "TASK [packages : List the installed packages and install the missing ones]"
    calls = out.split(include)
    assert len(calls) == 3, "one include per call"
    # The first call asks dpkg and finds nothing to install; the second includes nothing at all:
    # the list is a fact of the host by then and holds its package.
    first, second = calls[1], calls[2]
    assert "TASK [packages : List the installed packages]" in first
    assert "ok: [here]" in first.split("TASK [packages : List the installed packages]")[1].split("TASK [")[0]
    assert "skipping: [here]" in first.split("TASK [packages : Install the missing packages]")[1].split("TASK [")[0]
    assert "skipping: [here]" in second.split("TASK [")[0]
    assert "TASK [packages : List the installed packages]" not in second
    assert "TASK [packages : Install the missing packages]" not in second
    assert "bash=True" in out
