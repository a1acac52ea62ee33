"""Fixtures for the infra tests: each example stack built once per session under mocks."""

from __future__ import annotations

import pytest
from stack_harness import StackRun, example_config, run_stack


@pytest.fixture(scope="session")
def small() -> StackRun:
    return run_stack(example_config("small"))


@pytest.fixture(scope="session")
def production() -> StackRun:
    return run_stack(example_config("production"))


@pytest.fixture(scope="session", params=["small", "production"])
def example(request: pytest.FixtureRequest, small: StackRun, production: StackRun) -> StackRun:
    """Each example stack in turn: the rules must hold for both."""
    return {"small": small, "production": production}[request.param]


def pytest_configure(config: pytest.Config) -> None:
    # pulumi_aws warns about its own deprecated aliases when its modules load; not ours to fix.
    config.addinivalue_line("filterwarnings", "ignore::DeprecationWarning:pulumi_aws.*")
