"""``abt simulate run`` end to end: the plan refuses before anything is sent, the selection,
the run directory, a simulated user, the lock, and a SIGKILL then ``--resume`` that plays no
finished conversation twice."""

from __future__ import annotations

import json
import signal
import stat
from pathlib import Path

import pytest

from agent_backtest.api.simulate import simulate_resume, simulate_run
from agent_backtest.errors import UserError
from agent_backtest.runs.lock import run_lock
from agent_backtest.simulate.models import STOP_MARKER
from tests.fake_openai import FakeOpenAI
from tests.processes import wait_for_lines
from tests.simulate.agent_server import AgentServer, read_log
from tests.simulate.conftest import abt, flows_file, scripted, target_file
from tests.simulate.processes import simulate_process

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def no_stray_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line]


FLOWS = [
    scripted("read-1", "notes", family="notes", expect_tools=["list_notes"]),
    scripted("write-1", "note: ring Bo", family="notes", expect_tools=["add_note"]),
    scripted("chat-1", "hello", family="chat"),
    scripted("chat-2", "hi", "how are you", family="chat"),
]


def test_a_flow_that_may_change_state_is_refused_before_any_turn_is_sent(
    tmp_path: Path, agent: AgentServer
) -> None:
    flows = flows_file(tmp_path / "flows.jsonl", FLOWS)
    target = target_file(tmp_path / "t.toml", agent.base_url)
    code, output = abt("simulate", "run", flows, "--target", target, "--out", "run", "--skip-judge")
    assert code == 2
    assert output.strip().splitlines() == [
        "abt: error: FLOWS: flow 'read-1' (line 1) may change the agent's data (it expects "
        "list_notes, not all declared read_only_tools in the agent config), and 1 other "
        "selected flows too: pass --read-only-only to skip them, or isolate them with "
        "--fixture-db FILE or --snapshot-cmd and --restore-cmd"
    ]
    assert read_log(agent.log) == []
    assert not (tmp_path / "run").exists()


def test_read_only_tools_and_read_only_only_skip_and_count_the_rest(
    tmp_path: Path, agent: AgentServer
) -> None:
    flows = flows_file(tmp_path / "flows.jsonl", FLOWS)
    target = target_file(tmp_path / "t.toml", agent.base_url)
    config = tmp_path / "agent.toml"
    config.write_text('read_only_tools = ["list_notes"]\nmutating_tools = ["add_note"]\n')
    code, output = abt(
        "simulate", "run", flows, "--target", target, "--out", "run", "--skip-judge",
        "--agent-config", config, "--read-only-only",
    )  # fmt: skip
    assert code == 0, output
    assert "3 of 3 conversations recorded; 1 skipped as they may change state" in output
    recorded = lines(tmp_path / "run" / "conversations.jsonl")
    assert sorted(c["flow_id"] for c in recorded) == ["chat-1", "chat-2", "read-1"]
    assert "note: ring Bo" not in [entry.get("message") for entry in read_log(agent.log)]
    manifest = json.loads((tmp_path / "run" / "run.json").read_text())
    assert manifest["played"]["skipped_may_change_state"] == 1
    assert manifest["status"] == "completed"


def test_the_run_directory_is_private_and_its_sessions_read_back(
    tmp_path: Path, agent: AgentServer
) -> None:
    flows = flows_file(tmp_path / "flows.jsonl", FLOWS[2:])
    target = target_file(tmp_path / "t.toml", agent.base_url)
    code, output = abt("simulate", "run", flows, "--target", target, "--out", "run", "--skip-judge")
    assert code == 0, output
    run = tmp_path / "run"
    assert stat.S_IMODE(run.stat().st_mode) == 0o700
    for name in ("run.json", "flows.jsonl", "conversations.jsonl", "sessions.jsonl"):
        assert stat.S_IMODE((run / name).stat().st_mode) == 0o600, name
    code, shown = abt("show", run / "sessions.jsonl", "--session", "chat-2")
    assert code == 0 and "how are you" in shown
    code, units = abt("units", run / "sessions.jsonl", "-o", tmp_path / "units.jsonl")
    assert code == 0 and "wrote 0 units" in units  # an HTTP agent's model calls are not visible


def test_selection_by_family_round_robin_offset_and_limit(
    tmp_path: Path, agent: AgentServer
) -> None:
    flows = [scripted(f"{family}-{n}", "hi", family=family) for family in "abc" for n in range(3)]
    path = flows_file(tmp_path / "flows.jsonl", flows)
    target = target_file(tmp_path / "t.toml", agent.base_url)
    done = simulate_run(
        path, target=target, out=tmp_path / "r", families=["a", "c"], per_family=2, offset=1,
        limit=2, skip_judge=True,
    )  # fmt: skip
    played = [line["id"] for line in lines(tmp_path / "r" / "flows.jsonl")]
    assert played == ["c-0", "a-1"]  # a-0 c-0 a-1 c-1, less the first, at most two
    assert {c.flow_id for c in done.conversations()} == {"c-0", "a-1"}


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ((), "--judge: no model for the judge role"),
        (("--skip-judge", "--family", "nope"), "--family: no flow of the families nope"),
        (("--skip-judge", "--fixture-db", "absent.db"), "--fixture-db: cannot read absent.db"),
        (("--skip-judge", "--snapshot-cmd", "true"), "--restore-cmd: needed with the other"),
        (("--skip-judge", "--read-only-only", "--restore-cmd", "true", "--snapshot-cmd", "true"),
         "--read-only-only: skips the flows that isolation would run"),
        (("--skip-judge", "--retry-errors"), "--retry-errors: plays again the flows of a run"),
    ],
)  # fmt: skip
def test_each_mistake_is_one_line_exit_2_and_leaves_no_directory(
    tmp_path: Path, agent: AgentServer, extra: tuple[str, ...], message: str
) -> None:
    flows = flows_file(tmp_path / "flows.jsonl", FLOWS[2:])
    target = target_file(tmp_path / "t.toml", agent.base_url)
    code, output = abt("simulate", "run", flows, "--target", target, "--out", "run", *extra)
    assert code == 2
    [line] = output.strip().splitlines()
    assert line.startswith(f"abt: error: {message}"), line
    assert not (tmp_path / "run").exists()
    assert read_log(agent.log) == []


def test_a_simulated_user_needs_a_model_and_plays_until_the_stop_marker(
    tmp_path: Path, agent: AgentServer
) -> None:
    flow = {
        "id": "sim",
        "family": "chat",
        "user": {"instructions": "Say hello twice, then stop.", "known_info": "your name is Bo"},
    }
    flows = flows_file(tmp_path / "flows.jsonl", [flow])
    target = target_file(tmp_path / "t.toml", agent.base_url)
    with pytest.raises(UserError, match="flow 'sim' has a simulated user"):
        simulate_run(flows, target=target, out=tmp_path / "r", skip_judge=True)
    assert not (tmp_path / "r").exists()

    def user_says(body: dict) -> str:
        system = body["messages"][0]["content"]
        assert "Say hello twice" in system and "your name is Bo" in system
        said = sum(m["role"] == "assistant" for m in body["messages"])
        return ["hello, I am Bo", "hello again", f"thanks {STOP_MARKER}"][said]

    with FakeOpenAI(reply=user_says) as fake:
        config = tmp_path / "abt.toml"
        config.write_text(
            f'[providers.sim]\ntype = "openai"\nbase_url = "{fake.base_url}"\napi_key_env = ""\n'
        )
        done = simulate_run(
            flows, target=target, out=tmp_path / "r", roles={"user": "sim/user-model"},
            config_file=config, skip_judge=True,
        )  # fmt: skip
    [conversation] = done.conversations()
    assert [t.user for t in conversation.turns] == ["hello, I am Bo", "hello again"]
    assert conversation.turns[1].final_text == "You said: hello again"
    assert done.manifest.roles["user"].model == "sim/user-model"


def test_a_second_process_on_a_run_is_refused(tmp_path: Path, agent: AgentServer) -> None:
    flows = flows_file(tmp_path / "flows.jsonl", FLOWS[2:])
    target = target_file(tmp_path / "t.toml", agent.base_url)
    done = simulate_run(flows, target=target, out=tmp_path / "r", skip_judge=True)
    with run_lock(done.path, "simulate"), pytest.raises(UserError, match="is being written by"):
        simulate_resume(done.path, skip_judge=True)
    code, output = abt("simulate", "run", flows, "--target", target, "--out", done.path,
                       "--skip-judge")  # fmt: skip
    assert code == 2 and "already holds a run: use --resume" in output


def test_sigkill_then_resume_plays_each_flow_once_and_no_finished_one_again(
    tmp_path: Path, notes_db: Path
) -> None:
    flows = flows_file(
        tmp_path / "flows.jsonl", [scripted(f"f{n}", f"one {n}", f"two {n}") for n in range(8)]
    )
    log = tmp_path / "agent.log"
    with AgentServer(log, notes_db, delay=0.1) as agent:
        target = target_file(tmp_path / "t.toml", agent.base_url)
        run = tmp_path / "run"
        process = simulate_process(flows, "--target", target, "--out", run, "--skip-judge",
                                   "--concurrency", "2")  # fmt: skip
        wait_for_lines(run / "conversations.jsonl", 3, process)
        process.send_signal(signal.SIGKILL)
        process.wait()
        before = {c["flow_id"] for c in lines(run / "conversations.jsonl")}
        logged_before = len(read_log(log))
        resumed = simulate_process("--resume", run, "--skip-judge")
        assert resumed.wait(timeout=120) == 0
    conversations = lines(run / "conversations.jsonl")
    assert sorted(c["flow_id"] for c in conversations) == [f"f{n}" for n in range(8)]
    assert len(lines(run / "sessions.jsonl")) == 8
    after = read_log(log)[logged_before:]
    replayed = {entry["message"].split()[1] for entry in after if entry.get("message")}
    assert not replayed & {flow.removeprefix("f") for flow in before}
    for conversation in conversations:  # every recorded one is whole
        assert [t["final_text"] for t in conversation["turns"]] == [
            f"You said: one {conversation['flow_id'][1:]}",
            f"You said: two {conversation['flow_id'][1:]}",
        ]
    manifest = json.loads((run / "run.json").read_text())
    assert (manifest["status"], manifest["attempts_of_run"]) == ("completed", 2)
    assert manifest["played"]["conversations"] == 8


def test_resume_with_retry_errors_plays_again_only_the_failed_conversations(
    tmp_path: Path, agent: AgentServer
) -> None:
    flows = flows_file(tmp_path / "flows.jsonl", [scripted("ok", "hi"), scripted("bad", "boom")])
    target = target_file(tmp_path / "t.toml", agent.base_url)
    done = simulate_run(flows, target=target, out=tmp_path / "r", skip_judge=True)
    assert done.manifest.status == "completed_with_errors"
    again = simulate_resume(done.path, skip_judge=True)
    assert again.manifest.played.conversations == 2  # nothing left to play
    again = simulate_resume(done.path, skip_judge=True, retry_errors=True)
    sent = [entry.get("message") for entry in read_log(agent.log)]
    assert (sent.count("hi"), sent.count("boom")) == (1, 2)
    assert len(again.conversations()) == 2


def test_an_edited_target_file_is_refused_on_resume(tmp_path: Path, agent: AgentServer) -> None:
    flows = flows_file(tmp_path / "flows.jsonl", [scripted("ok", "hi")])
    target = target_file(tmp_path / "t.toml", agent.base_url)
    done = simulate_run(flows, target=target, out=tmp_path / "r", skip_judge=True)
    target.write_text(target.read_text() + "\n# edited\n")
    code, output = abt("simulate", "run", "--resume", done.path, "--skip-judge")
    assert code == 2 and "is not the target file the run started with" in output


@pytest.mark.parametrize(("sent", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_ctrl_c_or_sigterm_keeps_finished_conversations_and_marks_the_run_interrupted(
    tmp_path: Path, notes_db: Path, sent: signal.Signals, code: int
) -> None:
    flows = flows_file(tmp_path / "flows.jsonl", [scripted(f"f{n}", "a", "b") for n in range(10)])
    with AgentServer(tmp_path / "agent.log", notes_db, delay=0.2) as agent:
        target = target_file(tmp_path / "t.toml", agent.base_url)
        run = tmp_path / "run"
        process = simulate_process(flows, "--target", target, "--out", run, "--skip-judge",
                                   "--concurrency", "2")  # fmt: skip
        wait_for_lines(run / "conversations.jsonl", 2, process)
        process.send_signal(sent)
        assert process.wait(timeout=60) == code
        kept = lines(run / "conversations.jsonl")
        assert len(kept) >= 2
        assert json.loads((run / "run.json").read_text())["status"] == "interrupted"
        assert simulate_process("--resume", run, "--skip-judge").wait(timeout=120) == 0
    assert sorted(c["flow_id"] for c in lines(run / "conversations.jsonl")) == sorted(
        f"f{n}" for n in range(10)
    )


def test_a_torn_last_line_is_dropped_and_its_flow_played_again_on_resume(
    tmp_path: Path, agent: AgentServer
) -> None:
    flows = flows_file(tmp_path / "flows.jsonl", [scripted("a", "hi a"), scripted("b", "hi b")])
    target = target_file(tmp_path / "t.toml", agent.base_url)
    done = simulate_run(flows, target=target, out=tmp_path / "r", concurrency=1, skip_judge=True)
    conversations = done.path / "conversations.jsonl"
    first, second = conversations.read_bytes().splitlines(keepends=True)
    conversations.write_bytes(first + second[: len(second) // 2])  # a kill mid-write
    again = simulate_resume(done.path, skip_judge=True)
    assert sorted(c.flow_id for c in again.conversations()) == ["a", "b"]
    assert len(lines(done.path / "sessions.jsonl")) == 2
    sent = [entry.get("message") for entry in read_log(agent.log)]
    replayed = json.loads(second)
    assert sent.count(f"hi {replayed['flow_id']}") == 2
    assert sent.count(f"hi {json.loads(first)['flow_id']}") == 1
