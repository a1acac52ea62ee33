"""The move of a data centre's brokers and controllers to shared principals, safely.

A broker's or KRaft controller's certificate carries its DC's shared principal in its OU
(`dc1:brokers`), and super.users names that instead of every host, so a new broker changes no
other host's configuration. A cluster deployed before has certificates without an OU, whose
principal is the host's name. Servers that run the old mapping rules map a certificate with an OU
to its whole DN, which no super user matches: so no certificate with an OU may be issued in a DC
until every one of its servers runs the new rules, and a host keeps its name in super.users for as
long as it may present a certificate without one. site.yml takes a DC across in three runs, each
with one roll: the rules (names kept), then the certificates, then the names dropped.

What each server holds and runs is read on it (kafkakit_principal_state); this decides, per DC.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ServerState:
    """What kafkakit_principal_state read on one broker or controller."""

    host: str
    dc: str
    # False: the host could not be read (unreachable); nothing below is known.
    read: bool = True
    # absent (never deployed), current (the rules with OUs) or older.
    config: str = "absent"
    # The running server started after its config was written, or none runs: the file is what it
    # runs with, or will start with.
    loaded: bool = True
    # The certificate's OU, "" when it has none, None when there is no certificate.
    certificate_ou: str | None = None
    # The OU of the certificate the server presents on its listener, "" when it has none, None
    # when nothing answered.
    presented_ou: str | None = None


@dataclass(frozen=True)
class DcPlan:
    # Issue certificates with the shared principal in this DC.
    shared: bool
    # Hosts super.users names, sorted.
    by_name: list[str]


def state_from_result(host: str, dc: str, result: Mapping[str, Any]) -> ServerState:
    """A ServerState from one loop item of the read (the module's result, or an unreachable one)."""
    if result.get("unreachable") or result.get("failed") or "config" not in result:
        return ServerState(host=host, dc=dc, read=False)
    return ServerState(
        host=host,
        dc=dc,
        config=str(result["config"]),
        loaded=bool(result["loaded"]),
        certificate_ou=result.get("certificate_ou"),
        presented_ou=result.get("presented_ou"),
    )


def dc_plan(servers: Iterable[ServerState]) -> DcPlan:
    servers = list(servers)
    # Once any certificate has an OU, every server ran the new rules when it was issued, and the
    # kit never takes them out: the DC stays shared (an unreachable host must not undo it).
    has_ou = any(s.certificate_ou or s.presented_ou for s in servers)
    rules_everywhere = all(s.read and (s.config == "absent" or (s.config == "current" and s.loaded)) for s in servers)
    shared = has_ou or rules_everywhere

    # Some server was read, and every one read has its certificate with an OU and runs with it.
    crossed = any(s.read for s in servers) and all(
        not s.read or (s.certificate_ou and s.presented_ou != "") for s in servers
    )

    def by_name(s: ServerState) -> bool:
        if not s.read:
            # Unknown: kept while the DC is on its way, assumed like the others once it is across.
            return not crossed
        if s.presented_ou == "":
            return True  # it runs with a certificate without an OU now
        # Down, or not answering: it starts with the certificate it holds; a host without one
        # gets one without an OU while the DC is not shared.
        return s.presented_ou is None and (s.certificate_ou == "" or (s.certificate_ou is None and not shared))

    return DcPlan(shared=shared, by_name=sorted(s.host for s in servers if by_name(s)))


def principal_plan(servers: Iterable[ServerState]) -> dict[str, DcPlan]:
    by_dc: dict[str, list[ServerState]] = {}
    for s in servers:
        by_dc.setdefault(s.dc, []).append(s)
    return {dc: dc_plan(members) for dc, members in sorted(by_dc.items())}
