"""Scripted mock providers: a queue, a mapping by payload hash, a callable."""

from __future__ import annotations

import asyncio

from agent_backtest.providers import (
    CallPolicy,
    MockProvider,
    ModelClient,
    ProviderError,
    payload_key,
)
from agent_backtest.trace import LLMRequest, LLMResponse, Message

REQUEST = LLMRequest(messages=[Message(role="user", content="hi")])


def answer(text: str) -> LLMResponse:
    return LLMResponse(message=Message(role="assistant", content=text))


def ask(provider: MockProvider, times: int = 1) -> list:
    client = ModelClient(provider, CallPolicy(max_retries=1, backoff_initial=0))

    async def go() -> list:
        return [await client.generate(REQUEST, "m", seed) for seed in range(times)]

    return asyncio.run(go())


def test_queue_answers_in_order_then_runs_out() -> None:
    outcomes = ask(MockProvider("q", [answer("one"), answer("two")]), times=3)
    assert [o.response.message.content for o in outcomes[:2]] == ["one", "two"]
    assert outcomes[2].error is not None and "exhausted" in outcomes[2].error.detail


def test_mapping_by_payload_hash_and_callable() -> None:
    provider = MockProvider("map", {})
    payload, _ = provider.payload(REQUEST, "m", 0)
    mapped = MockProvider("map", {payload_key(payload): answer("mapped")})
    assert ask(mapped)[0].response.message.content == "mapped"
    echo = MockProvider("echo", lambda p: answer(p["messages"][-1]["content"].upper()))
    assert ask(echo)[0].response.message.content == "HI"


def test_scripted_errors_are_retried_like_real_ones() -> None:
    provider = MockProvider("flaky", [ProviderError("http_5xx", "boom", 500), answer("ok")])
    outcome = ask(provider)[0]
    assert outcome.response.message.content == "ok" and outcome.attempts == 2
