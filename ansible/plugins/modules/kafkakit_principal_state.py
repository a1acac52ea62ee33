#!/usr/bin/python
"""What a broker or KRaft controller holds and runs of the shared principals; runs on the server."""

from __future__ import annotations

DOCUMENTATION = r"""
module: kafkakit_principal_state
short_description: Read a Kafka server's principal mapping rules and the certificate it presents
description:
  - Reads, on a broker or KRaft controller, what kafkakit.cluster.principals needs to take its data centre
    to shared principals (the OU of its certificates) safely. Whether its configuration has the
    current ssl.principal.mapping.rules and the running server started after it was written; the
    OU of its certificate on disk; the OU of the certificate it presents on its listener.
  - One module run per server instead of four (a file read, the unit's start, a certificate parse,
    a TLS handshake). Reads only; changes nothing.
options:
  config: {type: path, required: true, description: The server's properties file.}
  rules: {type: str, required: true, description: The ssl.principal.mapping.rules value that is current.}
  unit: {type: str, required: true, description: The server's systemd unit.}
  certificate: {type: path, required: true, description: The host certificate (PEM) its keystore is built from.}
  address: {type: str, required: true, description: The address of the server's mutual-TLS listener.}
  port: {type: int, required: true, description: Its port.}
  timeout: {type: float, default: 5, description: Seconds to wait for the listener.}
author: kafkakit
"""

EXAMPLES = r"""
- name: Read the broker's principal state
  kafkakit_principal_state:
    config: /etc/kafka/server.properties
    rules: "RULE:^CN=[^,]+,OU=([^,]+)$/$1/,RULE:^CN=([^,]+)$/$1/,DEFAULT"
    unit: kafka
    certificate: "{{ kafka_pki_dir }}/host.crt"
    address: 10.0.1.11
    port: 9091
"""

RETURN = r"""
config:
  description: absent (no file), current (it has I(rules)) or older.
  returned: always
  type: str
loaded:
  description: The unit does not run, or started after the file was last written.
  returned: always
  type: bool
certificate_ou:
  description: The OU of the certificate on disk, "" without one, null when there is no certificate.
  returned: always
  type: str
presented_ou:
  description: The OU of the certificate the listener presents, "" without one, null when nothing answered.
  returned: always
  type: str
"""

import socket
import ssl

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.kafkakit_units import newer_than, unit_start


def config_state(path: str, rules: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        return "absent"
    return "current" if f"ssl.principal.mapping.rules={rules}" in lines else "older"


def ou_of(der: bytes) -> str:
    from cryptography import x509
    from cryptography.x509.oid import NameOID

    names = x509.load_der_x509_certificate(der).subject.get_attributes_for_oid(NameOID.ORGANIZATIONAL_UNIT_NAME)
    return str(names[0].value) if names else ""


def certificate_ou(path: str) -> str | None:
    try:
        with open(path, "rb") as f:
            pem = f.read()
    except FileNotFoundError:
        return None
    return ou_of(ssl.PEM_cert_to_DER_cert(pem.decode("ascii")))


def presented_ou(address: str, port: int, timeout: float) -> str | None:
    """The OU of the certificate the listener presents, without client authentication: with TLS
    1.3 the server's certificate arrives before it asks for the client's."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    try:
        with socket.create_connection((address, port), timeout=timeout) as sock:
            with context.wrap_socket(sock) as tls:
                der = tls.getpeercert(binary_form=True)
    except (OSError, ssl.SSLError):
        return None
    return ou_of(der) if der else None


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "config": {"type": "path", "required": True},
            "rules": {"type": "str", "required": True},
            "unit": {"type": "str", "required": True},
            "certificate": {"type": "path", "required": True},
            "address": {"type": "str", "required": True},
            "port": {"type": "int", "required": True},
            "timeout": {"type": "float", "default": 5.0},
        },
        supports_check_mode=True,
    )
    p = module.params
    start = unit_start(module, p["unit"])
    module.exit_json(
        changed=False,
        config=config_state(p["config"], p["rules"]),
        loaded=start is None or not newer_than([p["config"]], start),
        certificate_ou=certificate_ou(p["certificate"]),
        presented_ou=presented_ou(p["address"], p["port"], p["timeout"]) if start is not None else None,
    )


if __name__ == "__main__":
    main()
