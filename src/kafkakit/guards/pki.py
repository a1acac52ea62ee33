"""kafka_pki signs only with a CA the hosts already know (issue 16).

An empty or wrong kafka_pki_ca_dir (a new controller machine, a wiped CI workspace) would make a
new CA, or sign with an unrelated one: every host certificate reissued, every truststore replaced,
and the next roll partitions the cluster (servers on the old certificates no longer trust the new
ones). The role refuses that unless the operator confirms it with the CA folder's path. A fresh
deployment, where no host holds a certificate or CA bundle yet, goes ahead.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.x509.oid import ExtensionOID, NameOID

CONFIRM_VAR = "kafka_pki_new_ca_confirm"
# The CAs the controller holds during normal operation and a rotation (ops/rotate-certificates.yml).
CA_FILES = ("ca.crt", "next/ca.crt", "old/ca.crt")


@dataclass(frozen=True)
class Ca:
    subject: str
    key_id: bytes | None
    name: str  # commonName, for messages


@dataclass(frozen=True)
class Held:
    """What a host holds: its certificate and its CA bundle (PEM text; None when absent)."""

    cert: str | None = None
    bundle: str | None = None


def _common_name(name: x509.Name) -> str:
    cns = name.get_attributes_for_oid(NameOID.COMMON_NAME)
    return str(cns[0].value) if cns else name.rfc4514_string()


def _certs(pem: str) -> list[x509.Certificate]:
    try:
        return x509.load_pem_x509_certificates(pem.encode())
    except ValueError:
        return []


def cas_in(pem: str) -> list[Ca]:
    """The certificates of a PEM bundle, as CAs."""
    found = []
    for cert in _certs(pem):
        try:
            key_id: bytes | None = cert.extensions.get_extension_for_oid(
                ExtensionOID.SUBJECT_KEY_IDENTIFIER
            ).value.digest
        except x509.ExtensionNotFound:
            key_id = None
        found.append(Ca(cert.subject.rfc4514_string(), key_id, _common_name(cert.subject)))
    return found


def issuer_of(pem: str) -> tuple[str, bytes | None, str] | None:
    """(issuer DN, authority key id, issuer CN) of the first certificate; None if unreadable."""
    certs = _certs(pem)
    if not certs:
        return None
    cert = certs[0]
    try:
        key_id = cert.extensions.get_extension_for_oid(ExtensionOID.AUTHORITY_KEY_IDENTIFIER).value.key_identifier
    except x509.ExtensionNotFound:
        key_id = None
    return cert.issuer.rfc4514_string(), key_id, _common_name(cert.issuer)


def _issued_by(issuer: tuple[str, bytes | None, str], ca: Ca) -> bool:
    dn, key_id, _ = issuer
    if key_id is not None and ca.key_id is not None:
        return key_id == ca.key_id
    return dn == ca.subject


def controller_cas(ca_dir: str) -> list[Ca]:
    """The CAs kafka_pki_ca_dir holds: the signing one and a rotation's next/ or old/ one."""
    found: list[Ca] = []
    for name in CA_FILES:
        path = Path(ca_dir, name)
        if path.is_file():
            found.extend(cas_in(path.read_text()))
    return found


def foreign_hosts(known: list[Ca], held: Mapping[str, Held]) -> dict[str, str]:
    """Hosts holding a certificate no known CA issued, or a CA bundle sharing no CA with the
    known ones: host -> the CA it holds (its CN), in the hosts' order."""
    foreign: dict[str, str] = {}
    for host, h in held.items():
        if h.cert is not None:
            issuer = issuer_of(h.cert)
            if issuer is None:
                foreign[host] = "an unreadable certificate"
                continue
            if not any(_issued_by(issuer, ca) for ca in known):
                foreign[host] = issuer[2]
                continue
        if h.bundle is not None:
            bundle = cas_in(h.bundle)
            if not any(_same(ca, k) for ca in bundle for k in known):
                foreign[host] = ", ".join(ca.name for ca in bundle) or "an unreadable CA bundle"
    return foreign


def _same(a: Ca, b: Ca) -> bool:
    if a.key_id is not None and b.key_id is not None:
        return a.key_id == b.key_id
    return a.subject == b.subject


def _norm(path: str) -> str:
    return os.path.normpath(os.path.expanduser(path.strip())) if path.strip() else ""


def _some(names: Iterable[str], shown: int = 10) -> str:
    names = list(names)
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more


def new_ca_refusal(ca_dir: str, known: list[Ca], held: Mapping[str, Held], confirmation: object) -> str:
    """Why kafka_pki must not sign with the CA of `ca_dir` ('' when it may).

    `known` is what controller_cas(ca_dir) found (empty: the role would create a CA there);
    `held` what each target host holds."""
    if not ca_dir.strip():
        return "kafka_pki_ca_dir is empty: set it to the controller folder of the CA (ca.crt, ca.key)"
    foreign = foreign_hosts(known, held)
    if not foreign:
        return ""
    confirmed = "" if confirmation is None else _norm(str(confirmation))
    if confirmed and confirmed == _norm(ca_dir):
        return ""
    holders = f"{len(foreign)} host(s) hold certificates or CA bundles from another CA"
    issuers = sorted(set(foreign.values()))
    what = (
        f"refusing to create a new CA in {ca_dir}: it holds no ca.crt, but {holders}"
        if not known
        else f"refusing to sign with the CA in {ca_dir} ({', '.join(sorted({c.name for c in known}))}): {holders}"
    )
    consequence = (
        f"({_some(issuers, 3)}): {_some(foreign)}. Going ahead reissues every host certificate and replaces "
        "every truststore; servers still on the old certificates stop trusting the new ones, so the next roll "
        "partitions the cluster. Point kafka_pki_ca_dir at the CA that issued them (its ca.crt and ca.key), "
        "or move to a new CA deliberately with ops/rotate-ca.yml"
    )
    if confirmed:
        return f"{CONFIRM_VAR}={confirmation} does not name kafka_pki_ca_dir ({ca_dir}); {what} {consequence}"
    return f"{what} {consequence}; to replace the CA anyway: -e {CONFIRM_VAR}={ca_dir}"


# ops/rotate-certificates.yml's retire phase (ops/retire-ca.yml): the old CA is dropped from every
# truststore, so every client that trusts only it stops connecting. Refused unless confirmed with
# the CA folder's path, until the promote phase has soaked, and while a client configuration the kit
# writes does not trust the new CA yet.
RETIRE_CONFIRM_VAR = "rotate_retire_confirm"
SOAK_VAR = "rotate_soak_hours"
PROMOTED_AT = "promoted-at"  # beside the CA: when promote moved the old CA to old/ (epoch seconds)


def trusts(bundle: str | None, ca: Ca) -> bool:
    """Whether a PEM bundle holds `ca`."""
    return bundle is not None and any(_same(held, ca) for held in cas_in(bundle))


def retire_refusal(
    ca_dir: str,
    confirmation: object,
    promoted_at: float | None,
    now: float,
    soak_hours: float,
    bundles: Mapping[str, str | None],
) -> str:
    """Why the old CA must not be retired yet ('' when it may): `promoted_at` is what promote
    recorded (None: no record), `bundles` each client configuration's CA bundle by name (None:
    missing). The new CA is the signing one, ca_dir/ca.crt."""
    reasons = []
    ca_dir = _norm(ca_dir)
    confirmed = "" if confirmation is None else _norm(str(confirmation))
    if confirmed != ca_dir:
        reasons.append(
            f"retiring drops the old CA from every truststore: an application that trusts only it can no longer "
            f"connect. Hand the new CA ({ca_dir}/trusted.crt) to every application first, then confirm with "
            f"-e {RETIRE_CONFIRM_VAR}={ca_dir}"
        )
    if promoted_at is None:
        reasons.append(f"{ca_dir}/{PROMOTED_AT} records no promotion: run ops/rotate-ca.yml (promote) first")
    elif now - promoted_at < soak_hours * 3600:
        hours = (now - promoted_at) / 3600
        reasons.append(
            f"the new CA was promoted {hours:.1f} h ago, the soak is {soak_hours:g} h ({SOAK_VAR}): "
            f"retire after {soak_hours - hours:.1f} more hours"
        )
    new = cas_in(Path(ca_dir, "ca.crt").read_text()) if Path(ca_dir, "ca.crt").is_file() else []
    if not new:
        reasons.append(f"{ca_dir}/ca.crt is missing or unreadable")
    else:
        behind = [name for name, bundle in bundles.items() if not trusts(bundle, new[0])]
        if behind:
            reasons.append(f"these client configurations do not trust the new CA ({new[0].name}) yet: {_some(behind)}")
    if not reasons:
        return ""
    return f"refusing to retire the old CA of {ca_dir}: " + "; ".join(reasons) + ". Nothing was changed"


def promoted_at(ca_dir: str) -> float | None:
    """When promote moved the old CA to old/, as it recorded (None: no record, or unreadable)."""
    try:
        return float(Path(ca_dir, PROMOTED_AT).read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
