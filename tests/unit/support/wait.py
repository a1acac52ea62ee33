"""The one wait of the unit tests: poll a check until it holds, failing with what was awaited."""

from __future__ import annotations

import time
from collections.abc import Callable


def wait_until(what: str, check: Callable[[], object], timeout: float, interval: float = 0.05) -> float:
    """Poll check() until it returns something true; the seconds that took. Fails (an
    AssertionError naming `what`) once `timeout` seconds have passed without it."""
    start = time.monotonic()
    while not check():
        waited = time.monotonic() - start
        assert waited < timeout, f"{what}: not within {timeout}s"
        time.sleep(min(interval, max(timeout - waited, 0)))
    return time.monotonic() - start
