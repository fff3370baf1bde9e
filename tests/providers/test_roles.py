"""Model roles: each role's settings come from its defaults, then ``[roles.NAME]`` of abt.toml,
then the flags; the run records them, and each role's calls go where its settings say."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_backtest.cli.app import app
from agent_backtest.errors import UserError
from agent_backtest.providers.config import ModelConfig, RoleSettings
from agent_backtest.providers.roles import resolve_role
from tests.conftest import TAU_TOOLS, TAU_TRAJECTORIES
from tests.fake_openai import FakeOpenAI

runner = CliRunner()


def test_flags_override_the_config_which_overrides_the_defaults(tmp_path: Path) -> None:
    config = ModelConfig(roles={"judge": RoleSettings(model="openai/j", timeout=7, rpm=30)})
    judge = resolve_role("judge", config, None, timeout=3, cache_dir=str(tmp_path))
    assert (judge.model, judge.timeout, judge.rpm, judge.concurrency) == ("openai/j", 3, 30, 16)
    assert judge.cache_dir == str(tmp_path)
    candidate = resolve_role("candidate", config, "trace", cache=False)
    assert (candidate.concurrency, candidate.timeout, candidate.cache_dir) == (8, 60.0, None)


def test_a_role_without_a_model_or_with_a_bad_setting_names_its_parameter() -> None:
    with pytest.raises(UserError, match="no model for the teacher role") as missing:
        resolve_role("teacher", ModelConfig(), None)
    assert missing.value.parameter == "teacher"
    with pytest.raises(UserError, match="concurrency") as bad:
        resolve_role("judge", ModelConfig(), "openai/j", concurrency=0)
    assert bad.value.parameter == "judge"
    with pytest.raises(UserError, match="not provider/model") as unparsed:
        resolve_role("fallback_judge", ModelConfig(), "gpt-4o")
    assert unparsed.value.parameter == "fallback_judge"


def test_the_judge_role_has_its_own_endpoint_settings_and_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    # the candidate answers in text where production did not: only then is a judge asked
    with FakeOpenAI() as judge_server, FakeOpenAI(ignores_tools=True) as candidate_server:
        config = tmp_path / "abt.toml"
        config.write_text(
            "[providers.candidates]\n"
            'type = "openai"\n'
            'api_key_env = ""\n'
            f'base_url = "{candidate_server.base_url}"\n'
            "[providers.judges]\n"
            'type = "openai"\n'
            'api_key_env = ""\n'
            "[roles.judge]\n"
            f'base_url = "{judge_server.base_url}"\n'
            "concurrency = 3\n"
            "timeout = 7\n"
            "max_retries = 0\n"
        )
        run = tmp_path / "runs" / "judged"
        result = runner.invoke(
            app,
            [
                "replay",
                str(TAU_TRAJECTORIES), "--tools", str(TAU_TOOLS), "--recorded-model", "gpt-4o",
                "--model", "candidates/agent", "--judge", "judges/grader", "--out", str(run),
                "--config", str(config), "--cache-dir", str(tmp_path / "cache"),
                "--concurrency", "2", "--limit", "6",
            ],
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        judged = judge_server.total
    roles = json.loads((run / "run.json").read_text())["config"]["roles"]
    assert roles["judge"] == {
        "name": "judge",
        "model": "judges/grader",
        "base_url": judge_server.base_url,
        "api_key_env": None,
        "timeout": 7.0,
        "max_retries": 0,
        "backoff_initial": 1.0,
        "concurrency": 3,
        "rpm": None,
        "tpm": None,
        "cache_dir": str(tmp_path / "cache"),
    }
    assert roles["candidate"]["concurrency"] == 2  # --concurrency is the candidate's
    assert roles["judge"]["concurrency"] == 3
    assert judged > 0  # the judge's calls went to the judge's endpoint
    assert all(body["model"] == "grader" for body in judge_server.bodies)
