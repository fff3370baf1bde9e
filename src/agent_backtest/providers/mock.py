"""Scripted providers for tests and dry checks: no network, answers decided in advance.

A script is a queue of answers (taken in order), a mapping from payload hash to answer, or a
callable of the payload. An answer may be a ``ProviderError`` to raise. ``mock/golden`` answers
each unit with production's own answer (the units give the mapping).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from agent_backtest.errors import UserError
from agent_backtest.providers.errors import ProviderError
from agent_backtest.trace import LLMRequest, LLMResponse, dump_record, sha256_of
from agent_backtest.trace.openai_wire import chat_payload

if TYPE_CHECKING:
    from agent_backtest.providers.factory import ProviderSpec

Answer = LLMResponse | ProviderError
Script = Iterable[Answer] | Mapping[str, Answer] | Callable[[dict[str, Any]], Answer]


class MockProvider:
    """Answers from a script; payloads are the OpenAI wire form, so hashes match real runs."""

    @classmethod
    def check(cls, spec: ProviderSpec) -> None:
        """By name, only ``mock/golden`` can be asked for: a script is code."""
        if spec.ref.model != "golden":
            raise UserError(
                f"{spec.ref}: the command line knows mock/golden (answers with production's "
                "own answer); other mocks are scripted in code",
                spec.parameter,
            )

    @classmethod
    def open(cls, spec: ProviderSpec) -> MockProvider:
        """``mock/golden``, answering from the run's production answers."""
        return golden_provider(spec.golden())

    def __init__(
        self, name: str, script: Script, delay: float = 0.0, keep_sent: bool = True
    ) -> None:
        self.name = name
        self.keep_sent = keep_sent  # tests read what was sent; a whole run must not keep it
        self.endpoint = f"mock:{name}"
        self.delay = delay
        self.sent: list[dict[str, Any]] = []
        self._queue: deque[Answer] | None = None
        self._mapping: Mapping[str, Answer] | None = None
        self._callable: Callable[[dict[str, Any]], Answer] | None = None
        if callable(script):
            self._callable = script
        elif isinstance(script, Mapping):
            self._mapping = script
        else:
            self._queue = deque(script)

    def payload(
        self, request: LLMRequest, model: str, seed: int | None
    ) -> tuple[dict[str, Any], list[str]]:
        """The same body an OpenAI-compatible server would get."""
        return chat_payload(request, model, seed)

    def set_api_key(self, key: str) -> None:
        """Mocks need no key."""

    async def send(self, payload: dict[str, Any], timeout: float) -> LLMResponse:
        """The scripted answer for this payload."""
        if self.keep_sent:
            self.sent.append(payload)
        if self.delay:
            await asyncio.sleep(self.delay)
        answer = self._answer(payload)
        if isinstance(answer, ProviderError):
            raise answer
        return answer

    def _answer(self, payload: dict[str, Any]) -> Answer:
        if self._callable is not None:
            return self._callable(payload)
        if self._mapping is not None:
            key = payload_key(payload)
            if key not in self._mapping:
                raise ProviderError("http_4xx", "mock has no answer for this request", status=404)
            return self._mapping[key]
        assert self._queue is not None
        if not self._queue:
            raise ProviderError("http_4xx", "mock script is exhausted", status=404)
        return self._queue.popleft()

    async def aclose(self) -> None:
        """Nothing to release."""


def payload_key(payload: dict[str, Any]) -> str:
    """The hash a mapping script is keyed by: the payload without model and seed."""
    return sha256_of({k: v for k, v in payload.items() if k not in ("model", "seed")})


def golden_provider(pairs: Iterable[tuple[LLMRequest, LLMResponse]]) -> MockProvider:
    """``mock/golden``: answers every request with the answer production gave to it."""
    return MockProvider("golden", _Goldens(pairs), keep_sent=False)


class _Goldens(Mapping[str, Answer]):
    """Production's answers by payload hash, each kept as its JSON and read when asked for:
    a few hundred bytes a unit rather than a model object of a few kilobytes, so the mock of
    a large run stays small."""

    def __init__(self, pairs: Iterable[tuple[LLMRequest, LLMResponse]]) -> None:
        self._answers = {
            _digest(payload_key(chat_payload(request, "", None)[0])): dump_record(golden)
            for request, golden in pairs
        }

    def __getitem__(self, key: str) -> Answer:
        return LLMResponse.model_validate_json(self._answers[_digest(key)])

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and _digest(key) in self._answers

    def __iter__(self) -> Iterator[str]:
        return (f"sha256:{digest.hex()}" for digest in self._answers)

    def __len__(self) -> int:
        return len(self._answers)


def _digest(key: str) -> bytes:
    """A payload hash as its 32 bytes."""
    return bytes.fromhex(key.removeprefix("sha256:"))
