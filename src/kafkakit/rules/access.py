"""A data centre's declared users and ACLs (roles/kafka_resources): every ACL must be for a principal
that exists, or it grants nothing today and everything to whoever takes the name later."""

from __future__ import annotations

from collections.abc import Iterable, Mapping


def declared_users(users: object) -> tuple[list[str], list[str]]:
    """The names of the users kafka_users keeps (state present), and one message per malformed entry."""
    if users in (None, ""):
        return [], []
    if not isinstance(users, list):
        return [], [f"kafka_users must be a list of users (name, password), not {users!r}"]
    names, errors = [], []
    for i, user in enumerate(users):
        if not isinstance(user, Mapping) or not isinstance(user.get("name"), str) or not user["name"]:
            errors.append(f"kafka_users[{i}] has no name")
        elif user.get("state", "present") == "present":
            names.append(user["name"])
    return names, errors


def acl_principal_errors(dc: str, acls: object, users: object, known: Iterable[str]) -> list[str]:
    """One message per kafka_acls entry of `dc` whose principal is no declared user: kafka_users
    (present), or `known` (the admin, the kit's service users, the brokers' certificate names)."""
    names, errors = declared_users(users)
    errors = [f"{dc}: {e}" for e in errors]
    if acls in (None, ""):
        return errors
    if not isinstance(acls, list):
        return [*errors, f"{dc}: kafka_acls must be a list of ACL entries, not {acls!r}"]
    everyone = set(names) | set(known) | {"*"}
    for i, acl in enumerate(acls):
        principal = acl.get("principal") if isinstance(acl, Mapping) else None
        if not isinstance(principal, str):
            errors.append(f"{dc}: kafka_acls[{i}] has no principal (User:<name>)")
            continue
        kind, _, name = principal.partition(":")
        if kind != "User" or not name:
            errors.append(f"{dc}: kafka_acls[{i}] principal {principal!r} is not of the form User:<name>")
        elif name not in everyone:
            errors.append(
                f"{dc}: kafka_acls[{i}] is for {principal}, which no declared user has; add {name} to "
                f"kafka_users or fix the principal (declared: {sorted(names)})"
            )
    return errors
