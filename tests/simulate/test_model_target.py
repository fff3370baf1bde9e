"""The model target: the built-in agent loop on an OpenAI-compatible server on 127.0.0.1, with
Python tools; each model call recorded and read back by ``abt units``, ``show`` and ``profile``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_backtest.api.simulate import simulate_resume, simulate_run
from agent_backtest.errors import InputError, UserError
from tests.fake_openai import FakeOpenAI
from tests.simulate.conftest import abt, agent_config, flows_file, scripted
from tests.simulate.judge_runs import PASS, replies, verdict_lines, write_config
from tests.simulate.model_tools import TOOLS


@pytest.fixture(autouse=True)
def in_tmp(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)


def tool_call(*calls: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    """An assistant message asking for the tool calls."""
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": f"c{n}-{name}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
            for n, (name, arguments) in enumerate(calls)
        ],
    }


def agent_model(body: dict[str, Any]) -> str | dict[str, Any]:
    """The scripted agent model: it acts on the latest user message, and answers a tool
    result by quoting it."""
    messages = body["messages"]
    said = next(m["content"] for m in reversed(messages) if m["role"] == "user")
    if said == "loop":
        return tool_call(("count_words", {"text": "again and again"}))
    if messages[-1]["role"] == "tool":
        results = [m["content"] for m in messages[messages.index(_last_call(messages)) + 1 :]]
        return "done: " + " | ".join(results)
    if said.startswith("note "):
        return tool_call(("add_note", {"text": said[5:]}), ("count_words", {"text": said[5:]}))
    if said == "check the store":
        return tool_call(("explode", {"reason": "asked"}))
    return f"you said {said}"


def _last_call(messages: list[dict[str, Any]]) -> dict[str, Any]:
    return next(m for m in reversed(messages) if m["role"] == "assistant" and m.get("tool_calls"))


pytestmark = pytest.mark.fake_openai(reply=agent_model)  # the scripted agent model


def config_file(tmp_path: Path, fake: FakeOpenAI) -> Path:
    path = tmp_path / "abt.toml"
    path.write_text(
        f'[providers.sim]\ntype = "openai"\nbase_url = "{fake.base_url}"\napi_key_env = ""\n'
    )
    return path


def model_target(tmp_path: Path, tools: str | None = None, **settings: Any) -> Path:
    """A model target file with the Python tools of tests/simulate/model_tools.py."""
    (tmp_path / "tools.json").write_text(json.dumps(TOOLS))
    top = {"name": "notes-model", "type": "model", "system": "You keep notes."} | settings
    lines = [f"{key} = {json.dumps(value)}" for key, value in top.items()]
    python = {tool["function"]["name"]: "" for tool in TOOLS}
    python = {name: f"tests.simulate.model_tools:{name}" for name in python}
    tools = tools or (
        '[tools]\nfile = "tools.json"\n[tools.python]\n'
        + "".join(f'{name} = "{ref}"\n' for name, ref in python.items())
    )
    path = tmp_path / "model.toml"
    path.write_text("\n".join(lines) + "\n" + tools, encoding="utf-8")
    return path


def pure_tools(tmp_path: Path) -> Path:
    """The agent config of the test tools, which keep nothing: every one is read-only."""
    return agent_config(tmp_path / "agent.toml", [tool["function"]["name"] for tool in TOOLS])


def run(tmp_path: Path, fake: FakeOpenAI, flows: list[dict], **options: Any) -> Any:
    return simulate_run(
        flows_file(tmp_path / "flows.jsonl", flows),
        target=options.pop("target", None) or model_target(tmp_path),
        out=tmp_path / "run",
        roles={"agent": "sim/agent-model"},
        config_file=config_file(tmp_path, fake),
        agent_config=options.pop("agent_config", None) or pure_tools(tmp_path),
        skip_judge=True,
        **options,
    )


def test_a_tool_call_round_trip_is_recorded_with_every_model_call(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    done = run(tmp_path, fake_openai, [scripted("n", "note buy milk", "thanks")])
    [conversation] = done.conversations()
    first, second = conversation.turns
    assert [(c.name, c.arguments, c.result) for c in first.tool_calls] == [
        ("add_note", {"text": "buy milk"}, '{"length": 8, "saved": "buy milk"}'),
        ("count_words", {"text": "buy milk"}, "2"),
    ]
    assert first.final_text == 'done: {"length": 8, "saved": "buy milk"} | 2'
    assert first.tools_offered == ["add_note", "count_words", "explode"]
    assert first.error is None and second.final_text == "you said thanks"
    # Two calls in the first turn (tools, then text), one in the second: each kept exactly.
    assert [len(turn.model_calls) for turn in conversation.turns] == [2, 1]
    assert fake_openai.total == 3
    sent = [call.request for turn in conversation.turns for call in turn.model_calls]
    assert [len(request.messages) for request in sent] == [2, 5, 7]
    assert [m["role"] for m in fake_openai.bodies[2]["messages"]] == [
        "system", "user", "assistant", "tool", "tool", "assistant", "user",
    ]  # fmt: skip
    assert fake_openai.bodies[0]["tools"][0]["function"]["name"] == "add_note"
    assert first.input_tokens == sum(
        c.response.usage.input_tokens for c in first.model_calls if c.response and c.response.usage
    )
    assert first.output_tokens == 24
    assert done.manifest.roles["agent"].model == "sim/agent-model"


def test_a_tool_that_raises_is_a_tool_error_the_model_reads(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    done = run(tmp_path, fake_openai, [scripted("s", "check the store")])
    [turn] = done.conversations()[0].turns
    [activity] = turn.tool_calls
    assert activity.error == "RuntimeError: the notes store is down (asked)"
    assert activity.result is None
    assert turn.final_text == "done: Error: RuntimeError: the notes store is down (asked)"
    assert turn.error is None and done.manifest.status == "completed"


def test_the_step_limit_is_a_named_error_of_the_turn(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    target = model_target(tmp_path, max_steps=3)
    done = run(tmp_path, fake_openai, [scripted("l", "loop", "hi")], target=target)
    [conversation] = done.conversations()
    looped, after = conversation.turns
    assert looped.error == "agent: step_limit: no text answer after 3 model calls (max_steps)"
    assert looped.final_text is None
    assert len(looped.model_calls) == 3 and len(looped.tool_calls) == 3
    assert after.final_text == "you said hi"  # the conversation went on
    assert conversation.transport_error is None


def test_a_turn_stopped_at_the_step_limit_is_judged_agent_execution_with_its_calls(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    target = model_target(tmp_path, max_steps=3)
    done = run(tmp_path, fake_openai, [scripted("l", "loop", "hi")], target=target)
    (tmp_path / "judge").mkdir()
    with FakeOpenAI(reply=replies(PASS)) as judge:
        config = write_config(tmp_path / "judge", ("main", judge.base_url))
        code, output = abt("simulate", "judge", done.path, "--judge", "main/grader",
                           "--config", config)  # fmt: skip
    assert code == 0, output
    [verdict] = verdict_lines(done.path)
    assert (verdict["verdict"], verdict["owner"], verdict["failure_category"]) == (
        "fail", "agent_execution", "step_limit",
    )  # fmt: skip
    assert verdict["evidence"] == (
        "turn 1: step_limit: no text answer after 3 model calls (max_steps); it called "
        "count_words ×3"
    )
    assert verdict["failed_turns"] == [1] and verdict["check"] == "agent_reported_error"


def test_a_model_that_fails_is_a_transport_error_never_an_answer(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    fake_openai.faults["hello"] = ["401"]
    done = run(tmp_path, fake_openai, [scripted("h", "hello")])
    [conversation] = done.conversations()
    assert conversation.transport_error is not None
    assert conversation.transport_error.startswith("turn 1: model_http_401: HTTP 401")
    assert conversation.turns[0].final_text is None
    assert done.manifest.status == "failed"


def test_units_show_and_profile_read_the_model_calls(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    flows = [scripted("n", "note buy milk", "thanks"), scripted("s", "check the store")]
    code, output = abt(
        "simulate", "run", flows_file(tmp_path / "flows.jsonl", flows),
        "--target", model_target(tmp_path), "--out", "run", "--skip-judge",
        "--agent", "sim/agent-model", "--config", config_file(tmp_path, fake_openai),
        "--agent-config", pure_tools(tmp_path),
    )  # fmt: skip
    assert code == 0, output
    sessions = tmp_path / "run" / "sessions.jsonl"
    code, output = abt("units", sessions, "-o", tmp_path / "units.jsonl")
    assert code == 0, output
    units = [json.loads(line) for line in (tmp_path / "units.jsonl").read_text().splitlines()]
    assert len(units) == fake_openai.total == 5  # one unit per call the server answered
    sent = sorted(json.dumps(body["messages"], sort_keys=True) for body in fake_openai.bodies)
    assert len(set(sent)) == 5
    code, shown = abt("show", sessions, "--session", "n")
    assert code == 0 and "add_note" in shown and "buy milk" in shown
    code, profile = abt("profile", sessions)
    assert code == 0, profile


def test_a_resumed_run_plays_again_on_the_agent_role_of_its_manifest(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    fake_openai.faults["hi"] = ["401"]
    done = run(tmp_path, fake_openai, [scripted("a", "hi")])
    assert done.conversations()[0].transport_error is not None
    resumed = simulate_resume(done.path, retry_errors=True, skip_judge=True)
    [conversation] = resumed.conversations()
    assert conversation.turns[0].final_text == "you said hi"
    assert resumed.manifest.roles["agent"].model == "sim/agent-model"
    assert resumed.manifest.status == "completed" and fake_openai.total == 2


def test_the_model_target_needs_the_agent_role_before_any_call(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    flows = flows_file(tmp_path / "flows.jsonl", [scripted("a", "hi")])
    code, output = abt(
        "simulate", "run", flows, "--target", model_target(tmp_path), "--out", "run",
        "--skip-judge",
    )  # fmt: skip
    assert code == 2
    assert output.strip().splitlines() == [
        "abt: error: --agent: the model target runs the agent's model: name it "
        "(provider/model), or set model in [roles.agent] of abt.toml"
    ]
    code, output = abt(
        "simulate", "run", flows, "--target", model_target(tmp_path), "--out", "run",
        "--skip-judge", "--agent", "nowhere/agent",
    )  # fmt: skip
    assert code == 2 and output.startswith("abt: error: --agent:"), output
    assert fake_openai.total == 0 and not (tmp_path / "run").exists()


def test_an_agent_for_a_target_that_runs_its_own_model_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "py.toml"
    target.write_text('name = "p"\ntype = "python"\ncallable = "json:dumps"\n')
    with pytest.raises(UserError, match="the python target runs its own model"):
        simulate_run(
            flows_file(tmp_path / "f.jsonl", [scripted("a", "hi")]),
            target=target,
            out=tmp_path / "r",
            roles={"agent": "sim/x"},
            skip_judge=True,
        )


@pytest.mark.parametrize(
    ("tools", "message"),
    [
        (
            '[tools]\nfile = "tools.json"\n[tools.python]\nadd_note = "no_such_module:f"\n',
            "tools.python.add_note: cannot import no_such_module",
        ),
        (
            '[tools]\nfile = "tools.json"\n[tools.python]\n'
            'add_note = "tests.simulate.model_tools:nothing"\n',
            "tools.python.add_note: tests.simulate.model_tools has no nothing",
        ),
        (
            '[tools]\nfile = "tools.json"\n[tools.python]\n'
            'add_note = "tests.simulate.model_tools:add_note"\n',
            "tools.python: no function runs the tool 'count_words'",
        ),
        (
            '[tools]\nfile = "absent.json"\n[tools.python]\nadd_note = "m:f"\n',
            "absent.json",
        ),
        ('[tools]\nfile = "tools.json"\n', "tools: give the code that runs the tools"),
        (
            '[tools]\n[tools.python]\nadd_note = "tests.simulate.model_tools:add_note"\n',
            "tools: Python tools need their definitions",
        ),
        (
            '[tools.mcp]\ncommand = "no-such-mcp-server-binary"\n',
            "tools.mcp.command: cannot find 'no-such-mcp-server-binary'",
        ),
    ],
)
def test_a_bad_model_target_is_one_line_before_any_turn(
    tmp_path: Path, fake_openai: FakeOpenAI, tools: str, message: str
) -> None:
    flows = flows_file(tmp_path / "flows.jsonl", [scripted("a", "hi")])
    code, output = abt(
        "simulate", "run", flows, "--target", model_target(tmp_path, tools), "--out", "run",
        "--skip-judge", "--agent", "sim/agent-model",
        "--config", config_file(tmp_path, fake_openai),
    )  # fmt: skip
    assert code == 2, output
    [line] = output.strip().splitlines()
    assert line.startswith("abt: error: ") and message in line, line
    assert fake_openai.total == 0 and not (tmp_path / "run").exists()


def test_inline_tools_are_offered(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    inline = (
        '[[tools.offered]]\ntype = "function"\nfunction = { name = "add_note", parameters = '
        '{ type = "object" } }\n[tools.python]\nadd_note = "tests.simulate.model_tools:add_note"\n'
    )
    done = run(tmp_path, fake_openai, [scripted("a", "hi")], target=model_target(tmp_path, inline))
    assert done.conversations()[0].turns[0].tools_offered == ["add_note"]
    assert [t["function"]["name"] for t in fake_openai.bodies[0]["tools"]] == ["add_note"]


def test_inline_tools_in_a_bad_shape_name_their_index(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    inline = '[[tools.offered]]\ntype = "function"\nfunction = { description = "d" }\n'
    inline += '[tools.python]\nx = "m:f"\n'
    with pytest.raises(InputError, match=r"tools\.offered\.0: tool definition without a name"):
        simulate_run(
            flows_file(tmp_path / "f.jsonl", [scripted("a", "hi")]),
            target=model_target(tmp_path, inline),
            out=tmp_path / "r",
            roles={"agent": "sim/agent-model"},
            config_file=config_file(tmp_path, fake_openai),
            skip_judge=True,
        )


@pytest.mark.local_model
def test_the_embedded_model_runs_the_loop_and_each_call_is_a_unit(tmp_path: Path) -> None:
    flows = flows_file(tmp_path / "flows.jsonl", [scripted("n", "Save the note: buy milk.")])
    target = model_target(tmp_path, max_steps=2, timeout=300)
    code, output = abt(
        "simulate", "run", flows, "--target", target, "--out", "run", "--skip-judge",
        "--agent", "local/smollm2", "--agent-config", pure_tools(tmp_path),
    )  # fmt: skip
    assert code == 0, output
    [line] = (tmp_path / "run" / "conversations.jsonl").read_text().splitlines()
    [turn] = json.loads(line)["turns"]
    # A 135M model may call tools up to the limit: that is the turn's named error, not a crash.
    assert 1 <= len(turn["model_calls"]) <= 2
    assert turn.get("final_text") is not None or turn["error"].startswith("agent: step_limit")
    code, output = abt("units", tmp_path / "run" / "sessions.jsonl", "-o", tmp_path / "u.jsonl")
    assert code == 0, output
    assert len((tmp_path / "u.jsonl").read_text().splitlines()) == len(turn["model_calls"])
