"""The judging stage over a run directory: a verdict per flow checkpointed as it is decided, a
kill that loses none, ``--resume`` that asks only what is missing, ``--rejudge uncertain`` that
asks again only where no verdict was reached, and the run's files kept private."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agent_backtest.cli.app import app
from tests.fake_openai import FakeOpenAI
from tests.simulate.judge_runs import (
    PASS,
    conversation,
    flow_of,
    note_flow,
    replies,
    verdict_lines,
    write_config,
    write_run,
)

runner = CliRunner()
FLOWS = [f"f{n}" for n in range(1, 7)]


def six_flow_run(tmp_path: Path, transport: set[str] = frozenset()) -> Path:
    """A run of six flows, each played (those in ``transport`` with a transport failure)."""
    records = [
        conversation(flow_id, [], transport_error="connection reset")
        if flow_id in transport
        else conversation(flow_id)
        for flow_id in FLOWS
    ]
    return write_run(tmp_path / "run", [note_flow(flow_id) for flow_id in FLOWS], records)


def asked(judge: FakeOpenAI) -> Counter[str]:
    """How many times the judge was asked about each flow."""
    return Counter(flow_of(body) for body in judge.bodies)


def invoke(run: Path, config: Path, *extra: str) -> Any:
    """``abt simulate judge RUN`` with the judge of ``config``."""
    return runner.invoke(
        app,
        ["simulate", "judge", str(run), "--judge", "main/grader", "--config", str(config), *extra],
    )


def test_a_killed_judging_resumes_with_one_verdict_per_flow_none_asked_twice(
    tmp_path: Path,
) -> None:
    run = six_flow_run(tmp_path)
    with FakeOpenAI(latency=0.4, reply=replies(PASS)) as judge:
        config = write_config(tmp_path, ("main", judge.base_url), concurrency=1)
        command = [sys.executable, "-m", "agent_backtest.cli", "simulate", "judge", str(run)]
        process = subprocess.Popen(
            [*command, "--judge", "main/grader", "--config", str(config), "--no-cache"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        verdicts = run / "verdicts.jsonl"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and process.poll() is None:
            if verdicts.exists() and len(verdicts.read_text().splitlines()) >= 2:
                break
            time.sleep(0.02)
        process.send_signal(signal.SIGKILL)
        process.wait()
        before = {line["flow_id"] for line in verdict_lines(run)}
        assert 2 <= len(before) < len(FLOWS)
        asked_before = asked(judge)
        result = invoke(run, config, "--resume", "--no-cache")  # the server sees every question
        assert result.exit_code == 0, result.output
    lines = verdict_lines(run)
    assert [line["flow_id"] for line in lines] == FLOWS  # one each, in the flows' order
    assert all(line["verdict"] == "pass" for line in lines)
    after = asked(judge)
    for flow_id in before:
        assert after[flow_id] == asked_before[flow_id] == 1  # a verdict kept is never asked again
    assert sum(after.values()) <= len(FLOWS) + 1  # at most the one in flight at the kill
    assert json.loads((run / "judging.json").read_text())["status"] == "complete"


def test_a_judged_run_needs_resume_or_rejudge(tmp_path: Path) -> None:
    run = six_flow_run(tmp_path)
    with FakeOpenAI(reply=replies(PASS)) as judge:
        config = write_config(tmp_path, ("main", judge.base_url))
        assert invoke(run, config).exit_code == 0
        again = invoke(run, config)
        assert judge.total == len(FLOWS)
    assert again.exit_code == 2
    assert "--resume: " in again.output and "already has verdicts for 6 of 6 flows" in again.output


def test_rejudge_uncertain_asks_again_only_where_no_verdict_was_reached(tmp_path: Path) -> None:
    run = six_flow_run(tmp_path, transport={"f6"})
    first_prompt: dict[str, str] = {}

    def answer(body: dict[str, Any]) -> Any:
        first_prompt.setdefault(flow_of(body), body["messages"][-1]["content"])
        return PASS

    with FakeOpenAI(reply=replies(answer)) as judge:
        config = write_config(tmp_path, ("main", judge.base_url))
        assert invoke(run, config, "--no-cache").exit_code == 0  # fills first_prompt
        judge.faults = {first_prompt[f]: ["500"] for f in ("f2", "f4")}
        # The same run judged again from scratch, with f2 and f4 meeting a server error.
        (run / "verdicts.jsonl").unlink()
        (run / "judging.json").unlink()
        judge.requests.clear()
        judge.bodies.clear()
        assert invoke(run, config, "--no-cache").exit_code == 0
        reasons = {line["flow_id"]: line.get("reason") for line in verdict_lines(run)}
        assert reasons == {
            "f1": None, "f2": "judge_unavailable", "f3": None,
            "f4": "judge_unavailable", "f5": None, "f6": "transport_error",
        }  # fmt: skip
        judge.bodies.clear()
        result = runner.invoke(app, ["simulate", "judge", str(run), "--rejudge", "uncertain"])
        assert result.exit_code == 0, result.output
        assert asked(judge) == Counter({"f2": 1, "f4": 1})  # never the passes, never f6
    lines = verdict_lines(run)
    assert [line["flow_id"] for line in lines] == FLOWS
    verdicts = {line["flow_id"]: line["verdict"] for line in lines}
    assert verdicts == {**{f: "pass" for f in FLOWS}, "f6": "uncertain"}
    assert "5 pass · 0 fail · 1 uncertain (transport_error 1); 3 judged now" in result.output


def test_a_torn_last_verdict_is_left_out_and_judged_again(tmp_path: Path) -> None:
    run = six_flow_run(tmp_path)
    with FakeOpenAI(reply=replies(PASS)) as judge:
        config = write_config(tmp_path, ("main", judge.base_url))
        assert invoke(run, config, "--no-cache").exit_code == 0
        whole = (run / "verdicts.jsonl").read_text().splitlines()
        (run / "verdicts.jsonl").write_text("\n".join(whole[:4]) + "\n" + whole[4][:30])
        judge.bodies.clear()
        assert invoke(run, config, "--resume", "--no-cache").exit_code == 0
        assert asked(judge) == Counter({"f5": 1, "f6": 1})
    assert [line["flow_id"] for line in verdict_lines(run)] == FLOWS


def test_flows_not_played_yet_are_counted_not_judged(tmp_path: Path) -> None:
    flows = [note_flow(flow_id) for flow_id in FLOWS]
    run = write_run(tmp_path / "run", flows, [conversation("f1"), conversation("f2")])
    with FakeOpenAI(reply=replies(PASS)) as judge:
        config = write_config(tmp_path, ("main", judge.base_url))
        result = invoke(run, config)
        assert judge.total == 2
    assert result.exit_code == 0
    assert "not played yet (not judged): 4" in result.output
    assert [line["flow_id"] for line in verdict_lines(run)] == ["f1", "f2"]


def test_verdicts_and_judging_record_are_private(tmp_path: Path) -> None:
    run = six_flow_run(tmp_path)
    previous = os.umask(0o022)
    try:
        with FakeOpenAI(reply=replies(PASS)) as judge:
            config = write_config(tmp_path, ("main", judge.base_url))
            assert invoke(run, config).exit_code == 0
    finally:
        os.umask(previous)
    for name in ("verdicts.jsonl", "judging.json"):
        assert stat.S_IMODE((run / name).stat().st_mode) == 0o600, name


def test_a_folder_that_is_not_a_simulate_run_is_one_line(tmp_path: Path) -> None:
    result = runner.invoke(app, ["simulate", "judge", str(tmp_path), "--judge", "main/grader"])
    assert result.exit_code == 2
    assert "no flows.jsonl: not a simulate run" in result.output


def test_a_broken_conversation_line_names_the_file_and_line(tmp_path: Path) -> None:
    run = six_flow_run(tmp_path)
    lines = (run / "conversations.jsonl").read_text().splitlines()
    lines[2] = '{"flow_id": "f3"}'
    (run / "conversations.jsonl").write_text("\n".join(lines) + "\n")
    result = runner.invoke(app, ["simulate", "judge", str(run), "--judge", "main/grader"])
    assert result.exit_code == 2
    assert "conversations.jsonl: line 3: not a ConversationRecord record" in result.output


def test_the_python_function_checks_the_judge_before_writing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import agent_backtest as abt

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    run = six_flow_run(tmp_path)
    with pytest.raises(abt.UserError) as raised:
        abt.simulate_judge(run)
    assert raised.value.parameter == "judge" and "no model for the judge role" in str(raised.value)
    with pytest.raises(abt.UserError) as raised:
        abt.simulate_judge(run, roles={"judge": "openai/gpt-4.1-mini"})
    assert raised.value.parameter == "judge" and "OPENAI_API_KEY" in str(raised.value)
    assert not (run / "verdicts.jsonl").exists() and not (run / "judging.json").exists()
    with FakeOpenAI(reply=replies(PASS)) as judge:
        config = write_config(tmp_path, ("main", judge.base_url))
        outcome = abt.simulate_judge(run, roles={"judge": "main/grader"}, config_file=config)
    assert outcome.counts["pass"] == len(FLOWS) and outcome.judged == len(FLOWS)
    assert [verdict.flow_id for verdict in outcome.verdicts] == FLOWS
