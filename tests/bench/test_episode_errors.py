"""A provider failing outside its classified errors is the model's engineering error."""

from __future__ import annotations

import asyncio
from typing import Any

from agent_backtest.bench.episode import Agent, run_episode
from agent_backtest.bench.models import Case, EpisodeRules
from agent_backtest.bench.rollouts import Rollout
from agent_backtest.bench.users import ScriptedUser, UserModel, model_user
from agent_backtest.providers import ModelClient
from agent_backtest.trace import LLMRequest, LLMResponse
from tests.bench.shop import ShopEnvironment


class OverflowingProvider:
    """A provider that refuses every prompt as an in-process model does one past its context."""

    name, endpoint = "local", "model.gguf"

    def payload(self, request: LLMRequest, model: str, seed: int | None) -> tuple[dict, list]:
        return {"messages": [m.model_dump() for m in request.messages]}, []

    async def send(self, payload: dict[str, Any], timeout: float) -> LLMResponse:
        raise ValueError("Requested tokens (8231) exceed context window of 8192")

    def set_api_key(self, key: str) -> None:
        """No key."""

    async def aclose(self) -> None:
        """Nothing held."""


def test_a_provider_raising_ends_the_episode_as_a_model_or_user_error() -> None:
    case = Case(id="c", instruction="You want 2 apples.")
    rollout = Rollout(case, 0, 1, "pg-0123456789abcdef", "c--01234567--r000")
    client = ModelClient(OverflowingProvider())
    agent = Agent(client, "m", "local")
    rules = EpisodeRules()
    scripted = ScriptedUser(["hello"], "###STOP###")

    episode = asyncio.run(run_episode(rollout, ShopEnvironment, agent, scripted, rules, 10))
    assert episode.error is not None and episode.error.kind == "model_error"
    assert "exceed context window" in episode.error.detail and episode.ended_by == "error"
    user = model_user(UserModel(client, "m"), case.instruction or "", "###STOP###", None)
    episode = asyncio.run(run_episode(rollout, ShopEnvironment, agent, user, rules, 10))
    assert episode.error is not None and episode.error.kind == "user_error"
