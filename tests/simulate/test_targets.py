"""Targets against a real agent on 127.0.0.1: JSON and SSE answers, sessions, faults, keys,
a Python callable, and target files that are refused with the key at fault."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import pytest

from agent_backtest.api import simulate_judge
from agent_backtest.api.simulate import SimulateRun, simulate_run
from agent_backtest.errors import InputError, UserError
from agent_backtest.simulate.targets import load_target
from tests.fake_openai import FakeOpenAI
from tests.simulate.agent_server import AgentServer, read_log
from tests.simulate.conftest import (
    JSON_ANSWER,
    SSE_ANSWER,
    agent_config,
    flows_file,
    python_target,
    scripted,
    target_file,
)
from tests.simulate.judge_runs import PASS, replies, write_config

SECRET = "agent-key-SECRET-0123456789abcdef"


PREFLIGHT = [{"path": "/sessions", "session": "s-1"}, {"path": "/sessions/s-1", "teardown": "s-1"}]
"""What the agent's log holds first: the session the run opened and closed before its flows."""


def run(tmp_path: Path, target: Path, *flows: dict, name: str = "run") -> SimulateRun:
    path = flows_file(tmp_path / f"{name}.jsonl", list(flows))
    read_only = agent_config(tmp_path / "agent.toml", ["list_notes"])
    return simulate_run(
        path, target=target, out=tmp_path / name, agent_config=read_only, skip_judge=True
    )


def test_a_json_answer_gives_text_tools_with_results_and_tokens(
    tmp_path: Path, agent: AgentServer
) -> None:
    target = target_file(tmp_path / "t.toml", agent.base_url)
    done = run(tmp_path, target, scripted("notes", "hello", "list my notes"))
    [conversation] = done.conversations()
    first, second = conversation.turns
    assert (first.final_text, first.tool_calls, first.input_tokens) == ("You said: hello", [], 5)
    [call] = second.tool_calls
    assert (call.name, call.arguments, call.result) == (
        "list_notes",
        {},
        '["buy milk", "call Ana"]',
    )
    assert call.result_length == len(call.result)
    assert first.ttft_ms is None and first.turn_ms is not None  # not streamed: no first token
    assert conversation.transport_error is None and done.manifest.status == "completed"
    log = read_log(agent.log)  # the pre-flight; one session, both turns in it, its teardown
    assert log[:2] == PREFLIGHT
    assert [entry.get("message") for entry in log[2:]] == [None, "hello", "list my notes", None]
    assert {entry.get("session") for entry in log[3:5]} == {"s-2"}
    assert log[5] == {"path": "/sessions/s-2", "teardown": "s-2"}


def test_a_streamed_answer_joins_deltas_and_pairs_tool_results_with_their_calls(
    tmp_path: Path, agent: AgentServer
) -> None:
    target = target_file(tmp_path / "t.toml", agent.base_url, SSE_ANSWER)
    [conversation] = run(
        tmp_path, target, scripted("s", "note: ring Bo", mutates=False)
    ).conversations()
    [turn] = conversation.turns
    assert turn.final_text == "Saved the note 'ring Bo'. "
    [call] = turn.tool_calls
    assert (call.name, call.arguments, call.result) == ("add_note", {"text": "ring Bo"}, "saved")
    assert turn.tools_offered == ["add_note", "list_notes"]
    assert turn.ttft_ms is not None and turn.output_tokens == len("Saved the note 'ring Bo'.")


def test_an_sse_error_event_is_the_agents_answer_not_a_transport_error(
    tmp_path: Path, agent: AgentServer
) -> None:
    target = target_file(tmp_path / "t.toml", agent.base_url, SSE_ANSWER)
    [conversation] = run(tmp_path, target, scripted("e", "fail please", "hello")).conversations()
    assert conversation.turns[0].error == "agent: backend unavailable"
    assert conversation.turns[1].final_text == "You said: hello "
    assert conversation.transport_error is None


def test_an_error_event_is_judged_the_agents_own_failure_with_its_message(
    tmp_path: Path, agent: AgentServer
) -> None:
    target = target_file(tmp_path / "t.toml", agent.base_url, SSE_ANSWER)
    done = run(tmp_path, target, scripted("e", "fail please", "hello"))
    with FakeOpenAI(reply=replies(PASS)) as judge:
        config = write_config(tmp_path, ("main", judge.base_url))
        outcome = simulate_judge(done.path, roles={"judge": "main/grader"}, config_file=config)
    [verdict] = outcome.verdicts
    assert (verdict.verdict, verdict.owner, verdict.failure_category) == (
        "fail", "agent_execution", "agent_reported_error",
    )  # fmt: skip
    assert verdict.evidence == "turn 1: the agent reported: backend unavailable"
    assert verdict.failed_turns == [1] and verdict.judge_reported_owner is None


def test_a_stream_cut_before_the_required_end_event_is_stream_ended_early(
    tmp_path: Path, agent: AgentServer
) -> None:
    required = SSE_ANSWER.replace('done = ["done"]', 'end = "done"')
    target = target_file(tmp_path / "t.toml", agent.base_url, required)
    done = run(tmp_path, target, scripted("cut", "cut me off", "never sent"), scripted("ok", "hi"))
    by_id = {c.flow_id: c for c in done.conversations()}
    assert by_id["cut"].transport_error == (
        "turn 1: stream_ended_early: the answer stopped before its 'done' event: the turn is "
        "not complete"
    )
    assert [t.user for t in by_id["cut"].turns] == ["cut me off"]
    assert by_id["ok"].turns[0].final_text == "You said: hi "
    assert done.manifest.status == "completed_with_errors"
    # Without an end event, the same cut answer passes for a whole turn.
    loose = target_file(tmp_path / "loose.toml", agent.base_url, SSE_ANSWER)
    [cut] = run(tmp_path, loose, scripted("cut", "cut me off"), name="loose").conversations()
    assert cut.transport_error is None and cut.turns[0].final_text == "The first half "


def test_the_end_event_may_carry_the_usage(tmp_path: Path, agent: AgentServer) -> None:
    closing = SSE_ANSWER.replace('done = ["done"]', 'end = "usage"')
    target = target_file(tmp_path / "t.toml", agent.base_url, closing)
    [conversation] = run(tmp_path, target, scripted("u", "hello")).conversations()
    assert conversation.transport_error is None
    [turn] = conversation.turns
    assert (turn.final_text, turn.input_tokens, turn.output_tokens) == (
        "You said: hello ", len("hello"), len("You said: hello"),
    )  # fmt: skip


def test_a_form_body_is_sent_as_form_fields(tmp_path: Path, agent: AgentServer) -> None:
    answer = JSON_ANSWER.replace('path = "/chat"', 'path = "/form"\nbody_format = "form"')
    target = target_file(tmp_path / "t.toml", agent.base_url, answer)
    [conversation] = run(tmp_path, target, scripted("f", "a & b = c")).conversations()
    assert conversation.turns[0].final_text == "You said: a & b = c"


def test_an_http_error_ends_the_conversation_as_a_transport_error_keeping_its_turns(
    tmp_path: Path, agent: AgentServer
) -> None:
    target = target_file(tmp_path / "t.toml", agent.base_url)
    done = run(tmp_path, target, scripted("x", "hello", "boom", "never sent"))
    [conversation] = done.conversations()
    assert [t.user for t in conversation.turns] == ["hello", "boom"]
    assert conversation.turns[1].error is not None and "http_5xx" in conversation.turns[1].error
    assert conversation.transport_error is not None
    assert conversation.transport_error.startswith("turn 2: http_5xx")
    assert done.manifest.status == "failed"  # every conversation failed to complete
    assert "never sent" not in [entry.get("message") for entry in read_log(agent.log)]
    assert read_log(agent.log)[-1]["teardown"] == "s-2"  # torn down all the same


def test_a_slow_turn_times_out_and_is_not_sent_again(tmp_path: Path, agent: AgentServer) -> None:
    target = target_file(tmp_path / "t.toml", agent.base_url, timeout=1.0)
    done = run(tmp_path, target, scripted("slow", "slow answer"), scripted("ok", "hi"))
    by_id = {c.flow_id: c for c in done.conversations()}
    assert by_id["slow"].transport_error == "turn 1: timeout: no complete answer within 1 s"
    assert by_id["ok"].transport_error is None
    assert done.manifest.status == "completed_with_errors"
    assert done.manifest.played.transport_errors == 1
    assert "timeout" in done.manifest.error_examples
    sent = [entry.get("message") for entry in read_log(agent.log)]
    assert sent.count("slow answer") == 1


def test_a_refused_connection_is_tried_again_until_the_agent_listens(
    tmp_path: Path, notes_db: Path
) -> None:
    with socket.socket() as probe:  # a free port, nothing listening on it yet
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    target = target_file(
        tmp_path / "t.toml", f"http://127.0.0.1:{port}", connect_retries=20, retry_wait=0.2
    )
    log = tmp_path / "late.log"
    started = threading.Event()

    def listen_later() -> None:
        time.sleep(0.5)
        with AgentServer(log, notes_db, port=port):
            started.set()
            time.sleep(5)

    thread = threading.Thread(target=listen_later, daemon=True)
    thread.start()
    done = run(tmp_path, target, scripted("late", "hello"))
    assert started.is_set()
    [conversation] = done.conversations()
    assert conversation.transport_error is None
    assert conversation.turns[0].final_text == "You said: hello"


def test_nothing_listening_fails_the_pre_flight_after_the_retries(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    target = target_file(tmp_path / "t.toml", f"http://127.0.0.1:{port}", connect_retries=2)
    with pytest.raises(UserError) as caught:
        run(tmp_path, target, scripted("down", "hello"))
    assert caught.value.message.startswith(
        f"notes-agent failed the pre-flight session create and teardown at "
        f"http://127.0.0.1:{port} (connection: "
    )
    assert "(3 tries)): start the agent, or correct base_url" in caught.value.message
    assert not (tmp_path / "run").exists()


def test_a_key_from_the_environment_is_sent_and_never_written(
    tmp_path: Path, notes_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NOTES_AGENT_KEY", SECRET)
    extra = 'env = { key = "NOTES_AGENT_KEY" }\nheaders = { Authorization = "Bearer ${key}" }\n'
    with AgentServer(tmp_path / "agent.log", notes_db, key=SECRET) as agent:
        target = target_file(tmp_path / "t.toml", agent.base_url, extra=extra)
        done = run(tmp_path, target, scripted("k", "hello"))
    assert done.conversations()[0].turns[0].final_text == "You said: hello"
    for path in done.path.iterdir():
        assert SECRET not in path.read_text(errors="replace"), path.name
    monkeypatch.delenv("NOTES_AGENT_KEY")
    with pytest.raises(UserError, match="set NOTES_AGENT_KEY"):
        run(tmp_path, target, scripted("k", "hello"), name="again")
    assert not (tmp_path / "again").exists()


def test_a_credential_command_gives_the_key(tmp_path: Path, notes_db: Path) -> None:
    extra = (
        f'credential_command = "echo {SECRET}"\n'
        'headers = { Authorization = "Bearer ${credential}" }\n'
    )
    with AgentServer(tmp_path / "agent.log", notes_db, key=SECRET) as agent:
        target = target_file(tmp_path / "t.toml", agent.base_url, extra=extra)
        done = run(tmp_path, target, scripted("c", "hello"))
    assert done.conversations()[0].transport_error is None


def test_tool_results_are_cut_to_the_runs_limit_with_their_full_length(
    tmp_path: Path, agent: AgentServer
) -> None:
    target = target_file(tmp_path / "t.toml", agent.base_url)
    flows = flows_file(tmp_path / "f.jsonl", [scripted("n", "notes")])
    done = simulate_run(flows, target=target, out=tmp_path / "r", skip_judge=True, result_chars=5)
    [call] = done.conversations()[0].turns[0].tool_calls
    assert (call.result, call.result_length) == ('["buy', len('["buy milk", "call Ana"]'))


PYTHON_AGENT = """
def answer(messages):
    said = messages[-1]["content"]
    if said == "crash":
        raise RuntimeError("the agent fell over")
    return [
        {"type": "tool_start", "id": "1", "name": "lookup", "arguments": '{"q": "%s"}' % said},
        {"type": "tool_result", "id": "1", "result": {"found": len(messages)}},
        {"type": "text_delta", "text": "turn "},
        {"type": "text_delta", "text": str(len(messages))},
        {"type": "usage", "input_tokens": 3, "output_tokens": 2},
    ]
"""


def test_a_python_callable_takes_the_conversation_so_far(tmp_path: Path) -> None:
    target = python_target(tmp_path, "echo_agent", PYTHON_AGENT)
    done = run(tmp_path, target, scripted("p", "a", "b", "crash", "d"))
    [conversation] = done.conversations()
    assert [t.final_text for t in conversation.turns[:2]] == ["turn 1", "turn 3"]
    call = conversation.turns[1].tool_calls[0]
    assert (call.name, call.arguments, call.result) == ("lookup", {"q": "b"}, '{"found": 3}')
    assert conversation.transport_error == ("turn 3: python: RuntimeError: the agent fell over")


def bad_target(tmp_path: Path, text: str) -> str:
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_target(path)
    return str(caught.value).removeprefix(f"{path}: ")


HTTP = 'name = "a"\ntype = "http"\nbase_url = "http://127.0.0.1:1"\n'
TURN = '[turn]\npath = "/chat"\nbody = { m = "${message}" }\n[answer]\nformat = "json"\n'


def test_bad_target_files_name_the_key_and_the_fix(tmp_path: Path) -> None:
    assert bad_target(tmp_path, HTTP + "retries = 3\n" + TURN) == (
        "retries: unknown key: remove it or check its spelling"
    )
    assert bad_target(tmp_path, HTTP + TURN + 'txt = "reply"\n') == (
        "answer.txt: unknown key: remove it or check its spelling"
    )
    assert bad_target(tmp_path, HTTP + TURN.replace("${message}", "${mesage}")).startswith(
        "turn.body.m: unknown ${mesage} (known: conversation_id, flow_id, message, session_id, turn"
    )
    assert bad_target(tmp_path, HTTP + TURN.replace("${message}", "${session_id}")) == (
        "${session_id} needs a [session] create request"
    )
    assert bad_target(tmp_path, 'name = "m"\ntype = "model"\n') == "tools: Field required"
    assert bad_target(tmp_path, 'name = "m"\n') == (
        'type: missing: say type = "http", "python" or "model"'
    )
    assert bad_target(tmp_path, 'name = "m"\ntype = "grpc"\n') == (
        "type: unknown target type 'grpc': name one of http, python, model, or install a "
        "package that adds one (entry point group agent_backtest.targets)"
    )
    assert bad_target(tmp_path, HTTP.replace("http://", "ftp://") + TURN).startswith("base_url:")
    assert bad_target(tmp_path, HTTP + "[turn\n").startswith("not valid TOML")
    sse = HTTP + '[turn]\npath = "/s"\n[answer]\nformat = "sse"\nevents.t = { kind = "texts" }\n'
    assert bad_target(tmp_path, sse).startswith("answer.events.t.kind:")


def test_a_python_target_that_cannot_be_imported_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "py.toml"
    path.write_text('name = "p"\ntype = "python"\ncallable = "no_such_module:f"\n')
    flows = flows_file(tmp_path / "f.jsonl", [scripted("a", "hi")])
    with pytest.raises(InputError, match="callable: cannot import no_such_module"):
        simulate_run(flows, target=path, out=tmp_path / "r", skip_judge=True)
    assert not (tmp_path / "r").exists()
