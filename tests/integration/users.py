"""SCRAM users applied from the tests as the kit's users module applies them."""

from __future__ import annotations

from kafkakit.cluster.scram_users import AdminScramStore, LoginCheck, ScramPlan, apply_users, parse_users


def apply_one(store: AdminScramStore, can_login: LoginCheck, name: str, password: str, state: str) -> ScramPlan:
    """The users module's own apply, for one user of the default mechanism; the admin protected."""
    users = parse_users([{"name": name, "password": password, "state": state}], ["admin"])
    return apply_users(store, users, can_login, protected=["admin"])
