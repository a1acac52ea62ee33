"""Helpers shared by the kafkakit Ansible modules (which run on the controller)."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

# Marks of librdkafka settings that hold secrets (sasl.password, ssl.key.password, ssl.key.pem, ...).
SECRET_HINTS = ("password", "secret", "key.pem")


def mask_only_secrets(module: Any, other_secrets: Collection[str] = ()) -> None:
    """no_log on client_config masks every value in the output, so the admin's user name would turn
    'User:admin' into 'User:********' in the diff; keep masking only the secret settings."""
    config = module.params["client_config"] or {}
    secrets = {str(v) for k, v in config.items() if any(h in k for h in SECRET_HINTS)} | set(other_secrets)
    for value in config.values():
        if str(value) not in secrets:
            module.no_log_values.discard(str(value))


def text_diff(before: Collection[str], after: Collection[str]) -> dict[str, str]:
    """Ansible's diff callback wants text: one line per binding or user."""
    return {"before": "".join(f"{line}\n" for line in before), "after": "".join(f"{line}\n" for line in after)}
