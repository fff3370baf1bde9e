"""report.html of a bench run in real headless Chromium: figures, cases, rollouts, escaping.

The page must be readable with scripts off (it has none), open each case's rollouts side by
side, and show text from traces as text. Screenshots go to the test's folder (and to
$ABT_SCREENSHOT_DIR when set).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_backtest.bench.page import figure
from agent_backtest.bench.results import CaseMean, write_results
from tests.bench.results_runs import PLANTED, tau_episodes, write_run
from tests.reporting.browser import keep_screenshot


@pytest.fixture(scope="module")
def page_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Tasks 0–5 (24 episodes): one ended by a timeout, one whose user planted a script."""
    episodes = {e.record.key: e for e in tau_episodes(range(6))}
    episodes["0", 1] = episodes["0", 1].failed("model_timeout")
    messages = list(episodes["0", 0].session.metadata["transcript"])
    messages[1] = {**messages[1], "content": f"hello {PLANTED} there"}
    episodes["0", 0] = episodes["0", 0].with_transcript(messages)
    run = write_run(tmp_path_factory.mktemp("bench") / "run", episodes.values())
    write_results(run)
    return run


def open_page(chromium: Any, path: Path, problems: list[str], scripts: bool) -> Any:
    """A page showing ``path``; script and console errors and any request land in ``problems``."""
    context = chromium.new_context(
        viewport={"width": 1400, "height": 900}, java_script_enabled=scripts
    )
    page = context.new_page()
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on(
        "console",
        lambda m: problems.append(f"console: {m.text}") if m.type == "error" else None,
    )
    page.on(
        "request",
        lambda r: problems.append(f"request: {r.url}") if not r.url.startswith("file:") else None,
    )
    page.goto(path.as_uri())
    return page


def test_the_page_reads_without_scripts_and_opens_each_case_side_by_side(
    chromium: Any, page_run: Path, tmp_path: Path
) -> None:
    summary = json.loads((page_run / "summary.json").read_text())
    problems: list[str] = []
    page = open_page(chromium, page_run / "report.html", problems, scripts=False)
    card = page.locator("[data-metric='pass_hat_1']")
    assert float(card.get_attribute("data-value")) == summary["pass_hat_k"]["1"]["mean"]
    assert page.locator("[data-metric='errors'] .mean").inner_text() == "1"
    for k in ("1", "2", "3", "4"):
        row = page.locator(f"#passk tr[data-k='{k}']").inner_text()
        hat = CaseMean.model_validate(summary["pass_hat_k"][k])
        assert figure(hat) in row
    # task 0 lost rollout 1 to the timeout: pass^4 rests on the 5 other cases
    assert page.locator("#passk tr[data-k='4'] td.num").inner_text() == "5"
    assert page.locator("#passk tr[data-k='3'] td.num").inner_text() == "6"
    assert page.locator("#errors").inner_text().count("model_timeout") == 1

    case = page.locator("details.case[data-case='0']")
    rollouts = case.locator(".rollout")
    assert not rollouts.first.is_visible()  # folded until opened: no script needed for it
    case.locator(":scope > summary").click()
    assert rollouts.count() == 4
    boxes = [rollouts.nth(i).bounding_box() for i in range(4)]
    assert len({round(b["y"]) for b in boxes}) == 1  # one row
    assert [b["x"] for b in boxes] == sorted(b["x"] for b in boxes)
    assert "model_timeout" in rollouts.nth(1).inner_text()
    assert "final_state" in rollouts.nth(0).inner_text()
    assert PLANTED in rollouts.nth(0).locator(".message.role-user").first.inner_text()
    assert "0 of 3 graded rollouts passed" in case.locator(":scope > summary").inner_text()
    page.screenshot(path=str(tmp_path / "bench-report-case.png"), full_page=False)
    keep_screenshot(tmp_path / "bench-report-case.png")
    assert problems == []


def test_text_from_traces_never_runs_even_with_scripts_on(chromium: Any, page_run: Path) -> None:
    html = (page_run / "report.html").read_text()
    assert "<script" not in html  # the planted one is escaped, and the page has none
    assert "script-src 'none'" in html
    problems: list[str] = []
    page = open_page(chromium, page_run / "report.html", problems, scripts=True)
    page.locator("details.case[data-case='0'] > summary").click()
    assert PLANTED in page.locator("details.case[data-case='0']").inner_text()
    assert page.evaluate("() => window.__planted") is None
    assert problems == []
