"""What every test directory shares: paths of the real data the tests read, and the servers and
processes the tests start (a fake OpenAI-compatible server, a local Ray cluster, a headless
Chromium), each in one fixture; the embedded local model's tests are skipped with the reason
where its extra is missing."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fake_openai import FakeOpenAI
from tests.optional import local_extra_missing, unavailable
from tests.ray_cluster import NODE_ENVIRONMENTS, local_cluster
from tests.reporting.browser import CHROMIUM, CHROMIUM_ARGS, missing_reason

ROOT = Path(__file__).resolve().parent.parent
TAU_DIR = ROOT / "examples" / "tau_airline"
TAU_TRAJECTORIES = TAU_DIR / "gpt-4o-airline-tasks-00-24.json"
TAU_TOOLS = TAU_DIR / "tools.json"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "fake_openai(**options): the options the fake_openai fixture's server starts with "
        "(reply=, latency=, strict=, ...)",
    )
    config.addinivalue_line(
        "markers",
        "long: the module holds a test of half a minute or more; its file starts among the first",
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Files with a long test first, the embedded model's before the rest, each file's tests kept
    together: pytest-xdist hands out whole files in this order (``--no-loadscope-reorder``), so a
    two-minute file started last cannot leave one worker running alone at the end."""

    def weight(item: pytest.Item) -> int:
        if item.get_closest_marker("local_model") is not None:
            return 0
        return 1 if item.get_closest_marker("long") is not None else 2

    first: dict[Path, int] = {}
    for item in items:
        first[item.path] = min(first.get(item.path, 2), weight(item))
    items.sort(key=lambda item: first[item.path])  # stable: collection order within a weight


def pytest_runtest_setup(item: pytest.Item) -> None:
    """A ``local_model`` test is skipped where the local extra is missing (a failure under CI)."""
    if item.get_closest_marker("local_model") is not None:
        reason = local_extra_missing()
        if reason is not None:
            unavailable(reason)


@pytest.fixture
def tau_trajectories() -> Path:
    """100 real τ-bench airline trajectories (GPT-4o), 1,381 assistant steps."""
    return TAU_TRAJECTORIES


@pytest.fixture
def tau_tools() -> Path:
    """The 14 airline tool definitions of those trajectories."""
    return TAU_TOOLS


@pytest.fixture(autouse=True)
def private_user_dirs(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The user's cache and config directories are a temporary folder in every test."""
    home = tmp_path_factory.mktemp("user")
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / "cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))


def write_tau_units(path: Path, limit: int | None = None) -> Path:
    """The units of the τ-bench sample (with its tools and recorded model), the first
    ``limit`` of them, written to ``path`` as a units file."""
    from agent_backtest.api import ReadingOptions, SelectionOptions, build_units
    from agent_backtest.trace import dump_record

    reading = ReadingOptions(tools=TAU_TOOLS, recorded_model="gpt-4o")
    units = build_units(TAU_TRAJECTORIES, reading=reading, selection=SelectionOptions(limit=limit))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(dump_record(unit) + b"\n" for unit in units))
    return path


@pytest.fixture
def fake_openai(request: pytest.FixtureRequest) -> Iterator[FakeOpenAI]:
    """A fake OpenAI-compatible server on 127.0.0.1 for one test, started with the options of
    the test's ``fake_openai`` marker (``pytestmark = pytest.mark.fake_openai(reply=...)``);
    what it saw is the test's alone."""
    marker = request.node.get_closest_marker("fake_openai")
    with FakeOpenAI(**(marker.kwargs if marker else {})) as server:
        yield server


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[Any]:
    """A local Ray cluster (a head with no CPU and two one-CPU worker nodes) shared by every Ray
    test of the session; the nodes' environments are ``tests.ray_cluster.NODE_ENVIRONMENTS``.
    A test that kills workers kills actor processes only: the nodes stay up for the next."""
    with local_cluster(NODE_ENVIRONMENTS) as made:
        yield made


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    """A launched Chromium; skipped when absent, except under CI where absence fails.

    One per module, not per session: Playwright's synchronous API runs an event loop in this
    thread while it is open, and the other tests' ``asyncio.run`` cannot run inside it.
    """
    reason = missing_reason()
    if reason is not None:
        if os.environ.get("CI"):
            pytest.fail(f"browser tests cannot run under CI: {reason}")
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()
