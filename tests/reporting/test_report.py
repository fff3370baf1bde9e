"""``abt report``: results.csv rows, and a report.html that is self-contained and escapes traces."""

from __future__ import annotations

import csv
import json
import re
import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_backtest.cli.app import app
from agent_backtest.reporting import write_report
from agent_backtest.reporting.figures import quantity
from agent_backtest.reporting.markup import escape, script_json, tag
from agent_backtest.trace import LLMResponse, Message
from agent_backtest.units import Unit
from tests.reporting.conftest import HOSTILE_NODE
from tests.reporting.runs import PLANTED, build_run, golden, wrong

runner = CliRunner()


def json_block(html: str, name: str) -> object:
    """The parsed JSON of one data block of a page."""
    match = re.search(
        rf'<script type="application/json" id="{name}">(.*?)</script>', html, re.DOTALL
    )
    assert match, name
    return json.loads(match.group(1))


def test_report_writes_one_csv_row_per_unit_and_repeat(candidate_run: Path) -> None:
    result = runner.invoke(app, ["report", str(candidate_run)])
    assert result.exit_code == 0, result.output
    scores = [
        json.loads(line) for line in (candidate_run / "scores.jsonl").read_text().splitlines()
    ]
    with (candidate_run / "results.csv").open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["unit_id"], int(r["repeat"])) for r in rows] == [
        (s["unit_id"], s["repeat"]) for s in scores
    ]
    assert stat.S_IMODE((candidate_run / "results.csv").stat().st_mode) == 0o600
    by_bucket = {r["bucket"]: r for r in rows}
    text_for_tool = by_bucket["text_instead_of_tool"]
    assert text_for_tool["candidate_text"] == "Let me check."
    assert text_for_tool["golden_tool"] and text_for_tool["golden_args"].startswith("{")
    assert (text_for_tool["strict"], text_for_tool["score"]) == ("false", "0.0")
    changed = by_bucket["args_mismatch"]
    assert "CHANGED-9" in json.loads(changed["candidate_args"]).values()
    assert changed["golden_tool"] == changed["candidate_tool"]
    error = next(r for r in rows if r["status"] == "infra_error")
    assert (error["error_kind"], error["bucket"], error["score"]) == ("timeout", "", "")
    assert {r["node"] for r in rows} == {"booking", "lookup", HOSTILE_NODE}
    printed = " ".join(result.output.split())  # the line wrapping undone: paths vary in length
    assert "wrote" in printed and "(40 rows)" in printed


def test_csv_keeps_formula_like_trace_text_as_text(units40: list[Unit], tmp_path: Path) -> None:
    units = units40[:2]
    run = build_run(
        tmp_path / "formula",
        units,
        lambda u: LLMResponse(
            message=Message(role="assistant", content='=HYPERLINK("http://evil.example","x")')
        ),
    )
    assert runner.invoke(app, ["report", str(run)]).exit_code == 0
    with (run / "results.csv").open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert {r["candidate_text"] for r in rows} == {'\'=HYPERLINK("http://evil.example","x")'}


def test_report_html_is_self_contained_and_never_embeds_trace_markup(candidate_run: Path) -> None:
    assert runner.invoke(app, ["report", str(candidate_run)]).exit_code == 0
    html = (candidate_run / "report.html").read_text(encoding="utf-8")
    assert "<script>window.__planted" not in html and "<img src=x" not in html
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "<link" not in html and "@import" not in html
    assert "default-src 'none'" in html
    assert html.count("<script") == 4  # three JSON blocks and the page script
    units = json_block(html, "abt-units")
    rows = json_block(html, "abt-rows")
    messages = json_block(html, "abt-messages")
    assert len(rows) == 40 and len(units) == 40
    assert any(PLANTED in (m.get("text") or "") for m in messages)
    assert any(r["candidate"] and PLANTED in r["candidate"]["text"] for r in rows)
    # a session's shared history is stored once: fewer messages than context references
    assert len(messages) < sum(len(u["ctx"]) for u in units) / 4


def test_script_json_escapes_everything_that_could_leave_the_block() -> None:
    value = {"a": "</script><!-- & \u2028\u2029 >"}
    text = script_json(value)
    assert not set("<>&\u2028\u2029") & set(text)
    assert json.loads(text) == value
    assert (
        tag("td", "<b>&</b>", attrs={"title": '"x"'})
        == '<td title="&quot;x&quot;">&lt;b&gt;&amp;&lt;/b&gt;</td>'
    )
    assert escape(None) == ""


def test_report_warns_about_reconstructed_units_and_links_a_profile(
    units40: list[Unit], tmp_path: Path
) -> None:
    units = [u.model_copy(update={"reconstructed": i < 2}) for i, u in enumerate(units40[:6])]
    run = build_run(tmp_path / "rebuilt", units, golden)
    (run / "profile.json").write_text("{}")
    result = runner.invoke(app, ["report", str(run)])
    assert result.exit_code == 0
    assert "2 units were reconstructed, not recorded as sent" in result.output
    html = (run / "report.html").read_text()
    assert '<a href="profile.json">profile.json</a>' in html
    assert "2 units were reconstructed, not recorded as sent" in html


def test_report_markdown_summarises_for_a_pull_request(candidate_run: Path) -> None:
    summary = json.loads((candidate_run / "summary.json").read_text())
    result = runner.invoke(app, ["report", str(candidate_run), "--format", "markdown"])
    assert result.exit_code == 0
    text = result.stdout
    assert text.startswith("### abt report: candidate\n")
    assert f"| exact (exactly right) | {summary['overall']['strict']['mean']:.3f} [" in text
    assert f"| agreement (partial credit) | {summary['overall']['agreement']['mean']:.3f} [" in text
    assert "| intervals | 95% CI, clustered by session (" in text
    assert "| infrastructure errors | 1 |" in text
    assert "&lt;img src=x" in text and "<img" not in text
    assert "wrote" in result.stderr and "wrote" not in text


@pytest.mark.parametrize("remove", ["scores.jsonl", "run.json"])
def test_report_of_a_run_that_is_not_scored_is_a_user_error(
    units40: list[Unit], tmp_path: Path, remove: str
) -> None:
    run = build_run(tmp_path / "plain", units40[:2], wrong)
    (run / remove).unlink()
    result = runner.invoke(app, ["report", str(run)])
    assert result.exit_code == 2
    assert result.stderr.startswith("abt: error: ") and result.stderr.count("\n") == 1


def routed_units(units: list[Unit]) -> list[Unit]:
    """The first 12 units that call a tool: every other one a router step; the first 6 served
    by agent version 1.0, the others by 2.0."""
    calling = [u for u in units if u.golden.message.tool_calls][:12]
    return [
        u.model_copy(
            update={"kind": "action" if i % 2 else "router", "agent_version": f"{1 + i // 6}.0"}
        )
        for i, u in enumerate(calling)
    ]


def test_report_shows_router_agreement_labels_and_agent_versions(
    units40: list[Unit], tmp_path: Path
) -> None:
    units = routed_units(units40)
    run = build_run(
        tmp_path / "routed",
        units,
        lambda u: wrong(u) if u.unit_id == units[0].unit_id else golden(u),
        labels={"team": "search", "prompt": "=v2"},
    )
    summary = json.loads((run / "summary.json").read_text())
    topic = summary["topic_agreement"]
    assert (topic["n"], topic["mean"]) == (6, pytest.approx(5 / 6))
    assert summary["labels"] == {"prompt": "=v2", "team": "search"}
    assert sorted(summary["by_agent_version"]) == ["1.0", "2.0"]
    assert summary["by_agent_version"]["1.0"]["agreement"]["n"] == 6

    result = runner.invoke(app, ["report", str(run)])
    assert result.exit_code == 0, result.output
    assert "router agreement 0.833 " in result.output and "(n 6, " in result.output
    html = (run / "report.html").read_text()
    card = re.search(r'<div class="metric" data-metric="topic_agreement"[^>]*>', html)
    assert card and repr(5 / 6) in card.group(0)
    assert "same routing target on 6 router answers" in html
    table = re.search(r'<table id="by-agent-version">(.*?)</table>', html, re.DOTALL)
    assert table and 'data-group="1.0"' in table.group(1) and 'data-group="2.0"' in table.group(1)
    assert "<code>prompt==v2 · team=search</code>" in html

    with (run / "results.csv").open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0])[-2:] == ["label.prompt", "label.team"]
    # a label that reads like a formula stays text in a spreadsheet
    assert {(r["label.prompt"], r["label.team"]) for r in rows} == {("'=v2", "search")}
    assert {r["agent_version"] for r in rows} == {"1.0", "2.0"}

    markdown = runner.invoke(app, ["report", str(run), "--format", "markdown"]).stdout
    assert "| router agreement | 0.833 [" in markdown and "(n 6, " in markdown
    assert "| labels | prompt==v2 · team=search |" in markdown


def test_report_leaves_out_router_agreement_and_versions_the_run_does_not_have(
    candidate_run: Path,
) -> None:
    assert runner.invoke(app, ["report", str(candidate_run)]).exit_code == 0
    summary = json.loads((candidate_run / "summary.json").read_text())
    assert summary["topic_agreement"]["n"] == 0
    assert list(summary["by_agent_version"]) == ["(not recorded)"]
    html = (candidate_run / "report.html").read_text()
    assert 'data-metric="topic_agreement"' not in html and "by-agent-version" not in html
    assert "<dt>labels</dt>" not in html
    with (candidate_run / "results.csv").open(newline="", encoding="utf-8") as handle:
        header = next(csv.reader(handle))
    assert not any(name.startswith("label.") for name in header)


def test_a_summary_this_version_cannot_read_sends_the_user_to_score_again(
    units40: list[Unit], tmp_path: Path
) -> None:
    run = build_run(tmp_path / "old", units40[:2], golden)
    summary = json.loads((run / "summary.json").read_text())
    summary["schema"] = "abt.summary/1"
    del summary["by_agent_version"]
    (run / "summary.json").write_text(json.dumps(summary))
    for command in (["report"], ["gate", "--min-agreement", "0.5"], ["compare", str(run)]):
        result = runner.invoke(app, [command[0], str(run), *command[1:]])
        assert result.exit_code == 2
        assert result.stderr.startswith(f"abt: error: {run / 'summary.json'}: not a summary")
        assert f"score the run again: abt score {run}" in result.stderr
        assert result.stderr.count("\n") == 1


def test_latencies_read_in_milliseconds_or_seconds() -> None:
    assert [quantity(v, "ms") for v in (5.1, 812.3, 48_750.0, 432_100.0)] == [
        "5.1 ms",
        "812 ms",
        "48.8 s",
        "7.2 min",
    ]
    assert quantity(12_345.0, "tokens") == "12,345 tokens" and quantity(None, "ms") == "n/a"


def test_the_page_explains_its_figures_and_keeps_numbers_readable(candidate_run: Path) -> None:
    write_report(candidate_run)
    page = (candidate_run / "report.html").read_text()
    assert 'id="headline-explained"' in page and "95% CI, clustered by session (" in page
    assert "decided " in page and "text not judged" in page
    # where the undecided answers would put the figures over every answer, beside the headline
    summary = json.loads((candidate_run / "summary.json").read_text())
    low, high = summary["undecided_bounds"]["agreement"]
    assert 'id="undecided-bounds"' in page
    assert "undecided counted all wrong or all right: exact " in page
    assert f"agreement {low:.3f}–{high:.3f}" in page
    assert not re.search(r"\d\.\d+e\+\d\d", page)  # no 4.875e+04 anywhere
