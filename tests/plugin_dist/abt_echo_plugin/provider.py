"""The ``echo`` provider type: answers every request at once, from the request alone.

When the last user message starts with the name of an offered tool, the answer calls that tool
with the ``key=value`` words that follow as its arguments; otherwise it says the message back.
No network, no key: what it answers is known before it is asked.
"""

from __future__ import annotations

from typing import Any

from agent_backtest.providers import ProviderSpec
from agent_backtest.trace import LLMRequest, LLMResponse, Message, ToolCall, Usage


class EchoProvider:
    """A provider whose answers are computed from the request."""

    def __init__(self, name: str, model: str) -> None:
        self.name = name
        self.endpoint = f"echo:{model}"

    @classmethod
    def open(cls, spec: ProviderSpec) -> EchoProvider:
        """The provider of one model reference, ``echo/MODEL``."""
        return cls(spec.ref.provider, spec.ref.model)

    def payload(
        self, request: LLMRequest, model: str, seed: int | None
    ) -> tuple[dict[str, Any], list[str]]:
        """What is answered: the messages as text and the names of the offered tools."""
        messages = [{"role": m.role, "content": m.text()} for m in request.messages]
        tools = [tool.name for tool in request.tools or []]
        return {"model": model, "messages": messages, "tools": tools, "seed": seed}, []

    async def send(self, payload: dict[str, Any], timeout: float) -> LLMResponse:
        """The answer to the last user message."""
        said = next(m["content"] for m in reversed(payload["messages"]) if m["role"] == "user")
        words = said.split()
        usage = Usage(input_tokens=sum(len(m["content"].split()) for m in payload["messages"]))
        if words and words[0] in payload["tools"]:
            arguments = dict(word.split("=", 1) for word in words[1:] if "=" in word)
            call = ToolCall(id="echo-1", name=words[0], arguments=arguments)
            message = Message(role="assistant", tool_calls=[call])
            return LLMResponse(message=message, finish_reason="tool_calls", usage=usage)
        message = Message(role="assistant", content=said)
        return LLMResponse(message=message, finish_reason="stop", usage=usage)

    def set_api_key(self, key: str) -> None:
        """Echo needs no key."""

    async def aclose(self) -> None:
        """Nothing to release."""
