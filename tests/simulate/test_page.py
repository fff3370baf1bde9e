"""report.html of a simulate run in real headless Chromium: it opens with no error and no
request, shows each conversation as a transcript under its verdict, filters by verdict, owner
and family, and shows a planted script as text that never runs.

Screenshots go to the test's folder (and to $ABT_SCREENSHOT_DIR when set).
"""

from __future__ import annotations

import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.fake_openai import FakeOpenAI
from tests.reporting.browser import keep_screenshot
from tests.simulate.conftest import agent_config, flows_file, scripted, target_file
from tests.simulate.judge_runs import FAIL, PASS, flow_of, replies, write_config
from tests.simulate.judged_runs import Planned, judged_run
from tests.simulate.pages import open_page, visible

PLANTED = '<script>window.__planted = 1</script><img src=x onerror="window.__planted = 2">'
PLANS = [
    Planned("n1", "notes", "s1", "pass", user=f"Save a note {PLANTED} please"),
    Planned("n2", "notes", "s1", "fail", result_length=5000),
    Planned("n3", "notes", "s2", "pass"),
    Planned("n4", "notes", "s3", "transport"),
    Planned("n5", "notes", "s3", "invalid"),
    Planned("c1", "calendar", "s4", "pass"),
    Planned("c2", "calendar", "s5", "fail_execution"),
    Planned("c3", "calendar", "s6", "not_played"),
]


@pytest.fixture(scope="module")
def page_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run judged by the scripted judge: every verdict kind, one flow not played. Tests ask
    for it before ``chromium``, whose event loop would stop the judging's own."""
    return judged_run(tmp_path_factory.mktemp("page"), "run", PLANS)


def test_the_page_opens_with_no_error_and_shows_each_flow_under_its_anchor(
    page_run: Path, chromium: Any, tmp_path: Path
) -> None:
    problems: list[str] = []
    page = open_page(chromium, page_run / "report.html", problems, "#flow-n2")
    assert visible(page) == [f"flow-{p.flow_id}" for p in PLANS]
    assert page.text_content("#shown-count") == "8 of 8 conversations shown"
    overall = page.locator('[data-metric="overall"]')
    assert overall.get_attribute("data-value") == str(3 / 5)
    assert "3 of 5 decided passed · 4 seeds · 8 flows" in overall.inner_text()
    assert page.locator('[data-metric="family:notes"] .mean').inner_text() == "0.667"
    failed = page.locator("#flow-n2")
    assert failed.locator(".turn.failed").count() == 1
    text = failed.inner_text()
    assert "claimed_without_call" in text and "no add_note call was made" in text
    assert "result: 2 of 5,000 characters kept" in text
    assert "first token 120 ms · turn 812 ms" in text
    assert '"title": "groceries"' in text
    assert "Save a note called groceries." in failed.locator("ol").inner_text()  # reproduction
    assert "connection reset by peer" in page.locator("#flow-n4").inner_text()
    assert "judge_invalid" in page.locator("#flow-n5").inner_text()
    assert "not played" in page.locator("#flow-c3").inner_text()
    page.screenshot(path=tmp_path / "simulate-page.png", full_page=True)
    keep_screenshot(tmp_path / "simulate-page.png")
    assert problems == []


def test_filters_by_verdict_owner_and_family_show_only_what_matches(
    page_run: Path, chromium: Any
) -> None:
    problems: list[str] = []
    page = open_page(chromium, page_run / "report.html", problems)
    page.select_option("#filter-verdict", "fail")
    assert visible(page) == ["flow-n2", "flow-c2"]
    assert page.text_content("#shown-count") == "2 of 8 conversations shown"
    page.select_option("#filter-owner", "model")
    assert visible(page) == ["flow-n2"]
    page.select_option("#filter-verdict", "")
    page.select_option("#filter-owner", "")
    page.select_option("#filter-family", "calendar")
    assert visible(page) == ["flow-c1", "flow-c2", "flow-c3"]
    page.select_option("#filter-verdict", "uncertain")
    assert visible(page) == []
    page.select_option("#filter-family", "notes")
    assert visible(page) == ["flow-n4", "flow-n5"]
    assert problems == []


def test_a_script_in_a_user_message_is_shown_as_text_and_never_runs(
    page_run: Path, chromium: Any
) -> None:
    problems: list[str] = []
    page = open_page(chromium, page_run / "report.html", problems)
    assert page.evaluate("() => window.__planted") is None
    assert PLANTED in page.locator("#flow-n1 .role-user pre").inner_text()
    assert page.locator("#flow-n1 script, #flow-n1 img").count() == 0
    assert problems == []


def test_the_page_holds_one_script_and_allows_no_network(page_run: Path) -> None:
    html = (page_run / "report.html").read_text()
    assert len(re.findall(r"<script", html)) == 1  # the planted one is escaped
    assert "default-src 'none'" in html


def test_a_run_played_through_a_live_agent_and_judged_gets_a_page_with_no_error(
    tmp_path: Path, agent: Any, chromium: Any
) -> None:
    flows = flows_file(
        tmp_path / "flows.jsonl",
        [
            scripted("greet-1", "hello", family="greet"),
            scripted("greet-2", f"hi {PLANTED}", family="greet"),
            scripted("lookup-1", "notes", family="lookup", mutates=False),
            scripted("errors-1", "boom", family="errors"),
        ],
    )
    target = target_file(tmp_path / "t.toml", agent.base_url)
    answer = replies(lambda body: FAIL if flow_of(body) == "greet-2" else PASS)
    with FakeOpenAI(reply=answer) as judge:
        config = write_config(tmp_path, ("main", judge.base_url))
        # its own process: the browser's event loop runs in this one
        result = subprocess.run(
            [sys.executable, "-m", "agent_backtest.cli", "simulate", "run", str(flows),
             "--target", str(target), "--out", "run", "--judge", "main/grader",
             "--config", str(config),
             "--agent-config", str(agent_config(tmp_path / "agent.toml", ["list_notes"]))],
            cwd=tmp_path, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    assert result.returncode == 1, result.stdout + result.stderr  # errors-1: incomplete
    assert "pass rate 0.667 [" in result.stdout
    assert "2 passed of 3 decided (3 seeds, 4 flows) · 1 uncertain" in result.stdout
    problems: list[str] = []
    page = open_page(chromium, tmp_path / "run" / "report.html", problems)
    assert visible(page) == ["flow-greet-1", "flow-greet-2", "flow-lookup-1", "flow-errors-1"]
    assert "list_notes" in page.locator("#flow-lookup-1").inner_text()  # the agent's own call
    page.select_option("#filter-family", "greet")
    page.select_option("#filter-verdict", "fail")
    assert visible(page) == ["flow-greet-2"]
    assert page.evaluate("() => window.__planted") is None
    assert problems == []


PASTED = "sk-proj-PastedIntoTheChat0123456789abcd"


@pytest.fixture(scope="module")
def keyed_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run whose failed conversation's user pasted a key, judged in a thread of its own: the
    module's Chromium may already run Playwright's event loop in this one."""
    plans = [
        Planned("k1", "notes", "s1", "fail", user=PASTED),
        Planned("k2", "notes", "s2", "pass"),
    ]
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(judged_run, tmp_path_factory.mktemp("keyed"), "keyed", plans).result()


def test_a_key_in_a_failed_conversation_is_masked_on_the_page_and_in_its_reproduction(
    keyed_run: Path, chromium: Any
) -> None:
    assert PASTED in (keyed_run / "verdicts.jsonl").read_text()  # the run keeps it exact
    problems: list[str] = []
    page = open_page(chromium, keyed_run / "report.html", problems)
    assert "[redacted]" in page.locator("#flow-k1 ol").inner_text()  # the reproduction
    assert PASTED not in page.content()
    assert problems == []
