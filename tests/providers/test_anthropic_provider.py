"""The Anthropic provider against a real HTTP server on 127.0.0.1 speaking the Messages API."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from agent_backtest.providers import CallPolicy, ModelClient, ProviderSettings
from agent_backtest.providers.anthropic import AnthropicProvider
from agent_backtest.trace import LLMRequest, Message, ToolCall, ToolDef
from tests.servers import serve_in_thread, stop_serving

ANSWER = {
    "id": "msg_01",
    "type": "message",
    "role": "assistant",
    "model": "claude-test-1",
    "content": [
        {"type": "text", "text": "Checking both."},
        {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
    ],
    "stop_reason": "tool_use",
    "usage": {"input_tokens": 120, "output_tokens": 30},
}


class MessagesServer:
    """Answers POST /v1/messages with ANSWER and keeps what it received."""

    def __init__(self) -> None:
        self.received: list[tuple[dict[str, str], dict[str, Any]]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                """Quiet."""

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                server.received.append((dict(self.headers), body))
                data = json.dumps(ANSWER).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        serve_in_thread(self.http)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.http.server_address[1]}"


@pytest.fixture
def server() -> Iterator[MessagesServer]:
    messages = MessagesServer()
    yield messages
    stop_serving(messages.http)


def test_messages_api_round_trip(server: MessagesServer) -> None:
    request = LLMRequest(
        model="gpt-4o",
        messages=[
            Message(role="system", content="You are a weather bot."),
            Message(role="user", content="Weather in Paris and Rome?"),
            Message(
                role="assistant",
                content=None,
                tool_calls=[
                    ToolCall(id="c1", name="get_weather", arguments={"city": "Paris"}),
                    ToolCall(id="c2", name="get_weather", arguments={"city": "Rome"}),
                ],
            ),
            Message(role="tool", tool_call_id="c1", content="rain"),
            Message(role="tool", tool_call_id="c2", content="sun"),
        ],
        tools=[
            ToolDef(
                name="get_weather",
                description="Weather of a city",
                parameters={"type": "object", "properties": {"city": {"type": "string"}}},
            )
        ],
        tool_choice="required",
        params={"temperature": 0.1, "seed": 3, "parallel_tool_calls": True},
    )
    provider = AnthropicProvider(
        "anthropic", ProviderSettings(type="anthropic", base_url=server.url), "ak-12345"
    )
    client = ModelClient(provider, CallPolicy(max_retries=0))

    async def go():
        try:
            return await client.generate(request, "claude-test-1", 5)
        finally:
            await provider.aclose()

    outcome = asyncio.run(go())
    headers, body = server.received[0]
    assert headers["x-api-key"] == "ak-12345" and headers["anthropic-version"]
    assert body["system"] == "You are a weather bot."
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Weather in Paris and Rome?"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "c1", "name": "get_weather", "input": {"city": "Paris"}},
                {"type": "tool_use", "id": "c2", "name": "get_weather", "input": {"city": "Rome"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "c1", "content": "rain"},
                {"type": "tool_result", "tool_use_id": "c2", "content": "sun"},
            ],
        },
    ]
    assert body["tools"] == [
        {
            "name": "get_weather",
            "description": "Weather of a city",
            "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
        }
    ]
    assert body["tool_choice"] == {"type": "any"}
    assert body["temperature"] == 0.1 and body["max_tokens"] == 4096
    assert "seed" not in body and "parallel_tool_calls" not in body
    assert outcome.adjustments == [
        "set max_tokens 4096 (required by the API)",
        "removed parameter parallel_tool_calls (no Messages API equivalent)",
        "seed not sent (the Messages API has none)",
    ]
    response = outcome.response
    assert response is not None
    assert response.message.content == "Checking both."
    assert response.message.tool_calls == [
        ToolCall(id="toolu_1", name="get_weather", arguments={"city": "Paris"})
    ]
    assert response.finish_reason == "tool_calls"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (120, 30)
    assert response.model == "claude-test-1" and response.id == "msg_01"
