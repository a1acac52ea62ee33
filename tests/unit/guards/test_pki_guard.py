"""kafka_pki refuses to sign with a CA the hosts do not already know (issue 16): an empty or
wrong kafka_pki_ca_dir would reissue every certificate and replace every truststore. The rule
on real certificates, then the role's guard through ansible-playbook on local "hosts" whose
kafka_pki_dir are folders under tmp_path."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from kafkakit.guards.pki import Held, controller_cas, new_ca_refusal
from tests.unit.support.ansible_run import REPO, run_playbook
from tests.unit.support.ansible_run import failure_text as failure_msg
from tests.unit.support.pki import Ca


@pytest.fixture(scope="module")
def cas() -> dict[str, Ca]:
    # The same common name: a second kafkakit CA differs by its key (and creation time).
    return {
        "old": Ca("kafkakit internal CA 2026-01-01"),
        "new": Ca("kafkakit internal CA 2026-11-24"),
        "plain": Ca("customer CA", key_ids=False),
        "plain2": Ca("customer CA 2", key_ids=False),
    }


def refusal(ca_dir: Path, held: dict[str, Held], confirmation: object = "") -> str:
    return new_ca_refusal(str(ca_dir), controller_cas(str(ca_dir)), held, confirmation)


def test_a_fresh_deployment_creates_the_ca_without_asking(tmp_path: Path) -> None:
    assert refusal(tmp_path / "pki", {"h1": Held(), "h2": Held()}) == ""


def test_hosts_of_the_ca_in_the_folder_pass(tmp_path: Path, cas: dict[str, Ca]) -> None:
    ca = cas["old"].store(tmp_path / "pki")
    held = {"h1": Held(cas["old"].issue("h1"), cas["old"].pem), "h2": Held()}  # h2: a new host
    assert refusal(ca, held) == ""


def test_an_empty_folder_while_hosts_hold_certificates_is_refused(tmp_path: Path, cas: dict[str, Ca]) -> None:
    ca = tmp_path / "pki"
    held = {"h1": Held(cas["old"].issue("h1"), cas["old"].pem), "h2": Held(), "h3": Held(None, cas["old"].pem)}
    msg = refusal(ca, held)
    assert msg.startswith(f"refusing to create a new CA in {ca}: it holds no ca.crt, but 2 host(s) hold")
    assert "(kafkakit internal CA 2026-01-01): h1, h3." in msg
    assert "replaces every truststore" in msg and "the next roll partitions the cluster" in msg
    assert "ops/rotate-ca.yml" in msg
    assert msg.endswith(f"to replace the CA anyway: -e kafka_pki_new_ca_confirm={ca}")
    assert "\n" not in msg
    # Confirmed by the folder's path (trailing slash or not): go ahead.
    assert refusal(ca, held, str(ca)) == refusal(ca, held, f"{ca}/") == ""
    # Anything else confirms nothing.
    for wrong in ("yes", True, str(tmp_path)):
        assert f"kafka_pki_new_ca_confirm={wrong} does not name kafka_pki_ca_dir ({ca})" in refusal(ca, held, wrong)


def test_a_folder_holding_another_ca_is_refused(tmp_path: Path, cas: dict[str, Ca]) -> None:
    # Same common name, another key: a wiped workspace's new CA, or another cluster's.
    ca = cas["new"].store(tmp_path / "pki")
    held = {"h1": Held(cas["old"].issue("h1"), cas["old"].pem)}
    msg = refusal(ca, held)
    assert msg.startswith(f"refusing to sign with the CA in {ca} (kafkakit internal CA 2026-11-24): 1 host(s)"), msg
    assert refusal(ca, held, str(ca)) == ""


def test_a_bundle_that_shares_no_ca_is_refused(tmp_path: Path, cas: dict[str, Ca]) -> None:
    ca = cas["new"].store(tmp_path / "pki")
    assert "h1" in refusal(ca, {"h1": Held(None, cas["old"].pem)})


def test_a_rotation_passes_each_phase(tmp_path: Path, cas: dict[str, Ca]) -> None:
    ca = cas["old"].store(tmp_path / "pki")
    on_old = {"h1": Held(cas["old"].issue("h1"), cas["old"].pem)}
    # introduce: the next CA beside the signing one.
    cas["new"].store(ca / "next")
    assert refusal(ca, on_old) == ""
    # promote: the old CA in old/, the new one signs; hosts still hold the old certificates.
    (ca / "next" / "ca.crt").unlink()
    cas["old"].store(ca / "old")
    cas["new"].store(ca)
    assert refusal(ca, on_old) == ""
    # retire: old/ removed once every host holds a new certificate and trusts both.
    (ca / "old" / "ca.crt").unlink()
    on_new = {"h1": Held(cas["new"].issue("h1"), cas["old"].pem + cas["new"].pem)}
    assert refusal(ca, on_new) == ""
    assert "h1" in refusal(ca, on_old)  # a host the rotation missed is not signed over


def test_cas_without_key_identifiers_are_told_apart_by_name(tmp_path: Path, cas: dict[str, Ca]) -> None:
    ca = cas["plain"].store(tmp_path / "pki")
    assert refusal(ca, {"h1": Held(cas["plain"].issue("h1"), cas["plain"].pem)}) == ""
    assert "(customer CA 2): h1" in refusal(ca, {"h1": Held(cas["plain2"].issue("h1"), None)})


def test_an_unreadable_certificate_counts_as_another_ca(tmp_path: Path) -> None:
    assert "(an unreadable certificate): h1" in refusal(tmp_path / "pki", {"h1": Held("garbage", None)})


def test_an_empty_ca_dir_is_refused() -> None:
    assert new_ca_refusal("", [], {}, "").startswith("kafka_pki_ca_dir is empty")


# --- the role's guard through ansible-playbook ---------------------------------------------

PLAY = """\
- name: kafka_pki's guard, as the role runs it first
  hosts: all
  gather_facts: false
  tasks:
    - name: The guard
      ansible.builtin.include_role:
        name: kafka_pki
        tasks_from: guard.yml

    - name: Reached only when the guard passed
      ansible.builtin.debug:
        msg: past-the-guard
"""


def run_guard(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "play.yml").write_text(PLAY)
    hosts = {h: {"kafka_pki_dir": str(tmp_path / h)} for h in ("h1", "h2")}
    inv = {"all": {"hosts": hosts, "vars": {"kafka_pki_ca_dir": str(tmp_path / "pki")}}}
    (tmp_path / "hosts.yml").write_text(yaml.safe_dump(inv))
    return run_playbook(tmp_path / "hosts.yml", tmp_path / "play.yml", *args, tmp_path=tmp_path, local=True)


def test_the_role_guard_passes_a_fresh_deployment(tmp_path: Path) -> None:
    done = run_guard(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("past-the-guard") == 2


def test_the_role_guard_refuses_an_empty_ca_dir_while_a_host_holds_a_certificate(
    tmp_path: Path, cas: dict[str, Ca]
) -> None:
    (tmp_path / "h2").mkdir()
    (tmp_path / "h2" / "host.crt").write_text(cas["old"].issue("h2"))
    done = run_guard(tmp_path)
    assert done.returncode != 0, done.stdout
    msg = failure_msg(done.stdout)
    assert msg.startswith(f"refusing to create a new CA in {tmp_path / 'pki'}: it holds no ca.crt, but 1 host(s)")
    assert msg.endswith(f"-e kafka_pki_new_ca_confirm={tmp_path / 'pki'}"), msg
    assert "past-the-guard" not in done.stdout  # neither host went on

    # Positive control: the same hosts, confirmed by the folder's path.
    done = run_guard(tmp_path, "-e", f"kafka_pki_new_ca_confirm={tmp_path / 'pki'}")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("past-the-guard") == 2


def test_the_role_runs_its_guard_before_anything_else() -> None:
    tasks = yaml.safe_load((REPO / "roles/kafka_pki/tasks/main.yml").read_text())
    assert tasks[0].get("ansible.builtin.import_tasks") == "guard.yml"
    guard = yaml.safe_load((REPO / "roles/kafka_pki/tasks/guard.yml").read_text())
    check = guard[-1]
    assert check["any_errors_fatal"] is True and "ignore_errors" not in check
