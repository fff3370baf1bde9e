"""What a replay costs: the plan's estimate, ``--max-cost`` before and during the run, and the
spend per role in summary.json, the terminal and the page, against the strict test server with
a price table in abt.toml.

The test server reports ``prompt_tokens = len(json.dumps(body)) // 4`` and 12 completion tokens
for every answer, so what a run spent is computed here from the bodies the server received,
not from anything abt wrote.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import TAU_TOOLS, TAU_TRAJECTORIES
from tests.fake_openai import FakeOpenAI
from tests.replaying.test_replay_cli import SECRET, abt, records

INPUT_PRICE = 2.0  # USD per million tokens
OUTPUT_PRICE = 8.0
JUDGE_INPUT_PRICE = 1.0
JUDGE_OUTPUT_PRICE = 4.0
PRICES = f"""
[prices."openai/candidate-1"]
input = {INPUT_PRICE}
output = {OUTPUT_PRICE}

[prices."openai/judge-1"]
input = {JUDGE_INPUT_PRICE}
output = {JUDGE_OUTPUT_PRICE}
"""


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "abt.toml"
    path.write_text(PRICES)
    return path


def flat(output: str) -> str:
    return " ".join(output.split())


def replay(units: Path, server: FakeOpenAI, out: Path, config: Path, *extra: object):
    return abt(
        "replay", units, "--model", "openai/candidate-1", "--base-url", server.base_url,
        "--out", out, "--config", config, "--cache-dir", out.parent / "cache", *extra,
    )  # fmt: skip


def paid(bodies: list[dict], input_price: float, output_price: float) -> float:
    """What the server's answers to ``bodies`` cost, from the usage it reports for each."""
    tokens_in = sum(len(json.dumps(body)) // 4 for body in bodies)
    return (tokens_in * input_price + 12 * len(bodies) * output_price) / 1e6


RECORDED_INPUT, RECORDED_OUTPUT = 100, 20


@pytest.fixture
def priced_units(units_file: Path, tmp_path: Path) -> Path:
    """The τ-bench units (which record no token counts) with production's usage set to
    100 input and 20 output tokens a call."""
    path = tmp_path / "units-with-usage.jsonl"
    lines = []
    for line in units_file.read_text().splitlines():
        unit = json.loads(line)
        unit["golden"]["usage"] = {"input_tokens": RECORDED_INPUT, "output_tokens": RECORDED_OUTPUT}
        lines.append(json.dumps(unit))
    path.write_text("\n".join(lines) + "\n")
    return path


def recorded_estimate(calls: int) -> float:
    """The candidate's estimate of ``calls`` calls from the usage production recorded."""
    return calls * (RECORDED_INPUT * INPUT_PRICE + RECORDED_OUTPUT * OUTPUT_PRICE) / 1e6


def test_a_dry_run_prints_the_estimate_from_the_recorded_usage(
    priced_units: Path, tmp_path: Path, config: Path
) -> None:
    with FakeOpenAI(strict=True) as server:
        code, output = replay(priced_units, server, tmp_path / "dry", config, "--limit", "5",
                              "--dry-run")  # fmt: skip
        assert server.total == 0
    assert code == 0, output
    expected = recorded_estimate(5)
    assert f"estimated cost, candidate: ${expected:.4f} for 5 calls ·" in flat(output)


def test_units_without_recorded_usage_are_sized_from_characters(
    units_file: Path, tmp_path: Path, config: Path
) -> None:
    with FakeOpenAI(strict=True) as server:
        code, output = replay(units_file, server, tmp_path / "dry", config, "--limit", "3",
                              "--dry-run", "--k", "2")  # fmt: skip
    assert code == 0, output
    assert "for 6 calls, 6 sized from characters" in flat(output)


def test_a_budget_below_the_estimate_is_refused_before_anything(
    priced_units: Path, tmp_path: Path, config: Path
) -> None:
    estimate = recorded_estimate(5)
    out = tmp_path / "refused"
    with FakeOpenAI(strict=True) as server:
        code, output = replay(priced_units, server, out, config, "--limit", "5",
                              "--max-cost", f"{estimate / 2:.6f}")  # fmt: skip
        assert server.total == 0
    assert code == 2, output
    lines = output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("abt: error: --max-cost: "), output
    assert f"estimated at ${estimate:.4f}" in lines[0]
    assert not out.exists()


def test_a_budget_on_an_unpriced_model_is_refused(units_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "unpriced"
    with FakeOpenAI(strict=True) as server:
        code, output = abt(
            "replay", units_file, "--model", "openai/no-such-model-anywhere", "--base-url",
            server.base_url, "--out", out, "--limit", "2", "--max-cost", "5",
        )  # fmt: skip
    assert code == 2, output
    assert "no price: openai/no-such-model-anywhere" in flat(output)
    assert not out.exists()


def test_spent_per_role_is_what_the_answers_reported(
    units_file: Path, tmp_path: Path, config: Path
) -> None:
    run = tmp_path / "runs" / "priced"
    with FakeOpenAI(strict=True) as server:
        code, output = replay(units_file, server, run, config, "--limit", "6", "--report")
        bodies = list(server.bodies)
    assert code == 0, output
    summary = json.loads((run / "summary.json").read_text())
    spent = summary["spent"]["candidate"]
    assert spent["calls"] == 6 and spent["unpriced"] == [] and spent["no_usage"] == 0
    assert spent["usd"] == pytest.approx(paid(bodies, INPUT_PRICE, OUTPUT_PRICE), abs=1e-6)
    assert f"spent: candidate ${spent['usd']:.4f}" in flat(output)
    assert f"${spent['usd']:.4f}" in (run / "report.html").read_text()


def test_a_rerun_from_the_cache_spends_nothing(
    units_file: Path, tmp_path: Path, config: Path
) -> None:
    with FakeOpenAI(strict=True) as server:
        replay(units_file, server, tmp_path / "runs" / "first", config, "--limit", "3")
        code, output = replay(units_file, server, tmp_path / "runs" / "again", config,
                              "--limit", "3")  # fmt: skip
    assert code == 0, output
    spent = json.loads((tmp_path / "runs" / "again" / "summary.json").read_text())["spent"]
    assert spent["candidate"]["calls"] == 0 and spent["candidate"]["usd"] is None
    assert "spent: candidate nothing answered" in flat(output)


def test_a_model_with_no_price_is_unpriced_never_zero(units_file: Path, tmp_path: Path) -> None:
    run = tmp_path / "runs" / "unpriced"
    with FakeOpenAI(strict=True) as server:
        code, output = abt(
            "replay", units_file, "--model", "openai/no-such-model-anywhere", "--base-url",
            server.base_url, "--out", run, "--limit", "2", "--no-cache",
        )  # fmt: skip
    assert code == 0, output
    spent = json.loads((run / "summary.json").read_text())["spent"]["candidate"]
    assert spent["usd"] is None and spent["unpriced"] == ["openai/no-such-model-anywhere"]
    assert "spent: candidate unpriced (openai/no-such-model-anywhere)" in flat(output)
    assert "estimated cost, candidate: unpriced (openai/no-such-model-anywhere)" in flat(output)


def verdict(body: dict) -> str:
    return json.dumps({"score": 1, "reason": "the same answer"})


def provider(name: str, server: FakeOpenAI) -> str:
    """abt.toml's table of a provider reaching ``server``."""
    return (
        f'[providers.{name}]\ntype = "openai"\napi_key_env = ""\nbase_url = "{server.base_url}"\n'
    )


def test_the_judge_is_estimated_and_its_spend_counted_apart(tmp_path: Path) -> None:
    run = tmp_path / "runs" / "judged"
    with FakeOpenAI(ignores_tools=True) as candidate, FakeOpenAI(reply=verdict) as judge:
        config = tmp_path / "judged.toml"
        config.write_text(
            f"{provider('served', candidate)}{provider('grading', judge)}"
            "[roles.judge]\ncache = false\n"
            f'[prices."served/agent"]\ninput = {INPUT_PRICE}\noutput = {OUTPUT_PRICE}\n'
            f'[prices."grading/judge"]\ninput = {JUDGE_INPUT_PRICE}\n'
            f"output = {JUDGE_OUTPUT_PRICE}\n"
        )
        code, output = abt(
            "replay", TAU_TRAJECTORIES, "--tools", TAU_TOOLS, "--recorded-model", "gpt-4o",
            "--model", "served/agent", "--out", run, "--config", config, "--no-cache",
            "--limit", "8", "--judge", "grading/judge",
        )  # fmt: skip
        asked, judged = list(candidate.bodies), list(judge.bodies)
    assert code == 0, output
    assert judged, "the judge was asked nothing"
    texts = sum(1 for line in (run / "units.jsonl").read_text().splitlines()
                if not json.loads(line)["golden"]["message"].get("tool_calls"))  # fmt: skip
    assert "estimated cost, judge: $" in flat(output)
    assert f"for {texts} calls, {texts} sized from characters" in flat(output)
    spent = json.loads((run / "summary.json").read_text())["spent"]
    assert spent["candidate"]["usd"] == pytest.approx(
        paid(asked, INPUT_PRICE, OUTPUT_PRICE), abs=1e-6
    )
    assert spent["judge"]["calls"] == len(judged)
    assert spent["judge"]["usd"] == pytest.approx(
        paid(judged, JUDGE_INPUT_PRICE, JUDGE_OUTPUT_PRICE), abs=1e-6
    )
    manifest = json.loads((run / "run.json").read_text())
    assert manifest["counts"]["judge"]["calls"] == len(judged)


def test_a_run_that_reaches_its_budget_stops_and_a_resume_finishes_it(
    priced_units: Path, tmp_path: Path, config: Path
) -> None:
    run = tmp_path / "runs" / "budget"
    estimate = recorded_estimate(12)
    with FakeOpenAI(strict=True) as server:
        # the estimate from production's usage fits; the candidate's answers cost more (the
        # server counts every character of the body with its tools), so the run reaches it
        code, output = replay(priced_units, server, run, config, "--limit", "12",
                              "--concurrency", "1", "--max-cost", f"{estimate:.6f}")  # fmt: skip
        first = list(server.bodies)
        assert paid(first, INPUT_PRICE, OUTPUT_PRICE) >= estimate
        assert code == 3, output
        manifest = json.loads((run / "run.json").read_text())
        assert manifest["status"] == "interrupted" and manifest["stop_reason"] == "budget"
        assert 0 < len(records(run)) < 12
        assert "stopped at the budget" in flat(output)
        code, output = abt("replay", "--resume", run)
    assert code == 0, output
    manifest = json.loads((run / "run.json").read_text())
    assert manifest["status"] == "completed" and manifest["stop_reason"] is None
    assert len(records(run)) == 12
