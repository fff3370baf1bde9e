"""``abt compare``: pairing, the paired difference, McNemar's exact test, flips, missing units,
and the ``--max-drop`` bar."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_backtest.cli.app import app
from agent_backtest.errors import InputError
from agent_backtest.reporting import write_compare
from agent_backtest.reporting.figures import p_text
from agent_backtest.runs import RunDirectory
from agent_backtest.statistics import mcnemar_exact
from agent_backtest.units import Unit
from tests.reporting.runs import build_run, golden, tau_units, timeout, wrong

runner = CliRunner()


def test_mcnemar_exact_p_values_match_hand_computed_binomial_tails() -> None:
    # 1 vs 6 discordant: 2 · P(X ≤ 1 | n=7, ½) = 2 · (1 + 7) / 2⁷
    assert mcnemar_exact(1, 6) == pytest.approx(16 / 128, abs=1e-12)
    assert mcnemar_exact(6, 1) == pytest.approx(16 / 128, abs=1e-12)
    # 6 vs 2: 2 · (1 + 8 + 28) / 2⁸
    assert mcnemar_exact(6, 2) == pytest.approx(74 / 256, abs=1e-12)
    assert mcnemar_exact(0, 5) == pytest.approx(2 / 32, abs=1e-12)
    assert mcnemar_exact(3, 3) == 1.0
    assert mcnemar_exact(0, 0) == 1.0


@pytest.fixture(scope="module")
def units(tmp_path_factory: pytest.TempPathFactory) -> list[Unit]:
    """The first 40 τ-bench units."""
    return tau_units(tmp_path_factory.mktemp("compare-units"), 40)


def runs_with_flips(units: list[Unit], folder: Path) -> tuple[Path, Path]:
    """A wrong on units 0–1, B wrong on 0 and 2–7: one flip up (1), six down (2–7)."""
    a_wrong = {units[i].unit_id for i in (0, 1)}
    b_wrong = {units[i].unit_id for i in (0, 2, 3, 4, 5, 6, 7)}
    a = build_run(folder / "a", units, lambda u: wrong(u) if u.unit_id in a_wrong else golden(u))
    b = build_run(folder / "b", units, lambda u: wrong(u) if u.unit_id in b_wrong else golden(u))
    return a, b


def test_compare_counts_known_flips_and_tests_them(units: list[Unit], tmp_path: Path) -> None:
    a, b = runs_with_flips(units, tmp_path)
    result = runner.invoke(app, ["compare", str(a), str(b)])
    assert result.exit_code == 0, result.output
    compare = json.loads((b / "compare.json").read_text())
    assert (b / "compare.html").exists()
    test = compare["mcnemar"]
    assert (test["a_right_b_wrong"], test["a_wrong_b_right"]) == (6, 1)
    assert (test["both_right"], test["both_wrong"]) == (32, 1)
    assert test["p_value"] == pytest.approx(16 / 128, abs=1e-12)
    assert [f["unit_id"] for f in compare["flips"]["a_right_b_wrong"]] == [
        units[i].unit_id for i in range(2, 8)
    ]
    assert [f["unit_id"] for f in compare["flips"]["a_wrong_b_right"]] == [units[1].unit_id]
    strict = compare["strict"]
    assert strict["a"]["mean"] == pytest.approx(38 / 40)
    assert strict["b"]["mean"] == pytest.approx(33 / 40)
    assert strict["difference"]["mean"] == pytest.approx(-5 / 40)
    low, high = strict["difference"]["ci95"]
    assert low < -5 / 40 < high
    assert compare["counts"] == {
        "paired": 40,
        "sessions": 4,
        "only_in_a": 0,
        "only_in_b": 0,
        "not_comparable": 0,
    }
    deltas = [abs(row["difference"]["mean"]) for row in compare["by_tool"]]
    assert deltas == sorted(deltas, reverse=True)
    assert sum(row["n"] for row in compare["by_tool"]) == 40
    assert "1 wrong → right" in result.output and "unclustered: 0.125" in result.output
    assert f"p {p_text(strict['p_value'])} by session" in " ".join(result.output.split())


def test_compare_counts_and_lists_units_missing_from_either_side(
    units: list[Unit], tmp_path: Path
) -> None:
    a = build_run(tmp_path / "a", units[:30], golden)
    broken = units[12].unit_id
    b = build_run(
        tmp_path / "b", units[5:], lambda u: timeout(u) if u.unit_id == broken else golden(u)
    )
    out = tmp_path / "elsewhere"
    result = runner.invoke(app, ["compare", str(a), str(b), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert not (b / "compare.json").exists()
    compare = json.loads((out / "compare.json").read_text())
    assert compare["counts"] == {
        "paired": 24,
        "sessions": compare["counts"]["sessions"],
        "only_in_a": 5,
        "only_in_b": 10,
        "not_comparable": 1,
    }
    missing = compare["missing"]
    assert [m["unit_id"] for m in missing["only_in_a"]] == [u.unit_id for u in units[:5]]
    assert [m["unit_id"] for m in missing["only_in_b"]] == [u.unit_id for u in units[30:]]
    assert missing["not_comparable"] == [
        {
            "unit_id": broken,
            "repeat": 0,
            "session_id": units[12].session_id,
            "status_a": "scored",
            "status_b": "infra_error",
            "error_a": None,
            "error_b": "timeout",
        }
    ]
    assert any("5 answers are only in A and 10 only in B" in w for w in compare["warnings"])
    assert "5 only in A, 10 only in B, 1 not decided on both sides" in result.output
    html = (out / "compare.html").read_text()
    assert all(u.unit_id in html for u in units[:5] + units[30:])


def test_max_drop_bar_exits_3_and_says_why(units: list[Unit], tmp_path: Path) -> None:
    a, b = runs_with_flips(units, tmp_path)
    failed = runner.invoke(app, ["compare", str(a), str(b), "--max-drop", "0.02"])
    assert failed.exit_code == 3
    assert "bar not met" in failed.stderr and "-0.125" in failed.stderr
    assert runner.invoke(app, ["compare", str(a), str(b), "--max-drop", "0.2"]).exit_code == 0
    compare = json.loads((b / "compare.json").read_text())
    low = compare["agreement"]["difference"]["ci95"][0]
    assert low < -0.2  # the interval reaches past the bar the point estimate meets
    strict = runner.invoke(
        app, ["compare", str(a), str(b), "--max-drop", "0.2", "--use-lower-bound"]
    )
    assert strict.exit_code == 3
    assert "lower bound of the 95% interval" in strict.stderr


def test_compare_markdown_is_a_pull_request_summary(units: list[Unit], tmp_path: Path) -> None:
    a, b = runs_with_flips(units, tmp_path)
    result = runner.invoke(
        app, ["compare", str(a), str(b), "--format", "markdown", "--max-drop", "0.02"]
    )
    assert result.exit_code == 3
    assert result.stdout.startswith("### abt compare: a → b\n")
    assert "| exact | 0.950 " in result.stdout
    assert "6 right → wrong, 1 wrong → right (McNemar exact p = 0.125, unclustered" in result.stdout
    assert "**gate failed**" in result.stdout
    assert "wrote" not in result.stdout and "wrote" in result.stderr


def test_compare_of_an_unscored_run_is_a_user_error(units: list[Unit], tmp_path: Path) -> None:
    a = build_run(tmp_path / "a", units[:3], golden)
    (a / "scores.jsonl").unlink()
    result = runner.invoke(app, ["compare", str(a), str(a)])
    assert result.exit_code == 2
    assert f"is not scored yet: run abt score {a} first" in result.stderr


def test_compare_shows_router_agreement_and_both_runs_labels(
    units: list[Unit], tmp_path: Path
) -> None:
    calling = [u for u in units if u.golden.message.tool_calls][:12]
    routed = [
        u.model_copy(update={"kind": "router"}) if i % 2 else u for i, u in enumerate(calling)
    ]
    routers = [u.unit_id for u in routed if u.kind == "router"]
    a = build_run(tmp_path / "a", routed, golden, labels={"prompt": "v1"})
    b = build_run(
        tmp_path / "b",
        routed,
        lambda u: wrong(u) if u.unit_id in routers[:2] else golden(u),
        labels={"prompt": "v2", "team": "search"},
    )
    result = runner.invoke(app, ["compare", str(a), str(b)])
    assert result.exit_code == 0, result.output
    compare = json.loads((b / "compare.json").read_text())
    assert compare["schema"] == "abt.compare/3"
    assert (compare["a"]["labels"], compare["b"]["labels"]) == (
        {"prompt": "v1"},
        {"prompt": "v2", "team": "search"},
    )
    topic = compare["topic_agreement"]
    assert (topic["a"]["n"], topic["a"]["mean"], topic["b"]["mean"]) == (6, 1.0, 4 / 6)
    assert topic["difference"]["mean"] == pytest.approx(-2 / 6)
    assert compare["b"]["topic_agreement"]["mean"] == pytest.approx(4 / 6)
    assert "router agreement (n 6): A 1.000 [" in result.output
    html = (b / "compare.html").read_text()
    row = re.search(r'<tr data-row="topic_agreement">(.*?)</tr>', html, re.DOTALL)
    assert row and "router agreement (n 6, " in row.group(1) and "-0.333 [" in row.group(1)
    labels = re.search(r'<tr data-fact="labels">(.*?)</tr>', html, re.DOTALL)
    assert labels and "prompt=v1" in labels.group(1)
    assert "prompt=v2 · team=search" in labels.group(1)
    markdown = runner.invoke(app, ["compare", str(a), str(b), "--format", "markdown"]).stdout
    assert "| router agreement (n 6) | 1.000 [" in markdown
    assert "Labels: A prompt=v1 · B prompt=v2 · team=search" in markdown


def test_compare_without_router_units_shows_no_router_agreement(
    units: list[Unit], tmp_path: Path
) -> None:
    a, b = runs_with_flips(units, tmp_path)
    result = runner.invoke(app, ["compare", str(a), str(b)])
    assert result.exit_code == 0
    assert json.loads((b / "compare.json").read_text())["topic_agreement"]["a"]["n"] == 0
    assert "router agreement" not in result.output
    assert "router agreement" not in (b / "compare.html").read_text()


def test_comparison_reads_back_and_refuses_another_version(
    units: list[Unit], tmp_path: Path
) -> None:
    a, b = runs_with_flips(units, tmp_path)
    outcome = write_compare(a, b)
    directory = RunDirectory(b)
    assert directory.read_comparison() == outcome.compare
    data = json.loads(directory.comparison_path.read_text())
    data["schema"] = "abt.compare/1"
    directory.comparison_path.write_text(json.dumps(data))
    with pytest.raises(InputError) as caught:
        directory.read_comparison()
    assert caught.value.file == str(directory.comparison_path)
    assert "compare the runs again" in str(caught.value)
