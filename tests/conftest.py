"""Hooks for the whole suite (unit and integration; tests/integration/conftest.py holds the lab's
fixtures): each slow test's seconds as soon as it ends (so a run stopped by a time limit still
shows where the time went), and after the run the seconds each test file took, slowest first."""

from __future__ import annotations

import time
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


SLOW_S = 5.0  # a test at least this long gets its own line as it ends
_STARTED = time.monotonic()
_spent: dict[str, float] = defaultdict(float)


def live_line(nodeid: str, seconds: float, elapsed: float) -> str:
    """One test's seconds (setup + call + teardown) and the run's wall clock so far."""
    return f"[{elapsed / 60:5.1f} min] {seconds:7.1f}s  {nodeid}"


def pytest_configure(config: pytest.Config) -> None:
    # Under pytest-xdist (the unit tier) the workers' reports reach the controller, which prints them.
    if not hasattr(config, "workerinput"):
        config.pluginmanager.register(LiveDurations(config), "kafkakit-live-durations")


class LiveDurations:
    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        _spent[report.nodeid] += report.duration
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None and report.when == "teardown" and _spent[report.nodeid] >= SLOW_S:
            reporter.write_line("")
            reporter.write_line(live_line(report.nodeid, _spent[report.nodeid], time.monotonic() - _STARTED))


@pytest.hookimpl(trylast=True)  # after --durations and the short summary: next to the result line
def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    rows = seconds_per_file(report for reports in terminalreporter.stats.values() for report in reports)
    if not rows:
        return
    terminalreporter.write_sep("=", "seconds per test file (setup + call + teardown)")
    for path, seconds in rows:
        terminalreporter.write_line(f"{seconds:10.1f}s  {path}")
    terminalreporter.write_line(f"{sum(s for _, s in rows):10.1f}s  total")
