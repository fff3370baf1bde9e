"""How an episode's side asks its model, wherever the call is made."""

from __future__ import annotations

from typing import Protocol

from agent_backtest.errors import bounded
from agent_backtest.providers import CallOutcome
from agent_backtest.redaction import redact
from agent_backtest.trace import LLMRequest


class ModelCaller(Protocol):
    """A role's model as an episode asks it: a ModelClient, or an executor's calls of it."""

    async def generate(self, request: LLMRequest, model: str, seed: int | None) -> CallOutcome:
        """The outcome of ``request`` on ``model`` (an answer, or a classified error)."""
        ...


class CallsLost(Exception):
    """No one is left to make the model calls (every Ray worker lost): the run stops, what
    ended so far saved, to be resumed; never an episode's own error."""


def describe_failure(exc: BaseException) -> str:
    """An exception a provider raised outside its classified errors, as one redacted,
    bounded line (``TypeError: …``)."""
    return bounded(redact(f"{type(exc).__name__}: {exc}"), 300)
