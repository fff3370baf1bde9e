"""Each role's model calls made by an executor, asked for as a model client is asked.

A job opens its roles' clients in this process (with the run's cache and counters), then asks
:func:`role_calls` for the way each model is called while a role's work runs: through a local
executor here, or by workers on a Ray cluster. Simulate's agent and user, and bench's agent and
user, are asked the same way; the driver stays the single writer of the run and the cache.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass

from agent_backtest.episodes.calls import CallsLost, ModelCaller
from agent_backtest.executors.executor import (
    Call,
    Executor,
    ExecutorKind,
    WorkersLost,
    open_executor,
)
from agent_backtest.providers import CallOutcome, ModelClient, ModelConfig, ModelRef
from agent_backtest.providers.config import ModelRole
from agent_backtest.trace import LLMRequest

RoleCalls = Callable[
    [ModelRole, Mapping[ModelRef, ModelClient]],
    AbstractContextManager[Mapping[ModelRef, ModelCaller]],
]
"""Where a role's model calls are made: given the role and its clients, the way each of its
models is asked while the context is open."""


def role_calls(
    kind: ExecutorKind, address: str | None, config: ModelConfig, sharing: int = 1
) -> RoleCalls:
    """Each role's calls made by its own executor of ``kind``; on Ray, ``sharing`` roles share
    the cluster's CPUs, each worker holding its part of one."""

    @contextmanager
    def calls(
        role: ModelRole, clients: Mapping[ModelRef, ModelClient]
    ) -> Iterator[Mapping[ModelRef, ModelCaller]]:
        executor = open_executor(
            kind, address, role, clients, config, worker_cpus=1 / max(sharing, 1)
        )
        try:
            yield {ref: ExecutorCaller(executor, ref) for ref in clients}
        finally:
            executor.close()

    return calls


@dataclass(frozen=True)
class ExecutorCaller:
    """One model's calls made by an executor, asked for as its client is."""

    executor: Executor
    ref: ModelRef

    async def generate(self, request: LLMRequest, model: str, seed: int | None) -> CallOutcome:
        """The executor's outcome of ``request`` on this model (``model`` is its name)."""
        try:
            return await self.executor.answer(Call(self.ref, request, seed))
        except WorkersLost as exc:
            raise CallsLost(str(exc)) from None
