"""The promote phase of ops/rotate-certificates.yml on the controller's CA folder (the play on
localhost, run for real; --limit localhost keeps every other play off the fixture's hosts): a CA
that may sign one intermediate gets a new CA it cross-signs, so that host certificates of the new
CA verify against the old CA alone; a CA made with pathlen:0 is refused before anything changes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.unit.support.ansible_run import failure_msg, run_playbook

GOOD = Path(__file__).parent / "fixtures" / "preflight_good.yml"
PASSPHRASE = "placeholder"  # the fixture's kafka_pki_ca_passphrase


def openssl(*args: str, cwd: Path) -> str:
    return subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def make_ca(folder: Path, pathlen: int) -> Path:
    folder.mkdir(parents=True)
    ext = folder / "ca.cnf"
    ext.write_text(
        "[req]\ndistinguished_name=dn\n[dn]\n[v3]\n"
        f"basicConstraints=critical,CA:TRUE,pathlen:{pathlen}\nkeyUsage=critical,keyCertSign,cRLSign\n"
        "subjectKeyIdentifier=hash\n"
    )
    openssl("ecparam", "-name", "secp384r1", "-genkey", "-noout", "-out", "plain.key", cwd=folder)
    openssl("ec", "-in", "plain.key", "-aes256", "-passout", f"pass:{PASSPHRASE}", "-out", "ca.key", cwd=folder)
    openssl(
        "req", "-x509", "-new", "-key", "plain.key", "-subj", "/CN=kafkakit internal CA old", "-days", "30",
        "-config", "ca.cnf", "-extensions", "v3", "-out", "ca.crt", cwd=folder,
    )  # fmt: skip
    for name in ("plain.key", "ca.cnf"):
        (folder / name).unlink()
    return folder


def promote(ca_dir: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    # The fixture with localhost named (this python, for the crypto modules), so --limit keeps it;
    # the preflight then refuses localhost, an inventory host without dc or address.
    inv = yaml.safe_load(GOOD.read_text())
    inv["all"]["hosts"] = {"localhost": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}}
    path = tmp_path / "hosts.yml"
    path.write_text(yaml.safe_dump(inv, sort_keys=False))
    return run_playbook(
        path,
        "ops/rotate-certificates.yml",
        "-e",
        "rotate_phase=promote",
        "-e",
        f"kafka_pki_ca_dir={ca_dir}",
        "--limit",
        "localhost",
        tmp_path=tmp_path,
    )


def test_a_pathlen_0_ca_is_refused_and_nothing_changes(tmp_path: Path) -> None:
    ca_dir = make_ca(tmp_path / "pki", pathlen=0)
    before = (ca_dir / "ca.crt").read_bytes()
    done = promote(ca_dir, tmp_path)
    assert done.returncode != 0
    msg = str(failure_msg(done.stdout))
    assert "cannot cross-sign" in msg and "rotate_phase=introduce" in msg, msg
    assert sorted(p.name for p in ca_dir.iterdir()) == ["ca.crt", "ca.key"]
    assert (ca_dir / "ca.crt").read_bytes() == before


def test_promote_cross_signs_the_new_ca_so_the_old_one_alone_verifies_its_certificates(tmp_path: Path) -> None:
    ca_dir = make_ca(tmp_path / "pki", pathlen=1)
    old = (ca_dir / "ca.crt").read_bytes()
    done = promote(ca_dir, tmp_path)
    # The CA's play ran through; the preflight after it stops at localhost, no Kafka host of this
    # inventory, and nothing reaches the fixture's hosts.
    assert "PLAY [Preflight checks]" in done.stdout, done.stdout[-3000:] + done.stderr[-2000:]
    assert (ca_dir / "old" / "ca.crt").read_bytes() == old
    assert (ca_dir / "ca.crt").read_bytes() != old and not (ca_dir / "next").exists()
    cross = ca_dir / "ca-cross.crt"
    # The cross certificate is the new CA (its name and key), issued by the old one.
    subject = openssl("x509", "-noout", "-subject", "-in", "ca.crt", cwd=ca_dir).split("=", 1)[1]
    assert openssl("x509", "-noout", "-subject", "-in", str(cross), cwd=ca_dir).split("=", 1)[1] == subject
    assert openssl("x509", "-noout", "-pubkey", "-in", str(cross), cwd=ca_dir) == openssl(
        "x509", "-noout", "-pubkey", "-in", "ca.crt", cwd=ca_dir
    )
    # A host certificate of the new CA verifies against the old CA alone, through the cross
    # certificate, and against the new CA alone without it.
    openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "host.key", cwd=tmp_path)
    openssl("req", "-new", "-key", "host.key", "-subj", "/CN=dc1-kafka1", "-out", "host.csr", cwd=tmp_path)
    openssl(
        "x509", "-req", "-in", "host.csr", "-CA", str(ca_dir / "ca.crt"), "-CAkey", str(ca_dir / "ca.key"),
        "-passin", f"pass:{PASSPHRASE}", "-days", "5", "-out", "host.crt", cwd=tmp_path,
    )  # fmt: skip
    openssl("verify", "-CAfile", str(ca_dir / "old" / "ca.crt"), "-untrusted", str(cross), "host.crt", cwd=tmp_path)
    openssl("verify", "-CAfile", str(ca_dir / "ca.crt"), "host.crt", cwd=tmp_path)
    with pytest.raises(subprocess.CalledProcessError):  # positive control: not without the cross certificate
        openssl("verify", "-CAfile", str(ca_dir / "old" / "ca.crt"), "host.crt", cwd=tmp_path)

    # A re-run after the move makes no other CA and moves nothing.
    new = (ca_dir / "ca.crt").read_bytes()
    again = promote(ca_dir, tmp_path)
    assert "PLAY [Preflight checks]" in again.stdout, again.stdout[-3000:]
    assert (ca_dir / "ca.crt").read_bytes() == new and (ca_dir / "old" / "ca.crt").read_bytes() == old
