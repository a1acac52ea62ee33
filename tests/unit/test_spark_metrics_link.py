"""The spark role's metrics file (roles/spark/tasks/metrics.yml), run on this machine: a folder of
the spark user's, the file made there once and empty, and a link to it in the node exporter's
textfile folder, which the role leaves as kafka_pki made it. A second run changes nothing, also
once a driver has replaced the file; without a textfile folder there is no link."""

from __future__ import annotations

import getpass
import grp
import re
import stat
import sys
from pathlib import Path

import pytest

from tests.unit.support.ansible_run import REPO, run_playbook
from tests.unit.support.task_files import all_tasks

sys.path.insert(0, str(REPO / "spark-jobs"))

from kafkakit_jobs import cdc_metrics  # noqa: E402

USER = getpass.getuser()

# The task file with the role's worked-out variables (its file's name), without the role's
# dependency on kafka_common, whose arguments describe a real host.
PLAYBOOK = f"""
- name: The spark role's metrics file, as the master gets it
  hosts: all
  gather_facts: false
  vars_files: ["{REPO}/roles/spark/vars/main.yml"]
  tasks:
    - name: Metrics file and link
      ansible.builtin.include_tasks: "{REPO}/roles/spark/tasks/metrics.yml"
"""


def deploy(tmp_path: Path, textfile: str) -> dict[str, int]:
    (tmp_path / "inventory.ini").write_text("here\n")
    (tmp_path / "play.yml").write_text(PLAYBOOK)
    extra = [
        "-e",
        f"spark_user={USER}",
        "-e",
        f"spark_metrics_dir={tmp_path / 'spark-metrics'}",
        "-e",
        f"spark_metrics_textfile_dir={textfile}",
    ]
    proc = run_playbook(tmp_path / "inventory.ini", tmp_path / "play.yml", *extra, tmp_path=tmp_path, local=True)
    assert proc.returncode == 0, proc.stdout[-3000:]
    recap = re.search(r"here\s+:\s+ok=(\d+)\s+changed=(\d+)", proc.stdout)
    assert recap, proc.stdout[-3000:]
    return {"ok": int(recap.group(1)), "changed": int(recap.group(2))}


@pytest.fixture
def textfile(tmp_path: Path) -> Path:
    """The node exporter's textfile folder as kafka_pki makes it, with its own file."""
    folder = tmp_path / "node-exporter"
    folder.mkdir(mode=0o755)
    (folder / "kafkakit-certificates.prom").write_text("# kafka_pki's\n")
    return folder


def test_the_file_is_made_once_in_sparks_folder_and_linked_from_the_textfile_folder(tmp_path: Path, textfile: Path):
    if USER not in {g.gr_name for g in grp.getgrall()}:
        pytest.skip(f"no group named {USER}, as the spark user has one")
    before = textfile.stat()
    assert deploy(tmp_path, str(textfile))["changed"] == 3
    own = tmp_path / "spark-metrics"
    target = own / "kafkakit-cdc.prom"
    link = textfile / "kafkakit-cdc.prom"
    assert stat.S_IMODE(own.stat().st_mode) == 0o755 and own.owner() == USER
    assert target.read_text() == "" and stat.S_IMODE(target.stat().st_mode) == 0o644 and target.owner() == USER
    assert link.is_symlink() and link.resolve() == target
    # kafka_pki's folder: same mode, owner and files, but the link.
    after = textfile.stat()
    assert (after.st_mode, after.st_uid, after.st_gid) == (before.st_mode, before.st_uid, before.st_gid)
    assert sorted(p.name for p in textfile.iterdir()) == ["kafkakit-cdc.prom", "kafkakit-certificates.prom"]

    assert deploy(tmp_path, str(textfile))["changed"] == 0
    # A driver writes through the link (temporary file and rename in its folder); the role keeps it.
    cdc_metrics.MetricsFile(link, "shop.public.orders", "/srv/spark/cdc/orders", now=100.0)
    written = target.read_text()
    assert "kafkakit_cdc_progress_timestamp_seconds" in written
    assert deploy(tmp_path, str(textfile))["changed"] == 0
    assert target.read_text() == written and link.resolve() == target


def test_no_textfile_folder_no_link(tmp_path: Path):
    if USER not in {g.gr_name for g in grp.getgrall()}:
        pytest.skip(f"no group named {USER}, as the spark user has one")
    assert deploy(tmp_path, "")["changed"] == 2
    assert (tmp_path / "spark-metrics" / "kafkakit-cdc.prom").read_text() == ""


TEXTFILE_NAMES = ("kafka_pki_metrics_dir", "textfile_dir", "/var/lib/prometheus/node-exporter")


def test_kafka_pki_alone_makes_the_textfile_folder():
    """Two roles giving one folder different modes flip it on every run (site.yml's second run
    would report changes): every task that makes a directory and names the textfile folder is kafka_pki's."""
    makers = []
    for t in all_tasks():
        body = t.task
        if body.get("ansible.builtin.file", body.get("file", {})).get("state") == "directory":
            made = str(body.get("ansible.builtin.file", body.get("file"))["path"])
        elif "kafkakit_files" in body:
            made = str(body["kafkakit_files"].get("directories", ""))
        else:
            continue
        if any(name in made for name in TEXTFILE_NAMES):
            makers.append(str(t.source.relative_to(REPO)))
    assert makers and set(makers) == {"roles/kafka_pki/tasks/main.yml"}, makers
