"""When kafka_pki keeps a host's certificate and skips the signing request (roles/kafka_pki/vars/main.yml).

The role's own expression is evaluated by ansible-playbook over hosts that each hold what the
tasks would have registered: the certificate read from the host, the signing CA, the host key. One
host holds a certificate to keep; each other host differs from it in one respect only, which must
make the role sign a new one.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from tests.unit.ansible_run import REPO, run_playbook

SIGNING_CA = "AA:BB"
KEY = "11:22:33"
KEEP = {
    "private_ip": "10.99.0.11",
    "kafka_pki_current": {"content": "Y2VydA=="},
    "kafka_pki_current_info": {
        "valid_at": {"renewal": True},
        "authority_key_identifier": SIGNING_CA,
        "subject": {"commonName": "keep"},
        "subject_alt_name": ["IP:10.99.0.11", "DNS:keep"],
        "public_key_fingerprints": {"sha256": KEY},
    },
    "kafka_pki_key": {"fingerprint": {"sha256": KEY}},
}
# Host name -> what differs from KEEP (the host's certificate names the host it was issued to).
RENEW = {
    "forced": {"kafka_pki_force_renew": True},
    "due": {"valid_at": {"renewal": False}},
    "other_ca": {"authority_key_identifier": "CC:DD"},
    "moved": {"private_ip": "10.99.0.12"},
    "more_names": {"private_dns": "broker.example.internal"},
    "new_key": {"kafka_pki_key": {"fingerprint": {"sha256": "44:55:66"}}},
    "none_yet": {"kafka_pki_current": {}},
}


def host_vars(name: str, change: dict) -> dict:
    info = {**KEEP["kafka_pki_current_info"], "subject": {"commonName": name}}
    info["subject_alt_name"] = ["IP:10.99.0.11", f"DNS:{name}"]
    hv = {**KEEP, "kafka_pki_current_info": info, "ansible_connection": "local"}
    for key, value in change.items():
        if key in info:
            info[key] = value
        else:
            hv[key] = value
    return hv


def test_only_a_matching_valid_certificate_of_the_signing_ca_is_kept(tmp_path: Path) -> None:
    hosts = {"keep": host_vars("keep", {})} | {name: host_vars(name, change) for name, change in RENEW.items()}
    # The role's defaults as inventory group variables: below host variables, as role defaults are.
    defaults = yaml.safe_load((REPO / "roles/kafka_pki/defaults/main.yml").read_text())
    (tmp_path / "hosts.yml").write_text(yaml.safe_dump({"all": {"hosts": hosts, "vars": defaults}}))
    play = [
        {
            "name": "Evaluate kafka_pki_keep",
            "hosts": "all",
            "gather_facts": False,
            "vars_files": [str(REPO / "roles/kafka_pki/vars/main.yml")],
            "vars": {"kafka_pki_ca_info": {"subject_key_identifier": SIGNING_CA}},
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
