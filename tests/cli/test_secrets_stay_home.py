"""Credentials recorded inside request bodies never reach a unit, a run file or the candidate."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from agent_backtest.providers import ProviderSettings
from agent_backtest.providers.openai import OpenAIProvider
from agent_backtest.redaction import drop_secret_fields
from agent_backtest.trace import LLMRequest, Message
from tests.conftest import FIXTURES
from tests.fake_openai import FakeOpenAI

PLANTED = "sk-planted-0123456789abcdefXYZ"
FIELDS = {
    "api_key": PLANTED,
    "extra_headers": {"Authorization": f"Bearer {PLANTED}", "X-Trace": "t-1"},
    "extra_query": {"key": "q-secret-9876543210"},
    "extra_body": {"session": "s-1", "auth_token": "tok-secret-123456"},
    "timeout": 30,
}


def planted_log(tmp_path: Path) -> Path:
    """The chat-log fixture with credentials and transport options in every request."""
    lines = (FIXTURES / "chat_log" / "example.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines if line.strip()]
    for record in records:
        record["request"].update(json.loads(json.dumps(FIELDS)))
    path = tmp_path / "planted.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


def abt(cwd: Path, *args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agent_backtest.cli", *map(str, args)],
        cwd=cwd,
        env={**os.environ, "OPENAI_API_KEY": "sk-test-own-key-0123456789"},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_request_holding_an_api_key_gives_a_unit_and_a_call_without_it(tmp_path: Path) -> None:
    log = planted_log(tmp_path)
    units = abt(tmp_path, "units", log, "-o", "units.jsonl")
    assert units.returncode == 0, units.stderr
    assert "35 recorded request fields left out as credentials or transport options" in " ".join(
        units.stdout.split()
    )
    written = (tmp_path / "units.jsonl").read_text()
    assert written and PLANTED not in written and "extra_headers" not in written
    assert "q-secret" not in written and "tok-secret" not in written and "timeout" not in written
    params = [json.loads(line)["request"]["params"] for line in written.splitlines()]
    assert all(p["extra_body"] == {"session": "s-1"} for p in params)
    with FakeOpenAI() as server:
        run = abt(tmp_path, "replay", log, "--model", "openai/m", "--base-url", server.base_url,
                  "--out", "run", "--no-cache")  # fmt: skip
        bodies, headers = server.bodies, server.headers
    assert run.returncode == 0, run.stderr
    assert bodies and len(bodies) == len(params)
    seen = json.dumps(bodies) + json.dumps(headers)
    assert PLANTED not in seen and "q-secret" not in seen and "tok-secret" not in seen
    assert not any({"api_key", "extra_headers", "extra_query", "timeout"} & set(b) for b in bodies)
    for name in os.listdir(tmp_path / "run"):
        assert PLANTED not in (tmp_path / "run" / name).read_text(errors="replace"), name


def test_a_units_file_from_elsewhere_still_sends_no_credential() -> None:
    request = LLMRequest(
        model="gpt-4o",
        messages=[Message(role="user", content="hi")],
        params={"temperature": 0, "api_key": PLANTED, "extra_headers": {"x": "y"}},
    )
    provider = OpenAIProvider(
        "openai", ProviderSettings(type="openai", base_url="http://h/v1"), None
    )
    payload, adjustments = provider.payload(request, "m", 0)
    assert payload == {
        "model": "m",
        "messages": [{"role": "user", "content": "hi"}],
        "temperature": 0,
        "seed": 0,
    }
    assert adjustments == [
        "removed api_key: a credential or transport option",
        "removed extra_headers: a credential or transport option",
    ]


def test_only_credentials_and_transport_options_are_dropped() -> None:
    params = {
        "temperature": 0.2,
        "max_tokens": 50,
        "max_completion_tokens": 60,
        "response_format": {"type": "json_object"},
        "timeout": 10,
        "nested": {"list": [{"password": "p", "keep": 1}], "headers": "kept below the top"},
        "note": "Bearer abcdefghijklmnop",
    }
    removed = drop_secret_fields(params)
    assert removed == ["nested.list[0].password", "note", "timeout"]
    assert params == {
        "temperature": 0.2,
        "max_tokens": 50,
        "max_completion_tokens": 60,
        "response_format": {"type": "json_object"},
        "nested": {"list": [{"keep": 1}], "headers": "kept below the top"},
    }


def test_a_units_file_from_elsewhere_keeps_no_credential_field_and_sends_the_message_exact(
    tmp_path: Path,
) -> None:
    """A units file written by another tool holds ``params.metadata.key`` and ``params.api_key``
    (dropped: neither in the run's units.jsonl nor sent) and a key pasted into a user message
    (needed verbatim for the replay: sent unchanged)."""
    from tests.conftest import write_tau_units

    pasted = "sk-proj-PastedIntoTheChat0123456789abcd"
    source = write_tau_units(tmp_path / "source.jsonl", limit=3)
    units = [json.loads(line) for line in source.read_text().splitlines()]
    for unit in units:
        unit["request"]["params"] |= {"api_key": PLANTED, "metadata": {"key": "meta-secret-42"}}
        unit["request"]["messages"].append({"role": "user", "content": f"my key is {pasted}"})
    planted = tmp_path / "planted-units.jsonl"
    planted.write_text("".join(json.dumps(unit) + "\n" for unit in units))
    with FakeOpenAI() as server:
        run = abt(tmp_path, "replay", planted, "--model", "openai/m", "--base-url",
                  server.base_url, "--out", "run", "--no-cache")  # fmt: skip
        bodies = list(server.bodies)
    assert run.returncode == 0, run.stderr
    assert len(bodies) == len(units)
    sent = json.dumps(bodies)
    assert PLANTED not in sent and "meta-secret-42" not in sent
    assert all(body["messages"][-1]["content"] == f"my key is {pasted}" for body in bodies)
    stored = (tmp_path / "run" / "units.jsonl").read_text()
    assert PLANTED not in stored and "meta-secret-42" not in stored
    # shown masked: on the page and in the terminal; as it is with --show-secrets
    report = abt(tmp_path, "report", "run")
    assert report.returncode == 0, report.stderr
    page = (tmp_path / "run" / "report.html").read_text()
    assert pasted not in page and "my key is [redacted]" in page
    unit_id = json.loads(stored.splitlines()[0])["unit_id"]
    shown = abt(tmp_path, "show", "run/units.jsonl", "--unit", unit_id)
    assert shown.returncode == 0, shown.stderr
    assert pasted not in shown.stdout and "my key is [redacted]" in shown.stdout
    shown = abt(tmp_path, "show", "run/units.jsonl", "--unit", unit_id, "--show-secrets")
    assert pasted in shown.stdout
    assert abt(tmp_path, "report", "run", "--show-secrets").returncode == 0
    assert pasted in (tmp_path / "run" / "report.html").read_text()


def test_credential_shapes_are_masked_in_shown_text_and_words_are_not() -> None:
    from agent_backtest.redaction import mask_secrets

    shapes = [
        "sk-proj-abcdefghijklmnop0123",
        "sk-ant-api03-abcdefghijklmnop0123",
        "AKIAIOSFODNN7EXAMPLE",
        "ghp_" + "a1B2" * 9,
        "AIza" + "SyA-abcdefghijklmnopqrstuvwxyz01234",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    ]
    for shape in shapes:
        assert mask_secrets(f"use {shape} now") == "use [redacted] now", shape
    assert mask_secrets("Authorization: Bearer abcdefghijklmnop0123") == (
        "Authorization: Bearer [redacted]"
    )
    words = "ask-me a question; task-oriented sketches; the AKIA prefix; a bearer of news"
    assert mask_secrets(words) == words
