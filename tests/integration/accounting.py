"""What each test under load accounts for (sent, acknowledged, lost, duplicated, the longest window
without an acknowledgement, the time of each step), gathered per test and printed together at the
end of the run by tests/integration/conftest.py, so a run reads without the test code or `-s`."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager

ACCOUNTS: dict[str, list[str]] = {}


def current_test() -> str:
    """The running test's node id (pytest sets PYTEST_CURRENT_TEST to '<nodeid> (<phase>)')."""
    return os.environ.get("PYTEST_CURRENT_TEST", "outside a test").rsplit(" (", 1)[0]


def account(line: str) -> None:
    """One line of the running test's accounting (also printed at once, for `-s`)."""
    ACCOUNTS.setdefault(current_test(), []).append(line)
    print(f"\n{line}")


@contextmanager
def step(name: str) -> Iterator[None]:
    """Account for the seconds a step of a scenario took, also when it fails."""
    began = time.monotonic()
    try:
        yield
    finally:
        account(f"step {name}: {time.monotonic() - began:.0f} s")
