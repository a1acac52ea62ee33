"""When kafka_pki keeps a host's certificate and skips the signing request (roles/kafka_pki/vars/main.yml).

The role's own expression is evaluated by ansible-playbook over hosts that each hold what the
tasks would have registered: the certificate read from the host, the signing CA, the host key. One
host holds a certificate to keep; each other host differs from it in one respect only, which must
make the role sign a new one.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import json
import time
from pathlib import Path

import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tests.unit.support import plugin_files
from tests.unit.support.ansible_run import REPO, run_playbook

NOW = dt.datetime.now(dt.UTC)
HOST_KEY = ec.generate_private_key(ec.SECP256R1())


def make_ca(name: str) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(NOW - dt.timedelta(days=1))
        .not_valid_after(NOW + dt.timedelta(days=3650))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return key, cert


SIGNING_CA = make_ca("signing CA")
OTHER_CA = make_ca("another CA")


def host_cert(name: str, days: int = 365, ca: tuple = SIGNING_CA) -> str:
    ca_key, ca_cert = ca
    sans = [x509.IPAddress(ipaddress.ip_address("10.99.0.11")), x509.DNSName(name)]
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
        .issuer_name(ca_cert.subject)
        .public_key(HOST_KEY.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(NOW - dt.timedelta(days=1))
        .not_valid_after(NOW + dt.timedelta(days=days))
        .add_extension(x509.SubjectAlternativeName(sans), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    return cert.public_bytes(serialization.Encoding.PEM).decode()


# Host name -> what differs from a certificate to keep (issued to the host, by the signing CA, for
# the host's key and addresses, valid for a year).
RENEW = {
    "forced": {"kafka_pki_force_renew": True},
    "due": {"cert": {"days": 10}},
    "other_ca": {"cert": {"ca": OTHER_CA}},
    "moved": {"private_ip": "10.99.0.12"},
    "more_names": {"private_dns": "broker.example.internal"},
    "new_key": {"kafka_pki_key": {"fingerprint": {"sha256": "44:55:66"}}},
    "none_yet": {"kafka_pki_held": {"read": {"current": None}}},
}


def host_vars(name: str, change: dict) -> dict:
    pem = host_cert(name, **change.get("cert", {}))
    hv = {
        "private_ip": "10.99.0.11",
        "ansible_connection": "local",
        "kafka_pki_held": {"read": {"current": pem}},
        # The host key's fingerprint as community.crypto reads it from the certificate.
        "kafka_pki_key": {
            "fingerprint": {
                "sha256": "{{ (kafka_pki_held.read.current"
                " | community.crypto.x509_certificate_info).public_key_fingerprints.sha256 }}"
            }
        },
    }
    return hv | {key: value for key, value in change.items() if key != "cert"}


def test_only_a_matching_valid_certificate_of_the_signing_ca_is_kept(tmp_path: Path) -> None:
    hosts = {"keep": host_vars("keep", {})} | {name: host_vars(name, change) for name, change in RENEW.items()}
    # The role's defaults as inventory group variables: below host variables, as role defaults are.
    defaults = yaml.safe_load((REPO / "roles/kafka_pki/defaults/main.yml").read_text())
    (tmp_path / "ca").mkdir()
    (tmp_path / "ca" / "ca.crt").write_bytes(SIGNING_CA[1].public_bytes(serialization.Encoding.PEM))
    defaults["kafka_pki_ca_dir"] = str(tmp_path / "ca")
    (tmp_path / "hosts.yml").write_text(yaml.safe_dump({"all": {"hosts": hosts, "vars": defaults}}))
    play = [
        {
            "name": "Evaluate kafka_pki_keep",
            "hosts": "all",
            "gather_facts": False,
            "vars_files": [str(REPO / "roles/kafka_pki/vars/main.yml")],
            "tasks": [
                {
                    "name": "Report",
                    "ansible.builtin.debug": {
                        "msg": "KEEP {{ {inventory_hostname: kafka_pki_keep | bool} | to_json }}"
                    },
                }
            ],
        }
    ]
    (tmp_path / "play.yml").write_text(yaml.safe_dump(play))
    proc = run_playbook(tmp_path / "hosts.yml", tmp_path / "play.yml", tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    kept: dict[str, bool] = {}
    for line in proc.stdout.splitlines():
        if "KEEP {" in line:
            kept |= json.loads(line.split("KEEP ", 1)[1].strip().strip("'\""))
    assert kept == {"keep": True} | dict.fromkeys(RENEW, False), kept


def test_a_certificate_is_kept_only_while_valid_for_the_renewal_window() -> None:
    """kafkakit_valid_for_days, the expression's renewal-window check, on its own."""
    filters = plugin_files.load("filter/kafkakit.py", "kafkakit_filters")
    in_ten_days = dt.datetime.fromtimestamp(time.time() + 10 * 86400, dt.UTC).strftime("%Y%m%d%H%M%SZ")
    assert filters.kafkakit_valid_for_days(in_ten_days, 9)
    assert filters.kafkakit_valid_for_days(in_ten_days, "9")  # an inventory value may be a string
    assert not filters.kafkakit_valid_for_days(in_ten_days, 11)
