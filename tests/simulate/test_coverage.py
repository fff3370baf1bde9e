"""``abt simulate coverage``: per family of a corpus of flows, the seeds two runs judged, those
pending, and the percent covered; a run's own coverage.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.simulate.agent_server import AgentServer
from tests.simulate.conftest import flows_file
from tests.simulate.earlier_runs import UNCERTAIN, abt, flow, judged
from tests.simulate.judge_runs import FAIL

NOTES = [
    flow("n1", "notes", seed_id="s-n1"),
    flow("n2", "notes", seed_id="s-n2"),
    flow("n3", "notes", seed_id="s-n3"),
    flow("n4", "notes", seed_id="s-n1"),  # a retry of n1's seed: one seed
    flow("n5", "notes"),  # never played
]
CHAT = [flow("c1", "chat"), flow("c2", "chat"), flow("c3", "chat")]
FIRST = NOTES[:3]
# c2 uncertain again; n3's seed, uncertain in the first run, passes here; x1 is outside.
SECOND = [CHAT[0], CHAT[1], flow("n3b", "notes", seed_id="s-n3"), flow("x1", "other")]
ANSWERS = {"n2": FAIL, "n3": UNCERTAIN, "c2": UNCERTAIN}


@pytest.fixture(autouse=True)
def no_stray_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "corpus"
    folder.mkdir()
    flows_file(folder / "notes.jsonl", NOTES)
    (folder / "chat.yaml").write_text(yaml.safe_dump({"flows": CHAT}))
    (folder / "README.txt").write_text("not a flows file")
    return folder


def test_coverage_of_a_corpus_by_two_runs(tmp_path: Path, agent: AgentServer, corpus: Path) -> None:
    with judged(tmp_path, agent, ANSWERS) as sim:
        assert sim.run("runs/first", FIRST)[0] == 0
        assert sim.run("runs/second", SECOND)[0] == 0
    code, output = abt("simulate", "coverage", corpus, "--runs", "runs/first", "--runs",
                       "runs/second")  # fmt: skip
    assert code == 0, output
    lines = output.splitlines()
    assert lines[:4] == [
        "family  seeds  judged  pending  covered  (uncertain only)",
        "chat        3       1        2    33.3%  (1)",
        "notes       4       3        1    75.0%  (0)",
        "total       7       4        3    57.1%  (1)",
    ]
    assert lines[4].startswith("2 runs through notes-agent@")
    assert lines[5] == "1 seeds judged in the runs are not in the corpus"

    code, output = abt("simulate", "coverage", corpus, "--runs", "runs", "--format", "json")
    assert code == 0, output
    manifest = json.loads(output)
    assert manifest["schema"] == "abt.simulate_coverage/1"
    assert manifest["corpus"] == [str(corpus / "chat.yaml"), str(corpus / "notes.jsonl")]
    assert manifest["runs"] == ["runs/first", "runs/second"]
    assert manifest["total"] == {
        "family": "total", "seeds": 7, "judged": 4, "pending": 3, "uncertain_only": 1,
        "percent_covered": 57.1,
    }  # fmt: skip
    assert [(f["family"], f["judged"]) for f in manifest["families"]] == [("chat", 1), ("notes", 3)]

    code, output = abt("simulate", "coverage", corpus / "notes.jsonl", "--runs", "runs/first")
    assert code == 0, output
    assert output.splitlines()[1] == "notes       4       2        2    50.0%  (1)"


def test_a_run_writes_the_coverage_of_its_own_flows(tmp_path: Path, agent: AgentServer) -> None:
    with judged(tmp_path, agent, ANSWERS) as sim:
        assert sim.run("run", FIRST + CHAT)[0] == 0
    manifest = json.loads((tmp_path / "run" / "coverage.json").read_text())
    assert manifest["corpus"] == ["run/flows.jsonl"] and manifest["runs"] == ["run"]
    assert [(f["family"], f["seeds"], f["judged"], f["uncertain_only"]) for f in
            manifest["families"]] == [("notes", 3, 2, 1), ("chat", 3, 2, 1)]  # fmt: skip


def test_a_missing_corpus_or_an_unjudged_run_is_one_line(
    tmp_path: Path, agent: AgentServer, corpus: Path
) -> None:
    with judged(tmp_path, agent, ANSWERS) as sim:
        assert sim.run("unjudged", FIRST, "--skip-judge")[0] == 0
    code, output = abt("simulate", "coverage", "nowhere.jsonl")
    assert code == 2 and output.count("\n") == 1 and "FLOWS: nowhere.jsonl does not exist" in output
    code, output = abt("simulate", "coverage", corpus, "--runs", "unjudged")
    assert code == 2 and output.count("\n") == 1
    assert "--runs: unjudged has no verdicts yet" in output
