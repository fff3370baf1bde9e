"""Finishing a run whatever went wrong and wherever it is finished from: ``--resume
--retry-errors`` judges again what it played again (one verdict and one conversation per flow,
no transport error left over a completed conversation), and a run made with relative paths
resumes and is judged from another directory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.fake_openai import FakeOpenAI
from tests.simulate.agent_server import AgentServer
from tests.simulate.conftest import abt, flows_file, scripted, target_file
from tests.simulate.judge_runs import PASS, replies, verdict_lines, write_config

FLOWS = [scripted("hi-1", "hello"), scripted("hi-2", "hi there")]


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line]


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The folder the run is started from: its flows, target and abt.toml, named relatively."""
    folder = tmp_path / "project"
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder


def test_retry_errors_judges_again_what_it_plays_again(
    here: Path, agent: AgentServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    flows_file(here / "flows.jsonl", FLOWS)
    target_file(here / "t.toml", agent.base_url)
    with FakeOpenAI(reply=replies(PASS)) as judge:
        write_config(here, ("main", judge.base_url))  # ./abt.toml, found by being here
        agent.outage = True  # sessions open, every turn is answered 503
        code, output = abt("simulate", "run", "flows.jsonl", "--target", "t.toml", "--out",
                           "run", "--judge", "main/grader")  # fmt: skip
        assert code == 1, output  # no conversation could be completed
        assert {v["reason"] for v in verdict_lines(here / "run")} == {"transport_error"}
        agent.outage = False
        code, output = abt("simulate", "run", "--resume", "run", "--retry-errors")
        assert code == 0, output
        assert judge.total == 2  # each conversation played again is judged, once
    verdicts = verdict_lines(here / "run")
    assert [(v["flow_id"], v["verdict"]) for v in verdicts] == [("hi-1", "pass"), ("hi-2", "pass")]
    conversations = lines(here / "run" / "conversations.jsonl")
    assert sorted(c["flow_id"] for c in conversations) == ["hi-1", "hi-2"]
    assert not any(c.get("transport_error") for c in conversations)
    manifest = json.loads((here / "run" / "run.json").read_text())
    assert (manifest["status"], manifest["skip_judge"]) == ("completed", False)
    code, output = abt("gate", "run", "--min-pass-rate", "1")
    assert code == 0, output


def test_a_run_resumes_and_is_judged_from_another_directory(
    here: Path, agent: AgentServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    flows_file(here / "flows.jsonl", FLOWS)
    target_file(here / "t.toml", agent.base_url)
    with FakeOpenAI(reply=replies(PASS)) as judge:
        write_config(here, ("main", judge.base_url))
        agent.outage = True
        code, output = abt("simulate", "run", "flows.jsonl", "--target", "t.toml", "--out",
                           "run", "--judge", "main/grader")  # fmt: skip
        assert code == 1, output
        agent.outage = False
        elsewhere = here.parent / "elsewhere"
        elsewhere.mkdir()
        monkeypatch.chdir(elsewhere)
        code, output = abt("simulate", "run", "--resume", "../project/run", "--retry-errors")
        assert code == 0, output
        code, output = abt("simulate", "judge", "../project/run", "--rejudge", "all")
        assert code == 0, output
        assert judge.total == 4
    manifest = json.loads((here / "run" / "run.json").read_text())
    assert manifest["target"]["file"]["path"] == str(here / "t.toml")
    assert manifest["flows"]["path"] == str(here / "flows.jsonl")
    assert manifest["config_file"] == str(here / "abt.toml")
    judging = json.loads((here / "run" / "judging.json").read_text())
    assert judging["config_file"] == str(here / "abt.toml")
    assert [v["verdict"] for v in verdict_lines(here / "run")] == ["pass", "pass"]


def test_a_run_that_skips_the_judge_says_so_and_one_that_judges_does_not(
    here: Path, agent: AgentServer
) -> None:
    flows = flows_file(here / "flows.jsonl", FLOWS[:1])
    target = target_file(here / "t.toml", agent.base_url)
    assert abt("simulate", "run", flows, "--target", target, "--out", "a", "--skip-judge")[0] == 0
    assert json.loads((here / "a" / "run.json").read_text())["skip_judge"] is True
    with FakeOpenAI(reply=replies(PASS)) as judge:
        write_config(here, ("main", judge.base_url))
        code, output = abt("simulate", "run", flows, "--target", target, "--out", "b",
                           "--judge", "main/grader")  # fmt: skip
    assert code == 0, output
    assert json.loads((here / "b" / "run.json").read_text())["skip_judge"] is False
