"""The OpenAI-compatible provider against a real HTTP server on 127.0.0.1, faults included."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agent_backtest.providers import (
    CallPolicy,
    CredentialCommand,
    ModelClient,
    ProviderSettings,
    ResponseCache,
)
from agent_backtest.providers.openai import OpenAIProvider
from agent_backtest.trace import LLMRequest, Message, ToolDef
from tests.fake_openai import FakeOpenAI

FAST = CallPolicy(timeout=1.0, max_retries=3, backoff_initial=0.0)


def request(text: str, tools: bool = True) -> LLMRequest:
    return LLMRequest(
        model="gpt-4o",
        messages=[Message(role="system", content="be brief"), Message(role="user", content=text)],
        tools=[ToolDef(name="lookup", parameters={"type": "object", "properties": {}})]
        if tools
        else None,
        tool_choice="auto" if tools else None,
        params={"temperature": 0.0},
    )


def client(
    server: FakeOpenAI,
    policy: CallPolicy = FAST,
    key: str | None = "sk-test-123456789",
    **kwargs: object,
) -> ModelClient:
    settings = ProviderSettings(type="openai", base_url=server.base_url)
    return ModelClient(OpenAIProvider("openai", settings, key), policy, **kwargs)  # type: ignore[arg-type]


async def generate(model_client: ModelClient, text: str, tools: bool = True):
    try:
        return await model_client.generate(request(text, tools), "gpt-4o", 7)
    finally:
        await model_client.provider.aclose()


@pytest.mark.parametrize(
    ("script", "kind", "attempts"),
    [
        ([], None, 1),
        (["500", "500"], None, 3),
        (["429"], None, 2),
        (["reset"], None, 2),
        (["malformed"], None, 2),
        (["slow"], None, 2),
        (["slow", "slow"], "timeout", 2),
        (["500"] * 4, "http_5xx", 4),
        (["429"] * 4, "http_429", 4),
        (["reset"] * 4, "connection", 4),
        (["malformed"] * 4, "malformed_response", 4),
        (["401"], "http_401", 1),
    ],
)
def test_each_fault_ends_answered_or_with_its_kind(
    script: list[str], kind: str | None, attempts: int
) -> None:
    with FakeOpenAI(slow_seconds=2.0) as server:
        server.faults["hello"] = script
        outcome = asyncio.run(generate(client(server), "hello"))
        assert server.requests["hello"] == attempts == outcome.attempts
    if kind is None:
        assert outcome.error is None and outcome.response is not None
        assert outcome.response.message.tool_calls[0].name == "lookup"
    else:
        assert outcome.response is None and outcome.error is not None
        assert outcome.error.kind == kind


def test_http_errors_of_the_client_kind_are_not_retried() -> None:
    with FakeOpenAI() as server:
        server.faults["x"] = ["401", "ok"]
        outcome = asyncio.run(generate(client(server, CallPolicy(max_retries=5)), "x"))
    assert outcome.error is not None and outcome.error.kind == "http_401"
    assert outcome.attempts == 1


def test_retry_after_is_honoured() -> None:
    with FakeOpenAI() as server:
        server.faults["wait"] = ["429"]
        outcome = asyncio.run(generate(client(server), "wait"))
        first, second = server.arrivals["wait"]
    assert outcome.response is not None
    assert second - first >= 0.9  # the server asked for 1 s; backoff alone would be ~0 here


def test_payload_goes_out_as_recorded() -> None:
    with FakeOpenAI() as server:
        asyncio.run(generate(client(server), "as recorded"))
        body = server.bodies[0]
    assert body == {
        "model": "gpt-4o",
        "seed": 7,
        "temperature": 0.0,
        "tool_choice": "auto",
        "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "as recorded"},
        ],
        "tools": [
            {
                "type": "function",
                "function": {"name": "lookup", "parameters": {"type": "object", "properties": {}}},
            }
        ],
    }


def test_credential_command_refreshes_once_on_401(tmp_path: Path) -> None:
    with FakeOpenAI(api_key="fresh-key") as server:
        credentials = CredentialCommand("echo fresh-key")
        model_client = client(server, key="stale-key", credentials=credentials)

        async def several() -> list:
            try:
                return await asyncio.gather(
                    *(model_client.generate(request(f"q{i}"), "m", 0) for i in range(5))
                )
            finally:
                await model_client.provider.aclose()

        outcomes = asyncio.run(several())
    assert all(o.response is not None for o in outcomes)
    assert model_client.counters.credential_refreshes == 1


def test_failed_credential_command_is_a_401_without_the_key() -> None:
    with FakeOpenAI(api_key="fresh-key") as server:
        credentials = CredentialCommand("exit 3")
        outcome = asyncio.run(
            generate(client(server, key="sk-stale-secret-value", credentials=credentials), "q")
        )
    assert outcome.error is not None and outcome.error.kind == "http_401"
    assert "exit 3" in outcome.error.detail and "sk-stale" not in outcome.error.detail


def test_cache_answers_a_rerun_without_calls(tmp_path: Path) -> None:
    with FakeOpenAI() as server:
        cache = ResponseCache(tmp_path / "cache")
        first = asyncio.run(generate(client(server, cache=cache), "cached?"))
        second = asyncio.run(generate(client(server, cache=cache), "cached?"))
        changed = asyncio.run(generate(client(server, cache=cache), "cached?", tools=False))
        assert server.total == 2
    assert not first.cache_hit and second.cache_hit and not changed.cache_hit
    assert second.response == first.response
    assert cache.stats().entries == 2
    assert (tmp_path / "cache" / "responses.sqlite3").stat().st_mode & 0o077 == 0


def test_errors_are_not_cached(tmp_path: Path) -> None:
    with FakeOpenAI() as server:
        cache = ResponseCache(tmp_path / "cache")
        server.faults["e"] = ["500"] * 10
        asyncio.run(generate(client(server, CallPolicy(max_retries=0), cache=cache), "e"))
        assert cache.stats().entries == 0
