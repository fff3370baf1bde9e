"""A bench run set up like the benchmark's own: each role's sampling sent and recorded, τ-bench's
user prompt for tau_airline, and a label that says both; no user for cases that need none."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_backtest.bench.models import Case
from agent_backtest.bench.tau_airline import benchmark_directory
from tests.bench.conftest import STOP, abt, scripted, write_benchmark, write_config
from tests.fake_openai import FakeOpenAI

pytestmark = pytest.mark.fake_openai(reply=scripted)

TAU_CASE = "3"


def tau_reply(body: dict[str, Any]) -> str:
    """An airline agent that only talks, and a user who says one thing, then stops."""
    if body.get("tools"):
        return "How can I help with your reservation?"
    spoken = sum(m["role"] == "assistant" for m in body["messages"])
    return STOP if spoken else "I want to cancel my trip."


def tau_run(tmp_path: Path, *extra: object) -> tuple[int, str, FakeOpenAI, Path]:
    """One episode of a tau_airline case, played by the fake agent and user."""
    out = tmp_path / "run"
    with FakeOpenAI(reply=tau_reply) as fake:
        config = write_config(tmp_path / "abt.toml", fake=fake.base_url)
        code, output = abt(
            "bench", "run", "tau_airline", "--case-id", TAU_CASE, "--agent", "fake/agent-1",
            "--out", out, "--config", config, "--no-cache", "--max-retries", "0", *extra,
        )  # fmt: skip
    return code, output, fake, out


def instruction_of(case_id: str) -> str:
    for line in (benchmark_directory() / "cases.jsonl").open(encoding="utf-8"):
        case = Case.model_validate_json(line)
        if case.id == case_id:
            assert case.instruction is not None
            return case.instruction
    raise AssertionError(case_id)


def test_tau_airline_with_a_user_model_plays_tau_benchs_user_at_the_temperatures_given(
    tmp_path: Path,
) -> None:
    code, output, fake, out = tau_run(
        tmp_path, "--user", "fake/user-1", "--agent-temperature", "0", "--user-top-p", "0.9"
    )
    assert code == 0, output
    agent = [b for b in fake.bodies if b["model"] == "agent-1"]
    users = [b for b in fake.bodies if b["model"] == "user-1"]
    assert agent and all(b["temperature"] == 0 and "top_p" not in b for b in agent)
    assert len(users) == 2 and all(b["top_p"] == 0.9 and "temperature" not in b for b in users)
    system = users[0]["messages"][0]["content"]
    assert system.startswith("You are a user interacting with an agent.\n\nInstruction: ")
    assert instruction_of(TAU_CASE) in system
    assert "generate '###STOP###' as a standalone message" in system
    assert users[0]["messages"][1] == {"role": "user", "content": "Hi! How can I help you today?"}

    manifest = json.loads((out / "run.json").read_text())
    assert manifest["user_prompt"] == "tau" and manifest["scripted_user"] is False
    assert manifest["roles"]["agent"]["temperature"] == 0.0
    assert manifest["roles"]["user"]["top_p"] == 0.9
    assert "temperature" not in manifest["roles"]["user"]  # unset: none sent, none recorded
    label = (
        "set up: user prompt tau (τ-bench's user simulator prompt) · agent temperature 0 · "
        "user top_p 0.9"
    )
    assert label in output.splitlines()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["run"]["user"] == "tau"
    assert summary["run"]["sampling"] == {"agent": {"temperature": 0.0}, "user": {"top_p": 0.9}}
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "user prompt tau (τ-bench&#x27;s user simulator prompt) · agent temperature 0" in page


def test_user_tau_plays_tau_benchs_user_prompt_by_the_model_of_the_configs_user_role(
    tmp_path: Path,
) -> None:
    with FakeOpenAI(reply=tau_reply) as fake:
        config = write_config(tmp_path / "abt.toml", fake=fake.base_url)
        config.write_text(config.read_text() + '[roles.user]\nmodel = "fake/user-1"\n')
        code, output = abt(
            "bench", "run", "tau_airline", "--case-id", TAU_CASE, "--agent", "fake/agent-1",
            "--agent-temperature", "0.0", "--user", "tau", "--out", tmp_path / "run",
            "--config", config, "--no-cache",
        )  # fmt: skip
    assert code == 0, output
    manifest = json.loads((tmp_path / "run" / "run.json").read_text())
    assert manifest["roles"]["agent"]["temperature"] == 0.0
    assert manifest["roles"]["user"]["model"] == "fake/user-1"
    assert manifest["user_prompt"] == "tau"
    users = [b for b in fake.bodies if b["model"] == "user-1"]
    assert users[0]["messages"][0]["content"].startswith("You are a user interacting")
    label = "set up: user prompt tau (τ-bench's user simulator prompt) · agent temperature 0 · "
    assert label in output


def test_abts_own_user_prompt_is_chosen_by_name(tmp_path: Path) -> None:
    code, output, fake, out = tau_run(
        tmp_path, "--user", "fake/user-1", "--user-prompt", "abt", "--user-max-tokens", "64"
    )
    assert code == 0, output
    users = [b for b in fake.bodies if b["model"] == "user-1"]
    assert users and all(b["max_tokens"] == 64 for b in users)
    assert users[0]["messages"][0]["content"].startswith("You play a person talking to an AI")
    assert json.loads((out / "run.json").read_text())["user_prompt"] == "abt"
    assert "user prompt abt (abt's simulated user) · agent sampling as the provider" in output


def test_a_resume_samples_as_the_run_started(tmp_path: Path) -> None:
    code, output, _, out = tau_run(
        tmp_path, "--user", "fake/user-1", "--agent-temperature", "0.3", "--rollouts", "2"
    )
    assert code == 0, output
    episodes = (out / "episodes.jsonl").read_text().splitlines()
    (out / "episodes.jsonl").write_text(episodes[0] + "\n")  # the second episode is lost
    code, output = abt("bench", "run", "--resume", out, "--agent-temperature", "1")
    assert code == 2 and "--resume: takes the run's own benchmark, roles and settings" in output
    with FakeOpenAI(reply=tau_reply) as fake:
        write_config(tmp_path / "abt.toml", fake=fake.base_url)
        code, output = abt("bench", "run", "--resume", out)
    assert code == 0, output
    agent = [b for b in fake.bodies if b["model"] == "agent-1"]
    users = [b for b in fake.bodies if b["model"] == "user-1"]
    assert agent and all(b["temperature"] == 0.3 for b in agent)
    assert users[0]["messages"][0]["content"].startswith("You are a user interacting")


def test_a_benchmark_whose_cases_open_with_messages_needs_no_user(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    benchmark = write_benchmark(tmp_path / "shop", cases=1)
    opening = {"id": "c00", "messages": [{"role": "user", "content": "Buy 2 apples."}]}
    (benchmark / "cases.jsonl").write_text(json.dumps(opening) + "\n")
    config = write_config(tmp_path / "abt.toml", fake=fake_openai.base_url)
    code, output = abt(
        "bench", "run", benchmark, "--agent", "fake/agent-1", "--out", tmp_path / "run",
        "--config", config, "--no-cache",
    )  # fmt: skip
    assert code == 0, output
    manifest = json.loads((tmp_path / "run" / "run.json").read_text())
    assert set(manifest["roles"]) == {"agent"}
    assert manifest["scripted_user"] is False and manifest["user_prompt"] is None
    assert "set up: agent sampling as the provider defaults" in output


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ((), "--user: case c00 of shop is played with a user: name the user's model"),
        (("--user", "tau"), "--user: no model for the user role: name one, or set model in"),
        (("--user", "tau", "--user-prompt", "abt"), "--user-prompt: names another user prompt"),
        (("--user", "scripted", "--user-temperature", "0.5"), "--user-temperature: sets how"),
        (("--user", "scripted", "--user-prompt", "tau"), "--user-prompt: sets the simulated"),
        (("--user", "fake/user-1", "--user-prompt", "nope"), "--user-prompt: no user prompt"),
        (
            ("--user", "fake/user-1", "--user-top-p", "0"),
            "--user-top-p: Input should be greater than 0",
        ),
    ],
)
def test_a_user_that_cannot_be_played_as_asked_is_refused_before_anything_is_written(
    tmp_path: Path, fake_openai: FakeOpenAI, extra: tuple[str, ...], message: str
) -> None:
    benchmark = write_benchmark(tmp_path / "shop", cases=1)
    config = write_config(tmp_path / "abt.toml", fake=fake_openai.base_url)
    code, output = abt(
        "bench", "run", benchmark, "--agent", "fake/agent-1", "--out", tmp_path / "run",
        "--config", config, "--no-cache", *extra,
    )  # fmt: skip
    assert code == 2, output
    assert message in output
    assert not (tmp_path / "run").exists() and fake_openai.total == 0


def test_a_judge_given_a_temperature_is_refused_its_calls_keep_temperature_0(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    benchmark = write_benchmark(tmp_path / "shop", cases=1, graders=("rubric",))
    config = write_config(tmp_path / "abt.toml", fake=fake_openai.base_url)
    config.write_text(config.read_text() + "[roles.judge]\ntemperature = 0.7\n")
    code, output = abt(
        "bench", "run", benchmark, "--agent", "fake/agent-1", "--user", "scripted",
        "--judge", "fake/judge-1", "--out", tmp_path / "run", "--config", config,
    )  # fmt: skip
    assert code == 2, output
    assert "--judge: temperature: set for the agent and user roles only" in output
