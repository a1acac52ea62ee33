"""Hooks for the whole suite (unit and integration; tests/integration/conftest.py holds the lab's
fixtures): after the run, the seconds each test file took, slowest first, so CI output shows
where the time goes."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

import pytest

PHASES = ("setup", "call", "teardown")


def seconds_per_file(reports: Iterable[object]) -> list[tuple[str, float]]:
    """Sum of setup + call + teardown durations per test file, slowest first (then by name)."""
    totals: dict[str, float] = defaultdict(float)
    for report in reports:
        duration = getattr(report, "duration", None)
        if getattr(report, "when", None) in PHASES and isinstance(duration, int | float):
            totals[report.nodeid.split("::")[0]] += duration
    return sorted(totals.items(), key=lambda row: (-row[1], row[0]))


@pytest.hookimpl(trylast=True)  # after --durations and the short summary: next to the result line
def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    rows = seconds_per_file(report for reports in terminalreporter.stats.values() for report in reports)
    if not rows:
        return
    terminalreporter.write_sep("=", "seconds per test file (setup + call + teardown)")
    for path, seconds in rows:
        terminalreporter.write_line(f"{seconds:10.1f}s  {path}")
    terminalreporter.write_line(f"{sum(s for _, s in rows):10.1f}s  total")
