"""Everything about the target is checked before the first turn: a ``base_url`` that cannot be
connected to is refused when the file is read, and the agent is tried once (its health request,
else a session opened and closed, else a connection) before the run directory is made, so a
down agent or a refused key is one line and exit 2, with nothing written."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_backtest.cli.app import app
from tests.simulate.agent_server import AgentServer, read_log
from tests.simulate.conftest import JSON_ANSWER, flows_file, scripted, target_file

runner = CliRunner()
KEY = "the-right-key-0123456789"


@pytest.fixture(autouse=True)
def no_stray_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)


def refused(target: Path, tmp_path: Path, out: str = "refused") -> str:
    """The one line ``abt simulate run`` prints when it refuses the target, having written
    nothing."""
    flows = flows_file(tmp_path / "flows.jsonl", [scripted("hi", "hello")])
    result = runner.invoke(
        app, ["simulate", "run", str(flows), "--target", str(target), "--out", out,
              "--skip-judge"],
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    [line] = result.output.strip().splitlines()
    assert not (tmp_path / out).exists()
    return line


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize(
    ("base_url", "problem"),
    [
        ("http://127.0.0.1:${port}", "base_url is not a template: write the address itself"),
        ("http://127.0.0.1:99999", "the port must be a number from 1 to 65535"),
        ("http://:8000", "no usable host name"),
    ],
)
def test_a_base_url_that_cannot_be_connected_to_is_refused_when_the_file_is_read(
    tmp_path: Path, base_url: str, problem: str
) -> None:
    target = target_file(tmp_path / "t.toml", base_url)
    assert refused(target, tmp_path) == (f"abt: error: {target}: base_url: {base_url!r}: {problem}")


def test_a_down_agent_is_one_line_naming_the_target_and_the_cause(tmp_path: Path) -> None:
    port = free_port()
    target = target_file(tmp_path / "t.toml", f"http://127.0.0.1:{port}", connect_retries=1)
    line = refused(target, tmp_path)
    assert line.startswith(
        "abt: error: --target: notes-agent failed the pre-flight session create and teardown "
        f"at http://127.0.0.1:{port} (connection: "
    )
    assert line.endswith("(2 tries)): start the agent, or correct base_url; nothing was played")


def test_a_refused_key_is_one_line_and_no_turn_is_sent(
    tmp_path: Path, notes_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NOTES_AGENT_KEY", "a-wrong-key-9876543210")
    extra = 'env = { key = "NOTES_AGENT_KEY" }\nheaders = { Authorization = "Bearer ${key}" }\n'
    with AgentServer(tmp_path / "agent.log", notes_db, key=KEY) as agent:
        target = target_file(tmp_path / "t.toml", agent.base_url, extra=extra)
        line = refused(target, tmp_path)
    assert line == (
        "abt: error: --target: notes-agent failed the pre-flight session create and teardown "
        f'at {agent.base_url} (http_401: HTTP 401: {{"error": "unauthorised"}}): check the '
        "credential the target file sends (headers, env, credential_command); nothing was "
        "played"
    )
    assert "a-wrong-key" not in line
    assert read_log(agent.log) == []  # refused at the door: not one session, not one turn


@pytest.mark.parametrize("path", ["/health", "/healthz"])
def test_a_declared_health_request_is_the_pre_flight(
    tmp_path: Path, agent: AgentServer, path: str
) -> None:
    health = f'health = {{ method = "GET", path = "{path}" }}\n'
    target = target_file(tmp_path / "t.toml", agent.base_url, extra=health)
    if path == "/healthz":
        line = refused(target, tmp_path)
        assert line.startswith(
            f"abt: error: --target: notes-agent failed the pre-flight health request at "
            f'{agent.base_url} (http_404: HTTP 404: {{"error": "no /healthz"}}): see the '
            "agent's log"
        )
        assert read_log(agent.log) == [{"path": "/healthz"}]
        return
    flows = flows_file(tmp_path / "flows.jsonl", [scripted("hi", "hello")])
    result = runner.invoke(
        app, ["simulate", "run", str(flows), "--target", str(target), "--out", "run",
              "--skip-judge"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    log = read_log(agent.log)
    assert log[0] == {"path": "/health"}  # then the flow's own session, the first one
    assert log[1] == {"path": "/sessions", "session": "s-1"}


def bare_target(path: Path, base_url: str) -> Path:
    """A target with no session: each turn a request of its own."""
    answer = JSON_ANSWER.replace('session = "${session_id}", ', "")
    top = f'name = "bare"\ntype = "http"\nbase_url = "{base_url}"\nconnect_retries = 0\n'
    path.write_text(top + answer, encoding="utf-8")
    return path


def test_a_target_without_sessions_is_tried_by_a_connection_and_nothing_is_sent(
    tmp_path: Path, agent: AgentServer
) -> None:
    flows = flows_file(tmp_path / "flows.jsonl", [scripted("hi", "hello")])
    target = bare_target(tmp_path / "t.toml", agent.base_url)
    result = runner.invoke(
        app, ["simulate", "run", str(flows), "--target", str(target), "--out", "run",
              "--skip-judge"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert [entry.get("message") for entry in read_log(agent.log)] == ["hello"]
    down = bare_target(tmp_path / "down.toml", f"http://127.0.0.1:{free_port()}")
    assert "failed the pre-flight connection at http://127.0.0.1:" in refused(down, tmp_path)
