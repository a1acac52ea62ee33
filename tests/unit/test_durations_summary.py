"""tests/conftest.py's per-file summary: setup + call + teardown summed per test file, slowest first."""

from __future__ import annotations

from types import SimpleNamespace

from tests.conftest import seconds_per_file


def report(nodeid: str, when: str | None, duration: float | None) -> SimpleNamespace:
    return SimpleNamespace(nodeid=nodeid, when=when, duration=duration)


def test_phases_are_summed_per_file_and_sorted_slowest_first() -> None:
    reports = [
        report("tests/a/test_x.py::test_one", "setup", 1.0),
        report("tests/a/test_x.py::test_one", "call", 2.0),
        report("tests/a/test_x.py::test_one", "teardown", 0.5),
        report("tests/a/test_x.py::test_two[p1]", "call", 1.0),
        report("tests/a/test_y.py::TestK::test_three", "call", 10.0),
        report("tests/a/test_z.py::test_four", "call", 0.25),
    ]
    assert seconds_per_file(reports) == [
        ("tests/a/test_y.py", 10.0),
        ("tests/a/test_x.py", 4.5),
        ("tests/a/test_z.py", 0.25),
    ]


def test_reports_without_a_phase_or_duration_are_left_out() -> None:
    # Collection reports and warnings also sit in the terminal reporter's stats.
    reports = [
        report("tests/a/test_x.py", None, 3.0),
        SimpleNamespace(nodeid="tests/a/test_x.py::w", message="a warning"),
        report("tests/a/test_x.py::test_one", "call", None),
        report("tests/a/test_x.py::test_one", "call", 1.5),
    ]
    assert seconds_per_file(reports) == [("tests/a/test_x.py", 1.5)]


def test_ties_are_ordered_by_name() -> None:
    reports = [report("tests/test_b.py::t", "call", 1.0), report("tests/test_a.py::t", "call", 1.0)]
    assert [path for path, _ in seconds_per_file(reports)] == ["tests/test_a.py", "tests/test_b.py"]


def test_a_slow_test_gets_a_live_line_with_the_wall_clock():
    from tests.conftest import live_line

    assert live_line("tests/integration/test_x.py::test_y", 83.25, 1530) == (
        "[ 25.5 min]    83.2s  tests/integration/test_x.py::test_y"
    )
