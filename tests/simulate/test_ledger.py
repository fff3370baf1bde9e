"""The findings ledger: ``ledger.md`` of a run groups its failures by family, owner and category
with counts and a link to a representative conversation, lists the uncertain apart, and a team
ledger (``--ledger``) gets each run once, whatever is resumed or judged again."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from tests.simulate.agent_server import AgentServer
from tests.simulate.conftest import scripted
from tests.simulate.earlier_runs import FAIL_ROUTING, UNCERTAIN, abt, flow, judged
from tests.simulate.judge_runs import FAIL

FLOWS = [
    flow("n1", "notes"),
    flow("n2", "notes"),
    flow("n3", "notes"),
    flow("c1", "chat"),
    flow("c2", "chat"),
    flow("c3", "chat"),
    flow("k1", "calendar"),
    scripted("k2", "boom", family="calendar"),  # the agent answers 500: never judged
]
ANSWERS = {"n1": FAIL, "n2": FAIL, "n3": FAIL_ROUTING, "c1": FAIL, "c2": UNCERTAIN}


@pytest.fixture(autouse=True)
def no_stray_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)


def conversation_line(run: Path, flow_id: str) -> int:
    lines = (run / "conversations.jsonl").read_text().splitlines()
    return next(n for n, line in enumerate(lines, 1) if json.loads(line)["flow_id"] == flow_id)


def rows(text: str, header: str) -> list[str]:
    """The table rows under the heading that starts with ``header``."""
    block = text.split(header, 1)[1].split("\n\n", 2)[1]
    return block.splitlines()[2:]


def test_the_ledger_groups_and_counts_the_failures_and_lists_the_uncertain_apart(
    tmp_path: Path, agent: AgentServer
) -> None:
    with judged(tmp_path, agent, ANSWERS) as sim:
        code, output = sim.run("run", FLOWS, "--ledger", "team/findings.md")
        assert code == 1, output  # k2 could not be completed: completed_with_errors
    run = tmp_path / "run"
    ledger = (run / "ledger.md").read_text()
    assert stat.S_IMODE((run / "ledger.md").stat().st_mode) == 0o600
    assert "8 flows: 2 pass · 4 fail · 2 uncertain." in ledger

    def link(flow_id: str, prefix: str = "") -> str:
        line = conversation_line(run, flow_id)
        return (
            f"[{flow_id}]({prefix}report.html#flow-{flow_id}) · "
            f"[conversations.jsonl line {line}]({prefix}conversations.jsonl)"
        )

    assert rows(ledger, "### Failures (4)") == [
        f"| notes | model | claimed_without_call | 2 | {link('n1')} |",
        f"| chat | model | claimed_without_call | 1 | {link('c1')} |",
        f"| notes | agent_routing | wrong_tool | 1 | {link('n3')} |",
    ]
    uncertain = rows(ledger, "### Uncertain (2): no verdict reached, not failures")
    assert [row.split(" | ")[:3] for row in uncertain] == [
        ["| c2", "chat", "judge_uncertain"],
        ["| k2", "calendar", "transport_error"],
    ]
    assert UNCERTAIN["evidence"] in uncertain[0]
    team = (tmp_path / "team" / "findings.md").read_text()
    assert rows(team, "### Failures (4)")[0] == (
        f"| notes | model | claimed_without_call | 2 | {link('n1', '../run/')} |"
    )
    assert "## Simulate run `../run` · target notes-agent · " in team
    assert "appended the run's findings to" in " ".join(output.split())


def test_a_run_is_appended_once_through_judging_resume_and_rejudge(
    tmp_path: Path, agent: AgentServer
) -> None:
    team = tmp_path / "findings.md"
    team.write_text("# Our findings\n\nKept by hand.\n")
    with judged(tmp_path, agent, ANSWERS) as sim:
        code, output = sim.run("run", FLOWS, "--ledger", team, "--skip-judge")
        assert code == 1, output  # k2 could not be completed
        assert team.read_text() == "# Our findings\n\nKept by hand.\n"  # nothing judged yet
        code, output = abt("simulate", "judge", "run", "--judge", "main/grader", "--config",
                           sim.config)  # fmt: skip
        assert code == 0, output
        once = team.read_text()
        assert once.startswith("# Our findings\n\nKept by hand.\n\n## Simulate run `run`")
        assert once.count("<!-- abt simulate run ") == 1
        assert abt("simulate", "judge", "run", "--rejudge", "all")[0] == 0
        assert abt("simulate", "judge", "run", "--rejudge", "uncertain")[0] == 0
        assert abt("simulate", "run", "--resume", "run")[0] == 1  # k2 still incomplete
        assert team.read_text() == once
        code, output = sim.run("second", FLOWS[:2], "--ledger", team)
        assert code == 0, output
    both = team.read_text()
    assert both.startswith(once) and both.count("<!-- abt simulate run ") == 2
    assert "## Simulate run `second`" in both


def test_a_ledger_that_is_a_folder_is_refused_before_anything_is_sent(
    tmp_path: Path, agent: AgentServer
) -> None:
    with judged(tmp_path, agent, ANSWERS) as sim:
        code, output = sim.run("run", FLOWS, "--ledger", tmp_path)
    assert code == 2 and output.count("\n") == 1
    assert "--ledger:" in output and "is a folder" in output
    assert not (tmp_path / "run").exists()
