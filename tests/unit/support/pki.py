"""A test CA on real certificates (EC P-256), like the kafka_pki role's: its own certificate, host
certificates it issues, and a folder holding its ca.crt as the role keeps one."""

from __future__ import annotations

import datetime
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


class Ca:
    """A CA like ca.yml's (subject key id set), able to issue host certificates like main.yml's."""

    def __init__(self, name: str, key_ids: bool = True) -> None:
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        self.key_ids = key_ids
        builder = self._builder(self.name, self.key.public_key()).add_extension(
            x509.BasicConstraints(ca=True, path_length=0), critical=True
        )
        if key_ids:
            builder = builder.add_extension(
                x509.SubjectKeyIdentifier.from_public_key(self.key.public_key()), critical=False
            )
        self.cert = builder.sign(self.key, hashes.SHA256())

    def _builder(self, subject: x509.Name, public_key: ec.EllipticCurvePublicKey) -> x509.CertificateBuilder:
        now = datetime.datetime.now(datetime.UTC)
        return (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(self.name)
            .public_key(public_key)
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=30))
        )

    @property
    def pem(self) -> str:
        return self.cert.public_bytes(serialization.Encoding.PEM).decode()

    def issue(self, host: str) -> str:
        key = ec.generate_private_key(ec.SECP256R1())
        builder = self._builder(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host)]), key.public_key())
        if self.key_ids:
            builder = builder.add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(self.key.public_key()), critical=False
            )
        return builder.sign(self.key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM).decode()

    def store(self, folder: Path) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "ca.crt").write_text(self.pem)
        return folder

    def issue_with_key(self, host: str, ip: str = "127.0.0.1") -> tuple[str, str]:
        """A certificate for `host` at `ip` (SANs both, server and client use) and its key, in PEM."""
        import ipaddress

        key = ec.generate_private_key(ec.SECP256R1())
        builder = self._builder(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host)]), key.public_key())
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.DNSName(host), x509.IPAddress(ipaddress.ip_address(ip))]), critical=False
        )
        cert = builder.sign(self.key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM).decode()
        key_pem = key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        ).decode()
        return cert, key_pem
