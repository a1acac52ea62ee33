"""The playbooks grouped by purpose (ansible/: deploy and verify; ansible/ops/: day-2 operations;
ansible/lab/: the lab and the bench), and every place that names one names a file that exists."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import yaml

from tests.unit.support.ansible_run import ANSIBLE_DIR, ANSIBLE_PLAYBOOK, REPO, run_playbook

# This file's short names for the checkout and ansible/, in its many paths.
ROOT = REPO
ANSIBLE = ANSIBLE_DIR

LAYOUT = {
    ".": {"site.yml", "verify.yml", "preflight.yml", "monitoring.yml", "spark.yml"},
    "ops": {
        "rolling-restart.yml",
        "upgrade.yml",
        "scale-out.yml",
        "scale-in.yml",
        "rotate-certificates.yml",
        "rotate-ca.yml",
        "retire-ca.yml",
        "dr-drill.yml",
        "add-controller.yml",
        "connect-restart-failed.yml",
        "remove-controller.yml",
        "replace-controller.yml",
        "recover-broker.yml",
        "recover-zookeeper.yml",
        "migrate-to-kraft.yml",
        "rollback-to-zookeeper.yml",
    },
    "lab": {"lab-up.yml", "source-db.yml", "lab-down.yml", "bench-listener.yml"},
}
# Files of ansible/ and ansible/lab/ that are not playbooks.
NOT_PLAYBOOKS = {"lab/lab-config.yml"}


def playbooks() -> list[Path]:
    found = [p for folder in LAYOUT for p in (ANSIBLE / folder).glob("*.yml")]
    return sorted(p for p in found if str(p.relative_to(ANSIBLE)) not in NOT_PLAYBOOKS)


def test_the_playbooks_are_grouped_by_purpose():
    assert {folder: {p.name for p in (ANSIBLE / folder).glob("*.yml")} - {"lab-config.yml"} for folder in LAYOUT} == (
        LAYOUT
    )


# --- every mention names an existing playbook -----------------------------------------------

# `ansible-playbook [options] <playbook>...`, the Makefile's `$(ANSIBLE) <playbook>`, and
# `import_playbook: <playbook>`. Commands run from ansible/ (the kit's way, ansible.cfg there);
# a path starting with ansible/ is from the top of the checkout.
COMMAND = re.compile(r"(?:ansible-playbook|\$\(ANSIBLE\))([^\n`#;&|)]*)")
IMPORT = re.compile(r"import_playbook:\s*([^\s`]+\.yml)")
TAKES_VALUE = {"-i", "--inventory", "-e", "--extra-vars", "-l", "--limit", "-t", "--tags", "--vault-password-file"}


def documents() -> list[Path]:
    return [
        ROOT / "README.md",
        ROOT / "Makefile",
        *sorted((ROOT / "docs").glob("*.md")),
        *sorted((ROOT / "roles").glob("*/README.md")),
        *sorted((ROOT / ".github/workflows").glob("*.yml")),
    ]


def mentioned_playbooks(text: str) -> list[str]:
    found = []
    for match in COMMAND.finditer(text):
        try:
            words = shlex.split(match.group(1))
        except ValueError:
            words = match.group(1).split()
        for before, word in zip(["", *words], words, strict=False):
            if word.endswith(".yml") and before not in TAKES_VALUE and not word.startswith("-"):
                found.append(word)
    return found + IMPORT.findall(text)


def resolve(path: str) -> Path:
    return ROOT / path if path.startswith("ansible/") else ANSIBLE / path


def test_the_mention_finder_reads_commands_with_options():
    text = (
        "cd ansible && ansible-playbook -i ../inventories/aws ops/upgrade.yml -e roll_dc=dc1  # note\n"
        "\t@$(ANSIBLE) lab/lab-up.yml -e lab_image=x\n"
        "`ansible-playbook --check --diff site.yml` and ansible-playbook -i inventories/aws ansible/verify.yml\n"
    )
    assert mentioned_playbooks(text) == ["ops/upgrade.yml", "lab/lab-up.yml", "site.yml", "ansible/verify.yml"]


@pytest.mark.parametrize("doc", documents(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_playbook_a_document_runs_exists(doc):
    missing = [p for p in mentioned_playbooks(doc.read_text()) if not resolve(p).is_file()]
    assert missing == [], f"{doc.relative_to(ROOT)} names playbooks that do not exist: {missing}"


def test_the_documents_name_the_moved_playbooks():
    text = "\n".join(doc.read_text() for doc in documents())
    named = {resolve(p).resolve() for p in mentioned_playbooks(text)}
    for path in ("ops/rolling-restart.yml", "ops/upgrade.yml", "ops/rotate-ca.yml", "lab/lab-up.yml"):
        assert (ANSIBLE / path).resolve() in named


@pytest.mark.parametrize("playbook", playbooks(), ids=lambda p: str(p.relative_to(ANSIBLE)))
def test_every_import_playbook_resolves_from_its_own_folder(playbook):
    plays = yaml.safe_load(playbook.read_text()) or []
    imports = [play["ansible.builtin.import_playbook"] for play in plays if "ansible.builtin.import_playbook" in play]
    assert [i for i in imports if not (playbook.parent / i).is_file()] == []


def test_the_integration_tests_run_existing_playbooks():
    calls = re.compile(r"""(?:run_playbook|playbook_process)\(\s*"([^"]+)"|^\s*roll = \("([^"]+)\"""", re.M)
    named = [
        a or b
        for path in sorted((ROOT / "tests/integration").rglob("*.py"))
        for a, b in calls.findall(path.read_text())
    ]
    assert len(named) >= 8
    assert [p for p in named if not (ANSIBLE / p).is_file()] == []


# --- paths that do not depend on where the playbook sits ------------------------------------


def imported_playbooks() -> set[Path]:
    out = set()
    for playbook in playbooks():
        for play in yaml.safe_load(playbook.read_text()) or []:
            if "ansible.builtin.import_playbook" in play:
                out.add((playbook.parent / play["ansible.builtin.import_playbook"]).resolve())
    return out


USES_PLAYBOOK_DIR = re.compile(r"\{\{[^}]*\bplaybook_dir\b")


def uses_playbook_dir(path: Path) -> bool:
    return bool(USES_PLAYBOOK_DIR.search(path.read_text()))


def test_roles_and_imported_playbooks_do_not_build_paths_on_playbook_dir():
    # A role runs under playbooks of ansible/, ansible/ops/, ...: it anchors on role_path, and a
    # playbook others import on roles_path or the inventory. Only the lab playbooks and the DR
    # drill's fallback (never imported, their folder fixed) use playbook_dir.
    users = sorted(
        str(p.relative_to(ROOT))
        for p in [*(ROOT / "roles").rglob("*.yml"), *imported_playbooks()]
        if uses_playbook_dir(p)
    )
    assert users == []
    assert {p.name for p in playbooks() if uses_playbook_dir(p)} <= {"lab-up.yml", "lab-down.yml", "dr-drill.yml"}


@pytest.mark.skipif(not ANSIBLE_PLAYBOOK.exists(), reason="no ansible-playbook beside this python")
def test_every_playbook_passes_the_syntax_check_from_ansible(tmp_path):
    # From ansible/ with its ansible.cfg: the roles, modules and filters resolve for the ops/ and
    # lab/ playbooks too (ansible.cfg's paths are relative to ansible.cfg, not to a playbook).
    names = [str(p.relative_to(ANSIBLE)) for p in playbooks()]
    done = run_playbook("localhost,", "--syntax-check", *names, tmp_path=tmp_path, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
