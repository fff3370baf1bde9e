"""``abt simulate run --exclude-judged RUN``: the seeds an earlier run judged pass or fail through
the same target are left out and counted; uncertain ones, and any judged through another
target, are played again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.simulate.agent_server import AgentServer
from tests.simulate.conftest import target_file
from tests.simulate.earlier_runs import UNCERTAIN, flow, judged, played
from tests.simulate.judge_runs import FAIL

EARLIER = [
    flow("a1", "notes", seed_id="s1"),
    flow("a2", "notes", seed_id="s2"),
    flow("a3", "chat", seed_id="s3"),
    flow("plain", "chat"),
]
ANSWERS = {"a2": FAIL, "a3": UNCERTAIN}
# Regenerated flows of the same seeds, the flow with no seed again, and a new seed.
LATER = [
    flow("b1", "notes", seed_id="s1"),
    flow("b2", "notes", seed_id="s2"),
    flow("b3", "chat", seed_id="s3"),
    flow("plain", "chat"),
    flow("b5", "chat", seed_id="s5"),
]


@pytest.fixture(autouse=True)
def no_stray_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)


def test_exclude_judged_leaves_out_the_judged_seeds_and_plays_the_uncertain(
    tmp_path: Path, agent: AgentServer
) -> None:
    with judged(tmp_path, agent, ANSWERS) as sim:
        code, output = sim.run("runs/first", EARLIER)
        assert code == 0, output
        before = len(played(agent))
        code, output = sim.run("later", LATER, "--exclude-judged", "runs/first", "--skip-judge")
        assert code == 0, output
        assert sorted(played(agent)[before:]) == ["b3", "b5"]
        assert "left out: 2 judged pass before, 1 judged fail before" in " ".join(output.split())
        selection = json.loads((tmp_path / "later" / "run.json").read_text())["selection"]
        assert selection["left_out"] == {"judged_pass": 2, "judged_fail": 1}
        assert selection["exclude_judged"] == [str(tmp_path / "runs" / "first")]

        # A folder of runs is every judged simulate run in it; one not judged adds nothing.
        assert sim.run("runs/unjudged", LATER, "--skip-judge")[0] == 0
        before = len(played(agent))
        code, output = sim.run("folder", LATER, "--exclude-judged", "runs", "--skip-judge")
        assert code == 0, output
        assert sorted(played(agent)[before:]) == ["b3", "b5"]
        selection = json.loads((tmp_path / "folder" / "run.json").read_text())["selection"]
        assert selection["exclude_judged"] == [str(tmp_path / "runs" / "first")]


def test_seeds_judged_through_another_target_are_not_left_out(
    tmp_path: Path, agent: AgentServer
) -> None:
    with judged(tmp_path, agent, ANSWERS) as sim:
        assert sim.run("first", EARLIER)[0] == 0
        other = target_file(tmp_path / "other.toml", agent.base_url, timeout=30)
        sim.target = other  # the same name, another file: another agent setup
        before = len(played(agent))
        code, output = sim.run("later", LATER, "--exclude-judged", "first", "--skip-judge")
        assert code == 0, output
        assert sorted(played(agent)[before:]) == ["b1", "b2", "b3", "b5", "plain"]
        selection = json.loads((tmp_path / "later" / "run.json").read_text())["selection"]
        assert selection["left_out"] == {} and selection["exclude_judged"] == []


def test_nothing_left_to_play_is_one_line_and_nothing_is_written(
    tmp_path: Path, agent: AgentServer
) -> None:
    with judged(tmp_path, agent, {}) as sim:
        assert sim.run("first", EARLIER)[0] == 0
        before = len(played(agent))
        code, output = sim.run("again", EARLIER, "--exclude-judged", "first")
        assert code == 2 and output.count("\n") == 1
        assert "--exclude-judged: no flow is left to play: 4 judged pass before" in output
        code, output = sim.run("again", EARLIER, "--exclude-judged", "nowhere")
        assert code == 2 and output.count("\n") == 1
        assert "--exclude-judged: nowhere is not a run directory" in output
        assert not (tmp_path / "again").exists() and len(played(agent)) == before
