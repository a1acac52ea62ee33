"""SCRAM users as code: declared users vs. the cluster's SCRAM credentials, and applying the difference.

Kafka never returns a stored password, so "is the password already right?" is answered by logging in
as the user (`can_login`). The planning takes that check as a callable so it is testable without a cluster.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import (
    AdminClient,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialDeletion,
    UserScramCredentialUpsertion,
)

from kafkakit.cluster.admin import failed_futures

TIMEOUT = 30.0
DEFAULT_MECHANISM = "SCRAM-SHA-512"
MECHANISMS = {"SCRAM-SHA-256": ScramMechanism.SCRAM_SHA_256, "SCRAM-SHA-512": ScramMechanism.SCRAM_SHA_512}
# Kafka refuses SCRAM iteration counts outside this range.
MIN_ITERATIONS, MAX_ITERATIONS = 4096, 16384

# user -> mechanism name -> iteration count, as the cluster describes its credentials.
Credentials = dict[str, dict[str, int]]
# (user, password, mechanism) -> True if the broker accepts that login.
LoginCheck = Callable[[str, str, str], bool]


class ScramError(Exception):
    """Invalid declarations, or a failed SCRAM API call or login check."""


@dataclass(frozen=True)
class ScramUser:
    name: str
    password: str = field(default="", repr=False)  # repr=False: never end up in a log or traceback
    mechanism: str = DEFAULT_MECHANISM
    present: bool = True


@dataclass
class ScramPlan:
    create: list[ScramUser] = field(default_factory=list)
    update: list[ScramUser] = field(default_factory=list)
    remove: list[tuple[str, str]] = field(default_factory=list)  # (user, mechanism) credentials to delete
    before: list[str] = field(default_factory=list)
    after: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.create or self.update or self.remove)

    @property
    def created(self) -> list[str]:
        return sorted({u.name for u in self.create})

    @property
    def updated(self) -> list[str]:
        return sorted({u.name for u in self.update})

    @property
    def removed(self) -> list[str]:
        return sorted({user for user, _ in self.remove})


def _parse_user(index: int, entry: Any) -> tuple[ScramUser | None, list[str]]:
    if not isinstance(entry, Mapping):
        return None, [f"users[{index}]: expected a mapping, got {type(entry).__name__}"]
    name = entry.get("name")
    label = f"users[{index}] ({name})"
    mechanism = str(entry.get("mechanism") or DEFAULT_MECHANISM).upper()
    state = entry.get("state") or "present"
    password = entry.get("password")
    errors = []
    if not isinstance(name, str) or not name:
        errors.append(f"users[{index}]: name must be a non-empty string")
    if mechanism not in MECHANISMS:
        errors.append(f"{label}: unknown mechanism {mechanism!r}; expected one of {', '.join(MECHANISMS)}")
    if state not in ("present", "absent"):
        errors.append(f"{label}: state must be present or absent, not {state!r}")
    if state == "present" and (not isinstance(password, str) or not password):
        errors.append(f"{label}: a present user needs a non-empty password")
    if errors:
        return None, errors
    return ScramUser(name, password or "", mechanism, state == "present"), []


def user_errors(index: int, entry: Any) -> list[str]:
    """What the module would refuse in one declared user (empty: nothing); the preflight asks."""
    return _parse_user(index, entry)[1]


def _check_consistency(users: Sequence[ScramUser], protected: Collection[str]) -> list[str]:
    errors = []
    seen: set[tuple[str, str]] = set()
    for u in users:
        if (u.name, u.mechanism) in seen:
            errors.append(f"{u.name} ({u.mechanism}) is declared more than once")
        seen.add((u.name, u.mechanism))
    present = {u.name for u in users if u.present}
    for name in sorted({u.name for u in users if not u.present}):
        if name in present:
            errors.append(f"{name} is declared both present and absent")
        if name in protected:
            errors.append(f"{name} is protected and cannot be declared absent")
    return errors


def parse_users(entries: Sequence[Any], protected: Collection[str] = ()) -> list[ScramUser]:
    """Validate the declared users; one ScramError lists every problem."""
    users, errors = [], []
    for index, entry in enumerate(entries):
        user, entry_errors = _parse_user(index, entry)
        errors += entry_errors
        if user is not None:
            users.append(user)
    errors += _check_consistency(users, protected)
    if errors:
        raise ScramError("invalid SCRAM user declarations:\n  " + "\n  ".join(errors))
    return users


def check_iterations(iterations: int) -> None:
    if not MIN_ITERATIONS <= iterations <= MAX_ITERATIONS:
        raise ScramError(f"iterations must be between {MIN_ITERATIONS} and {MAX_ITERATIONS}, not {iterations}")


def _needs_upsert(user: ScramUser, current: Credentials, iterations: int, can_login: LoginCheck) -> bool:
    stored = current.get(user.name, {}).get(user.mechanism)
    if stored != iterations:
        return True  # a new credential, or one hashed with another iteration count
    return not can_login(user.name, user.password, user.mechanism)


def plan_users(
    users: Sequence[ScramUser],
    current: Credentials,
    can_login: LoginCheck,
    iterations: int = 8192,
    exclusive: bool = False,
    protected: Collection[str] = (),
) -> ScramPlan:
    """What to create, re-hash and delete. `absent` and `exclusive` remove every mechanism of a user;
    protected users (e.g. the admin principal running this) are never removed."""
    plan = ScramPlan(before=sorted(current))
    for user in users:
        if user.present and user.name not in current:
            plan.create.append(user)
        elif user.present and _needs_upsert(user, current, iterations, can_login):
            plan.update.append(user)
    declared = {u.name for u in users if u.present}
    doomed = {u.name for u in users if not u.present}
    if exclusive:
        doomed |= set(current) - declared
    for name in sorted(doomed - set(protected)):
        plan.remove += [(name, mechanism) for mechanism in sorted(current.get(name, {}))]
    plan.after = sorted((set(current) - set(plan.removed)) | set(plan.created))
    return plan


class ScramStore(Protocol):
    """Where the credentials live; AdminScramStore in production, a fake in unit tests."""

    def list(self) -> Credentials: ...

    def upsert(self, users: Sequence[ScramUser], iterations: int) -> None: ...

    def delete(self, credentials: Sequence[tuple[str, str]]) -> None: ...


def apply_users(
    store: ScramStore,
    users: Sequence[ScramUser],
    can_login: LoginCheck,
    iterations: int = 8192,
    exclusive: bool = False,
    protected: Collection[str] = (),
    check_mode: bool = False,
) -> ScramPlan:
    check_iterations(iterations)
    plan = plan_users(users, store.list(), can_login, iterations, exclusive, protected)
    if check_mode:
        return plan
    if plan.create or plan.update:
        store.upsert(plan.create + plan.update, iterations)
    if plan.remove:
        store.delete(plan.remove)
    return plan


# --- confluent-kafka side -------------------------------------------------------------------------


def _wait_all(futures: Mapping[str, Any], verb: str) -> None:
    failed = failed_futures(futures)
    if failed:
        raise ScramError(f"could not {verb} SCRAM credentials:\n  " + "\n  ".join(failed))


class AdminScramStore:
    def __init__(self, admin: AdminClient, timeout: float = TIMEOUT) -> None:
        self.admin = admin
        self.timeout = timeout

    def list(self) -> Credentials:
        try:
            described = self.admin.describe_user_scram_credentials(request_timeout=self.timeout).result()
        except KafkaException as exc:
            raise ScramError(f"cannot describe SCRAM users: {exc}") from exc
        return {
            user: {info.mechanism.name.replace("_", "-"): info.iterations for info in desc.scram_credential_infos}
            for user, desc in described.items()
        }

    def upsert(self, users: Sequence[ScramUser], iterations: int) -> None:
        alterations = [
            UserScramCredentialUpsertion(
                u.name, ScramCredentialInfo(MECHANISMS[u.mechanism], iterations), u.password.encode("utf-8")
            )
            for u in users
        ]
        futures = self.admin.alter_user_scram_credentials(alterations, request_timeout=self.timeout)
        _wait_all(futures, "create or update")

    def delete(self, credentials: Sequence[tuple[str, str]]) -> None:
        alterations = [UserScramCredentialDeletion(user, MECHANISMS[mech]) for user, mech in credentials]
        futures = self.admin.alter_user_scram_credentials(alterations, request_timeout=self.timeout)
        _wait_all(futures, "delete")


# Settings of the admin's client config that identify the admin; replaced for a login check.
_IDENTITY_KEYS = ("sasl.username", "sasl.password", "sasl.mechanism", "sasl.mechanisms")


def login_config(
    bootstrap_servers: str, client_config: Mapping[str, Any], user: str, password: str, mechanism: str
) -> dict[str, Any]:
    """The admin's connection settings (TLS, CA) with the identity swapped for `user`."""
    conf: dict[str, Any] = {"bootstrap.servers": bootstrap_servers, "socket.timeout.ms": 10000}
    conf.update({k: str(v) for k, v in client_config.items() if k not in _IDENTITY_KEYS})
    if not str(conf.get("security.protocol", "")).upper().startswith("SASL_"):
        raise ScramError("client_config must set security.protocol to SASL_SSL (or SASL_PLAINTEXT) to check passwords")
    conf.update({"sasl.mechanisms": mechanism, "sasl.username": user, "sasl.password": password})
    return conf


def is_auth_failure(error: Any) -> bool:
    if isinstance(error, KafkaError):
        return error.code() == KafkaError._AUTHENTICATION or "Authentication failed" in error.str()
    return "Authentication failed" in str(error)


def try_login(conf: Mapping[str, Any], timeout: float) -> bool:
    """True if the broker accepts these credentials, False if it rejects them; ScramError if it cannot tell.

    librdkafka reports a SASL rejection through error_cb (served by poll()) while the metadata request
    itself only times out, so both are watched, in short rounds, to answer as soon as the broker does."""
    errors: list[KafkaError] = []
    client = AdminClient({**conf, "error_cb": errors.append, "log_level": 0})
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            client.list_topics(timeout=1.0)
            return True
        except KafkaException as exc:
            last = exc.args[0] if exc.args else exc
            if is_auth_failure(last):
                return False
        client.poll(0)
        if any(is_auth_failure(e) for e in errors):
            return False
    detail = errors[-1].str() if errors else last
    raise ScramError(f"could not tell whether the broker accepts the login within {timeout:.0f}s: {detail}")


def login_checker(bootstrap_servers: str, client_config: Mapping[str, Any], timeout: float = 15.0) -> LoginCheck:
    """The production `can_login`: a short-lived client per check, authenticating as the user."""

    def can_login(user: str, password: str, mechanism: str) -> bool:
        try:
            return try_login(login_config(bootstrap_servers, client_config, user, password, mechanism), timeout)
        except ScramError as exc:
            raise ScramError(f"password check for {user}: {exc}") from exc

    return can_login
