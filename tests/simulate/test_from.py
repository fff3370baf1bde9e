"""``abt simulate run --from RUN``: the flows of an earlier run as it played them, kept by its
verdicts and owners; every mistake is one line before anything is written or sent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.simulate.agent_server import AgentServer
from tests.simulate.earlier_runs import FAIL_ROUTING, UNCERTAIN, flow, judged, played
from tests.simulate.judge_runs import FAIL

FLOWS = [
    flow("n1", "notes"),
    flow("n2", "notes"),
    flow("n3", "notes"),
    flow("c1", "chat"),
    flow("c2", "chat"),
]
ANSWERS = {"n1": FAIL, "n3": FAIL_ROUTING, "c1": UNCERTAIN, "c2": FAIL}


@pytest.fixture(autouse=True)
def no_stray_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)


def run_ids(run: Path) -> list[str]:
    return [json.loads(line)["id"] for line in (run / "flows.jsonl").read_text().splitlines()]


def test_from_with_verdict_fail_plays_exactly_the_failed_flows(
    tmp_path: Path, agent: AgentServer
) -> None:
    with judged(tmp_path, agent, ANSWERS) as sim:
        code, output = sim.run("first", FLOWS)
        assert code == 0, output
        before = len(played(agent))
        code, output = sim.run("again", None, "--from", "first", "--verdict", "fail")
        assert code == 0, output
        assert sorted(played(agent)[before:]) == ["c2", "n1", "n3"]
        assert run_ids(tmp_path / "again") == ["n1", "n3", "c2"]
        assert "left out: 2 not matching the verdicts and owners asked for" in " ".join(
            output.split()
        )
        manifest = json.loads((tmp_path / "again" / "run.json").read_text())
        selection = manifest["selection"]
        assert selection["from_run"] == str(tmp_path / "first")
        assert selection["verdicts"] == ["fail"]
        assert selection["left_out"] == {"not_matching": 2}
        assert manifest["flows"]["path"] == str(tmp_path / "first" / "flows.jsonl")

        before = len(played(agent))
        code, output = sim.run(
            "model", None, "--from", "first", "--verdict", "fail", "--owner", "model"
        )
        assert code == 0, output
        assert sorted(played(agent)[before:]) == ["c2", "n1"]

        before = len(played(agent))
        code, output = sim.run(
            "mixed", None, "--from", "first", "--verdict", "uncertain", "--verdict", "pass"
        )
        assert code == 0, output
        assert sorted(played(agent)[before:]) == ["c1", "n2"]
        assert run_ids(tmp_path / "mixed") == ["n2", "c1"]


def test_a_bad_from_is_one_line_and_nothing_is_written_or_sent(
    tmp_path: Path, agent: AgentServer
) -> None:
    with judged(tmp_path, agent, ANSWERS) as sim:
        assert sim.run("first", FLOWS)[0] == 0
        assert sim.run("unjudged", FLOWS, "--skip-judge")[0] == 0
        (tmp_path / "empty").mkdir()
        sent, asked = len(played(agent)), sim.judge.total
        cases = {
            ("--from", "nowhere"): "--from: nowhere is not a run directory",
            ("--from", "empty"): "--from: empty holds no simulate run (no run.json)",
            ("--from", "unjudged"): "--from: unjudged has no verdicts yet: judge it first",
            ("--from", "first", "--verdict", "failed"): "--verdict: no verdict is called failed",
            ("--from", "first", "--owner", "backend_data"): (
                "--owner: no verdict of first names the owner backend_data"
            ),
            ("--verdict", "fail"): "--verdict: filters the flows of an earlier run: add --from",
        }
        for args, message in cases.items():
            flows = FLOWS if args[0] == "--verdict" else None
            code, output = sim.run("out", flows, *args)
            assert code == 2, (args, output)
            assert output.count("\n") == 1 and message in output, (args, output)
        code, output = sim.run("out", None, "--from", "first", "--owner", "agent_routing",
                               "--verdict", "pass")  # fmt: skip
        assert code == 2 and output.count("\n") == 1
        assert "--verdict: no flow is left to play: 5 not matching the verdicts" in output
        code, output = sim.run("out", FLOWS, "--from", "first")
        assert code == 2 and output.count("\n") == 1
        assert "FLOWS: give FLOWS, --generate CAPABILITIES or --from RUN (one of" in output
        assert not (tmp_path / "out").exists()
        assert len(played(agent)) == sent and sim.judge.total == asked
