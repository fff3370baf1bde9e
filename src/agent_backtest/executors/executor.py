"""Where a model call is made: the seam between an engine and the machines that call.

An engine (a replay's jobs, a bench run's episodes, a simulate run's conversations) hands
each (model, request, seed) call to an :class:`Executor` for its outcome and writes the record;
an executor only makes calls. The local one calls from this process through the model's
client; :mod:`agent_backtest.executors.ray_workers` makes the same calls on a Ray cluster. The
run directory and the cache are written by the driver alone, whichever executor calls.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal, Protocol

from agent_backtest.errors import UserError
from agent_backtest.providers import CallOutcome, ModelClient, ModelConfig, ModelRef
from agent_backtest.providers.config import ModelRole
from agent_backtest.trace import LLMRequest, LLMResponse

ExecutorKind = Literal["local", "ray"]


class ModelCall(Protocol):
    """One call to make: the model that answers, the request, its seed (a replay job is one)."""

    @property
    def model(self) -> ModelRef: ...

    @property
    def request(self) -> LLMRequest: ...

    @property
    def seed(self) -> int | None: ...


@dataclass(frozen=True)
class Call:
    """A model call made outside a replay (an agent's or a simulated user's turn)."""

    model: ModelRef
    request: LLMRequest
    seed: int | None


class WorkersLost(Exception):
    """No worker is left to make a call: the run stops with what it has, to be resumed."""


@dataclass
class ExecutorStatus:
    """How the calls stand: in flight now, answered per worker, sent again after a loss."""

    in_flight: int = 0
    answered: Counter[str] = field(default_factory=Counter)
    """Calls each worker answered (by the worker's name)."""
    requeued: int = 0
    """Calls sent again because the worker making them was lost."""
    lost: list[str] = field(default_factory=list)
    """Workers lost during the run."""


class Executor(Protocol):
    """Makes each call and gives back its outcome; never writes the run."""

    status: ExecutorStatus

    async def answer(self, call: ModelCall) -> CallOutcome:
        """The outcome of the call (an answer, or a classified error); raises
        :class:`WorkersLost` when no worker is left to make it."""
        ...

    def close(self) -> None:
        """Release the workers (and anything the executor started)."""
        ...


class LocalExecutor:
    """Calls from this process: each call through its model's client, on the running loop."""

    def __init__(self, clients: Mapping[ModelRef, ModelClient]) -> None:
        self.clients = clients
        self.status = ExecutorStatus()

    async def answer(self, call: ModelCall) -> CallOutcome:
        """The call through its model's client (cache, limits, retries)."""
        self.status.in_flight += 1
        try:
            outcome = await self.clients[call.model].generate(
                call.request, call.model.model, call.seed
            )
        finally:
            self.status.in_flight -= 1
        self.status.answered["local"] += 1
        return outcome

    def close(self) -> None:
        """Nothing to release: the clients belong to the caller."""


def open_executor(
    kind: ExecutorKind,
    address: str | None,
    role: ModelRole,
    clients: Mapping[ModelRef, ModelClient],
    config: ModelConfig,
    credential_command: str | None = None,
    golden: Callable[[], Iterable[tuple[LLMRequest, LLMResponse]]] = tuple,
    worker_cpus: float = 1.0,
) -> Executor:
    """The executor ``kind`` for a role's calls through ``clients``; ``address`` is the Ray
    cluster to join (None: start one on this machine), ``worker_cpus`` what each Ray worker
    holds (a fraction when several roles share the cluster). The caller closes it."""
    check_executor(kind, address)
    if kind == "local":
        return LocalExecutor(clients)
    from agent_backtest.executors.ray_workers import RayExecutor

    return RayExecutor.start(
        address, role, clients, config, credential_command, golden, worker_cpus
    )


def check_executor(kind: ExecutorKind, address: str | None) -> None:
    """The executor can be used: Ray is installed for ``ray``; an address only with it."""
    if kind == "local":
        if address is not None:
            raise UserError("names a Ray cluster: add --executor ray", "ray_address")
        return
    try:
        import ray  # noqa: F401  (only whether it is installed)
    except ImportError:
        raise UserError(
            "needs Ray: pip install 'agent-backtest[ray]' (or run with --executor local)",
            "executor",
        ) from None
