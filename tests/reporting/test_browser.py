"""report.html and compare.html in real headless Chromium: numbers, filters, drill-down, escaping.

Screenshots are written to the test's folder (and to $ABT_SCREENSHOT_DIR when set).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

try:
    from playwright.sync_api import expect
except ImportError:  # the chromium fixture skips (or fails under CI) with the reason
    expect = None

from agent_backtest.cli.app import app
from agent_backtest.reporting import write_compare, write_report
from agent_backtest.reporting.figures import interval
from agent_backtest.runs import MeanEstimate
from agent_backtest.trace import LLMResponse, Message
from agent_backtest.units import Unit
from tests.reporting.browser import keep_screenshot, missing_reason
from tests.reporting.conftest import HOSTILE_NODE
from tests.reporting.runs import PLANTED, build_run, golden, tau_units

pytestmark = pytest.mark.long

runner = CliRunner()
PLANTED_ROW = re.compile(re.escape(f"Sure. {PLANTED}"))


def open_page(chromium: Any, path: Path, problems: list[str], anchor: str = "") -> Any:
    """A new page showing ``path``; script errors and console errors land in ``problems``."""
    page = chromium.new_page(viewport={"width": 1300, "height": 900})
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on(
        "console",
        lambda message: (
            problems.append(f"console {message.type}: {message.text}")
            if message.type == "error"
            else None
        ),
    )
    page.on(
        "request",
        lambda request: (
            problems.append(f"request: {request.url}")
            if not request.url.startswith("file://")
            else None
        ),
    )
    page.goto(path.as_uri() + anchor)
    return page


def shot(page: Any, path: Path, full_page: bool = False) -> None:
    """Save a screenshot (kept in $ABT_SCREENSHOT_DIR when set)."""
    page.screenshot(path=str(path), full_page=full_page)
    keep_screenshot(path)


def planted_ran(page: Any) -> Any:
    """What a planted script would have set, had it run."""
    return page.evaluate("() => window.__planted")


def test_report_page_shows_summary_filters_and_drills_down(
    chromium: Any, candidate_run: Path, tmp_path: Path
) -> None:
    write_report(candidate_run)
    summary = json.loads((candidate_run / "summary.json").read_text())
    problems: list[str] = []
    page = open_page(chromium, candidate_run / "report.html", problems)
    page.wait_for_selector("body[data-ready='1']")

    for key in ("agreement", "strict"):
        estimate = summary["overall"][key]
        card = page.locator(f"#headline [data-metric='{key}']")
        assert float(card.get_attribute("data-value")) == estimate["mean"]
        assert card.locator(".mean").inner_text() == f"{estimate['mean']:.3f}"
        assert card.locator(".interval").inner_text() == interval(
            MeanEstimate.model_validate(estimate)
        )
    for key in ("infra_errors", "unscored"):
        card = page.locator(f"#headline [data-metric='{key}']")
        assert card.locator(".mean").inner_text() == str(summary["counts"][key])
    assert summary["counts"]["infra_errors"] == 1
    for label, figures in summary["by_node"].items():
        row = page.locator("#by-node tr", has=page.get_by_text(label, exact=True))
        assert f"{figures['agreement']['mean']:.3f}" in row.inner_text()
    shot(page, tmp_path / "report-top.png", full_page=True)

    total = summary["counts"]["records"]
    assert page.locator("#shown-count").inner_text().startswith(f"1–{total} of {total}")
    page.select_option("#filter-bucket", "text_instead_of_tool")
    expected = summary["buckets"]["text_instead_of_tool"]
    assert page.locator("#unit-table tbody tr").count() == expected
    assert set(page.locator("#unit-table tbody .pill").all_inner_texts()) == {
        "text_instead_of_tool"
    }
    page.select_option("#filter-bucket", "")
    page.select_option("#filter-node", HOSTILE_NODE)  # the option shows the markup as text
    assert page.locator("#unit-table tbody tr").count() == _records_in_node(
        candidate_run, HOSTILE_NODE
    )
    page.select_option("#filter-node", "")

    page.fill("#filter-text", "CHANGED-9")
    expect(page.locator("#unit-table tbody tr")).to_have_count(1)
    page.locator("#unit-table tbody tr").first.click()
    detail = page.locator("#detail")
    assert detail.locator("[data-fact='bucket']").inner_text() == "args_mismatch"
    golden_mark = page.locator("#golden-answer .diff")
    candidate_mark = page.locator("#candidate-answer .diff")
    assert golden_mark.count() == 1 and candidate_mark.count() == 1
    assert "CHANGED-9" in candidate_mark.inner_text()
    assert "CHANGED-9" not in golden_mark.inner_text()
    path = golden_mark.get_attribute("data-path")
    assert page.locator("#differences").inner_text().count(path) >= 1
    shot(page, tmp_path / "report-args-drilldown.png")

    page.fill("#filter-text", "sure. <script>")
    expect(page.locator("#unit-table tbody tr")).to_have_text([PLANTED_ROW])
    page.locator("#unit-table tbody tr").first.click()
    assert PLANTED in page.locator("#candidate-answer").inner_text()
    page.fill("#filter-text", "")
    expect(page.locator("#unit-table tbody tr")).to_have_count(total)
    page.locator("#unit-table tbody tr").nth(3).click()
    page.locator("#context summary").click()
    expect(page.locator("#context")).to_contain_text(PLANTED)
    shot(page, tmp_path / "report-context.png")

    assert planted_ran(page) is None
    assert page.locator("#detail script, #detail img, #units img").count() == 0
    assert problems == []


def _records_in_node(run: Path, node: str) -> int:
    """Score records of a node: the rows the node filter must show."""
    scores = [json.loads(line) for line in (run / "scores.jsonl").read_text().splitlines()]
    return sum(s["node"] == node for s in scores)


def test_compare_page_matches_compare_json_and_links_to_units(
    chromium: Any, baseline_run: Path, candidate_run: Path, tmp_path: Path
) -> None:
    write_report(baseline_run)
    write_report(candidate_run)
    outcome = write_compare(baseline_run, candidate_run)
    compare = json.loads(outcome.json_path.read_text())
    problems: list[str] = []
    page = open_page(chromium, outcome.html_path, problems)
    for key in ("agreement", "strict"):
        cell = page.locator(f"[data-metric='{key}-difference']")
        assert float(cell.get_attribute("data-value")) == compare[key]["difference"]["mean"]
    assert (
        float(page.locator("[data-metric='p_value']").get_attribute("data-value"))
        == compare["mcnemar"]["p_value"]
    )
    down = compare["flips"]["a_right_b_wrong"]
    assert page.locator("tr[data-flip='a_right_b_wrong']").count() == len(down) > 0
    shot(page, tmp_path / "compare.png", full_page=True)

    first = down[0]
    page.locator("tr[data-flip='a_right_b_wrong'] a.open-b").first.click()
    page.wait_for_selector("#detail:not([hidden])")
    assert page.locator("[data-fact='unit']").inner_text() == first["unit_id"]
    assert page.locator("[data-fact='bucket']").inner_text() == first["bucket_b"]
    assert planted_ran(page) is None
    assert problems == []


@pytest.fixture(scope="module")
def large_run(units40: list, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """10,000 answers: the 40 units copied into 250 sessions each."""
    units = [
        unit.model_copy(
            update={
                "unit_id": f"u-big-{copy:03d}-{index:02d}",
                "session_id": f"{unit.session_id}-copy{copy}",
            }
        )
        for copy in range(250)
        for index, unit in enumerate(units40)
    ]
    return build_run(tmp_path_factory.mktemp("large") / "large", units, golden)


def test_large_report_opens_paginated(chromium: Any, large_run: Path, tmp_path: Path) -> None:
    code = runner.invoke(app, ["report", str(large_run)]).exit_code
    assert code == 0
    problems: list[str] = []
    page = open_page(chromium, large_run / "report.html", problems)
    page.wait_for_selector("body[data-ready='1']", timeout=60_000)
    assert page.locator("#shown-count").inner_text().startswith("1–50 of 10000")
    assert page.locator("#unit-table tbody tr").count() == 50
    page.click("#page-next")
    assert page.locator("#shown-count").inner_text().startswith("51–100 of 10000")
    page.fill("#filter-text", "copy249")
    expect(page.locator("#shown-count")).to_contain_text("1–40 of 40 ")
    page.locator("#unit-table tbody tr").last.click()
    assert page.locator("[data-fact='unit']").inner_text() == "u-big-249-39"
    assert "null" not in page.locator("#detail").inner_text()
    shot(page, tmp_path / "report-large.png")
    assert problems == []


def test_a_missing_browser_is_named_with_its_install_step(tmp_path: Path) -> None:
    assert missing_reason(tmp_path / "chromium") == (
        f"no browser at {tmp_path / 'chromium'}: apt-get install -y chromium"
    )


def rethought(unit: Unit) -> LLMResponse:
    """Production's think call with another thought: only a judge could decide it."""
    calls = [
        call.model_copy(update={"arguments": {"thought": "I should look at the booking first."}})
        for call in unit.golden.message.tool_calls or []
    ]
    message = unit.golden.message.model_copy(update={"tool_calls": calls})
    return unit.golden.model_copy(update={"message": message})


def test_drill_down_shows_why_a_free_text_argument_is_not_decided(
    chromium: Any, tmp_path: Path
) -> None:
    thinking = [
        u
        for u in tau_units(tmp_path, 120)
        if [c.name for c in u.golden.message.tool_calls or []] == ["think"]
    ][:3]
    run = build_run(tmp_path / "thinking", thinking, rethought)
    write_report(run)
    judged = json.loads((run / "scores.jsonl").read_text().splitlines()[0])["judged"][0]
    problems: list[str] = []
    page = open_page(chromium, run / "report.html", problems)
    page.select_option("#filter-tool", "think")
    expect(page.locator("#unit-table tbody tr")).to_have_count(3)
    page.locator("#unit-table tbody tr").first.click()
    verdict = page.locator("#judge .verdict")
    assert judged["target"] in verdict.inner_text()
    assert page.locator("#judge .reason").all_inner_texts() == judged["reasons"]
    assert problems == []


def test_a_key_pasted_into_a_message_is_masked_on_the_page(chromium: Any, tmp_path: Path) -> None:
    pasted = "sk-proj-PastedIntoTheChat0123456789abcd"
    units = [
        unit.model_copy(
            update={
                "request": unit.request.model_copy(
                    update={
                        "messages": [
                            *unit.request.messages,
                            Message(role="user", content=f"my key is {pasted}"),
                        ]
                    }
                )
            }
        )
        for unit in tau_units(tmp_path, 2)
    ]
    run = build_run(tmp_path / "pasted", units, golden)
    for show_secrets, shown in ((False, "my key is [redacted]"), (True, f"my key is {pasted}")):
        write_report(run, show_secrets=show_secrets)
        problems: list[str] = []
        page = open_page(chromium, run / "report.html", problems)
        page.wait_for_selector("body[data-ready='1']")
        page.locator("#unit-table tbody tr").first.click()
        page.locator("#context summary").click()
        expect(page.locator("#context")).to_contain_text(shown)
        if not show_secrets:
            assert pasted not in page.content()
            shot(page, tmp_path / "report-masked-key.png")
        assert problems == []
