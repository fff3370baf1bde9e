"""A bench run says what it spent per role, priced from the usage its answers reported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_backtest import api
from tests.bench.conftest import abt, scripted
from tests.bench.test_run import run_args
from tests.fake_openai import FakeOpenAI

pytestmark = pytest.mark.fake_openai(reply=scripted)

INPUT_PRICE, OUTPUT_PRICE = 3.0, 15.0  # USD per million tokens


def test_a_bench_run_prints_and_gives_what_its_agent_spent(
    benchmark: Path, config: Path, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    with config.open("a") as handle:
        handle.write(f'[prices."fake/agent-1"]\ninput = {INPUT_PRICE}\noutput = {OUTPUT_PRICE}\n')
    out = tmp_path / "runs" / "priced"
    code, output = abt(*run_args(benchmark, config, out))
    assert code == 0, output
    # the test server reports len(json.dumps(body)) // 4 input and 12 output tokens an answer
    tokens_in = sum(len(json.dumps(body)) // 4 for body in fake_openai.bodies)
    expected = (tokens_in * INPUT_PRICE + 12 * fake_openai.total * OUTPUT_PRICE) / 1e6
    spent = api.spent(out)
    assert list(spent) == ["agent"]
    assert spent["agent"].calls == fake_openai.total == 9
    assert spent["agent"].usd == pytest.approx(expected, abs=1e-6)
    assert f"spent: agent ${spent['agent'].usd:.4f}" in " ".join(output.split())


def test_a_model_with_no_price_is_unpriced(
    benchmark: Path, config: Path, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    out = tmp_path / "runs" / "unpriced"
    code, output = abt(*run_args(benchmark, config, out))
    assert code == 0, output
    assert api.spent(out)["agent"].usd is None
    assert "spent: agent unpriced (fake/agent-1)" in " ".join(output.split())
