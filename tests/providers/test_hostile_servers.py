"""Servers that trickle, stall or answer with something that is not an answer, on 127.0.0.1."""

from __future__ import annotations

import json

import pytest

from agent_backtest.providers import CallPolicy, ModelClient, ProviderSettings, http
from agent_backtest.providers.openai import OpenAIProvider
from tests.fake_openai import FakeOpenAI, answer
from tests.providers.test_call_path import ask


def client(server: FakeOpenAI, policy: CallPolicy) -> ModelClient:
    settings = ProviderSettings(type="openai", base_url=server.base_url)
    return ModelClient(OpenAIProvider("openai", settings, "sk-test-key", 4), policy)


def test_a_trickled_answer_is_a_timeout_within_the_attempts_bound() -> None:
    policy = CallPolicy(timeout=1.0, max_retries=3, backoff_initial=0.0)
    with FakeOpenAI() as server:
        server.faults["drip"] = ["trickle"] * 5
        (outcome,) = ask(client(server, policy), "drip")
        body = json.dumps(answer(server.bodies[0])).encode()
        sent = server.trickled["drip"]
    assert outcome.response is None and outcome.error.kind == "timeout"
    assert "no whole answer within 1 s" in outcome.error.detail
    # A timeout is tried twice; each try may see at most (timeout + 1 s) of the server's drip,
    # where a bound on the gap between bytes alone would have taken the whole answer.
    per_attempt = (policy.timeout + 1) / server.trickle_seconds
    assert outcome.attempts == 2 and sent <= 2 * per_attempt < len(body)


def test_a_stalled_answer_is_given_up_after_the_read_gap(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(http, "READ_GAP", 0.3)
    policy = CallPolicy(timeout=30.0, max_retries=0, backoff_initial=0.0)
    with FakeOpenAI(slow_seconds=3.0) as server:
        server.faults["half"] = ["stall"]
        (outcome,) = ask(client(server, policy), "half")
    assert outcome.error is not None and outcome.error.kind == "timeout"
    assert outcome.error.detail == "the answer stalled: no byte for 0.3 s"


@pytest.mark.parametrize(
    ("fault", "detail"),
    [
        ("user_role", "the answer is a user message, not an assistant's"),
        ("empty", "the answer has neither text nor tool calls"),
    ],
)
def test_a_200_that_is_not_an_answer_is_malformed_and_never_scored(fault: str, detail: str) -> None:
    policy = CallPolicy(timeout=5.0, max_retries=2, backoff_initial=0.0)
    with FakeOpenAI() as server:
        server.faults["odd"] = [fault] * 10
        server.faults["once"] = [fault]
        odd, once = ask(client(server, policy), "odd", "once")
        tries = server.requests["odd"]
    assert odd.response is None and odd.error.kind == "malformed_response"
    assert odd.error.detail == detail and odd.attempts == tries == 3
    assert once.error is None and once.response.message.role == "assistant"
    assert once.attempts == 2
