"""The Ray executor: each model call made by a worker actor on a Ray cluster.

The driver plans the run and stays its single writer: it answers what it can from the response
cache, sends the rest to the least busy of its worker actors (one per CPU of the cluster, each
with its own clients built from the run's provider config) and stores what comes back in the
cache; the engine writes the records. A worker calls through the same :class:`ModelClient` path
as a local run (retries, timeouts, error classes), waiting on one rate-limiter actor, so
``rpm``/``tpm`` hold across the cluster. A worker lost mid-call costs only its calls in flight:
each is sent again to another worker, and written once, when it is answered.

Workers read the provider's key from their own environment (the variable the config names), so
no key is shipped through the cluster: a cluster the run starts inherits this process's
environment; on another cluster, set the variable where ``ray start`` runs.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import ray
from ray.exceptions import GetTimeoutError, ObjectLostError, RayActorError, WorkerCrashedError
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from agent_backtest.errors import UserError
from agent_backtest.executors.executor import ExecutorStatus, ModelCall, WorkersLost
from agent_backtest.providers import (
    CallCounters,
    CallOutcome,
    CredentialCommand,
    ModelClient,
    ModelConfig,
    ModelRef,
    Provider,
    ProviderError,
    RateLimits,
    build_provider,
    cache_key,
)
from agent_backtest.providers.client import Limiter, prompt_tokens_estimate
from agent_backtest.providers.config import ModelRole
from agent_backtest.providers.roles import call_policy
from agent_backtest.trace import LLMRequest, LLMResponse

# What losing a worker looks like from the driver: the actor, its process or its result gone.
LOST = (RayActorError, WorkerCrashedError, ObjectLostError)
READY_SECONDS = 120.0  # how long the workers may take to start (a cold node pulls its env)

Golden = Callable[[], Iterable[tuple[LLMRequest, LLMResponse]]]


class RayExecutor:
    """Model calls made by worker actors on a Ray cluster; the cache read and filled here."""

    def __init__(
        self,
        clients: Mapping[ModelRef, ModelClient],
        workers: list[_Handle],
        extra_actors: list[Any],
        owns_connection: bool,
    ) -> None:
        self.clients = clients
        self.workers = workers
        self.status = ExecutorStatus()
        self._extra_actors = extra_actors
        self._owns_connection = owns_connection

    @classmethod
    def start(
        cls,
        address: str | None,
        role: ModelRole,
        clients: Mapping[ModelRef, ModelClient],
        config: ModelConfig,
        credential_command: str | None = None,
        golden: Golden = tuple,
        worker_cpus: float = 1.0,
    ) -> RayExecutor:
        """Join the cluster at ``address`` (or start a local one), and start one worker per CPU
        of the cluster, each holding ``worker_cpus`` and able to call every model of
        ``clients``."""
        owns = _connect(address)
        started: list[Any] = []
        try:
            count = int(ray.cluster_resources().get("CPU", 0))
            if count < 1:
                raise UserError("the Ray cluster has no CPU to run a worker on", "ray_address")
            limiter = _limiter(role)
            started += [limiter] if limiter is not None else []
            spec = _WorkerSpec(
                role=role,
                refs=sorted(clients),
                config=config,
                connections=math.ceil(role.concurrency / count),
                credential_command=credential_command,
                golden=golden,
                limiter=limiter,
                cpus=worker_cpus,
            )
            actors = [_start_worker(spec) for _ in range(count)]
            started += actors
            workers = _ready(actors)
        except BaseException:
            for actor in started:
                ray.kill(actor)
            if owns:
                ray.shutdown()
            raise
        return cls(clients, workers, [limiter] if limiter is not None else [], owns)

    async def answer(self, call: ModelCall) -> CallOutcome:
        """The call's answer from the cache, else from the least busy worker, sent again to
        another when the worker is lost; raises :class:`WorkersLost` when none is left."""
        client = self.clients[call.model]
        cached = _from_cache(client, call)
        if cached is not None:
            return cached
        while True:
            worker = self._least_busy()
            worker.in_flight += 1
            self.status.in_flight += 1
            try:
                sent, counts = await worker.actor.answer.remote(call.model, call.request, call.seed)
            except LOST:
                self._lose(worker)
                self.status.requeued += 1
                continue
            finally:
                worker.in_flight -= 1
                self.status.in_flight -= 1
            self.status.answered[worker.name] += 1
            client.counters.add(counts)
            outcome = sent.outcome()
            _store(client, outcome)
            return outcome

    def close(self) -> None:
        """End the workers, and the cluster connection (a cluster this run started stops)."""
        for actor in [worker.actor for worker in self.workers] + self._extra_actors:
            ray.kill(actor)
        self.workers = []
        if self._owns_connection:
            ray.shutdown()

    def _least_busy(self) -> _Handle:
        live = [worker for worker in self.workers if not worker.lost]
        if not live:
            raise WorkersLost(f"all {len(self.workers)} Ray workers were lost")
        return min(live, key=lambda worker: worker.in_flight)

    def _lose(self, worker: _Handle) -> None:
        if not worker.lost:
            worker.lost = True
            self.status.lost.append(worker.name)


@dataclass
class _Handle:
    """The driver's view of one worker actor."""

    actor: Any
    name: str
    in_flight: int = 0
    lost: bool = False


@dataclass
class _WorkerSpec:
    """What a worker needs to build its clients."""

    role: ModelRole
    refs: list[ModelRef]
    config: ModelConfig
    connections: int
    credential_command: str | None
    golden: Golden
    limiter: Any | None = None
    cpus: float = 1.0


@dataclass
class _SentOutcome:
    """A call outcome as it crosses between processes (a ProviderError does not pickle)."""

    response: LLMResponse | None
    error: tuple[str, str, int | None] | None
    attempts: int
    latency_ms: float | None
    request_sha: str
    adjustments: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, outcome: CallOutcome) -> _SentOutcome:
        """The outcome made sendable."""
        error = outcome.error
        return cls(
            outcome.response,
            (error.kind, error.detail, error.status) if error is not None else None,
            outcome.attempts,
            outcome.latency_ms,
            outcome.request_sha,
            outcome.adjustments,
        )

    def outcome(self) -> CallOutcome:
        """The outcome again, on the driver."""
        error = ProviderError(*self.error) if self.error is not None else None  # type: ignore[arg-type]
        return CallOutcome(
            self.response,
            error,
            self.attempts,
            self.latency_ms,
            False,
            self.request_sha,
            self.adjustments,
        )


class ReplayWorker:
    """A worker actor: clients for the run's models, no cache, the cluster's rate limiter."""

    def __init__(self, spec: _WorkerSpec) -> None:
        self.name = f"{ray.util.get_node_ip_address()}:{os.getpid()}"
        self.policy = call_policy(spec.role)
        self.limits: Limiter = (
            _ClusterLimits(spec.limiter) if spec.limiter is not None else RateLimits()
        )
        command = spec.credential_command
        self.credentials = CredentialCommand(command) if command else None
        self.providers: dict[ModelRef, Provider] = {}
        self.error: str | None = None
        role = spec.role
        try:
            for ref in spec.refs:
                self.providers[ref] = build_provider(
                    ref, spec.config, role.base_url, spec.connections, spec.golden,
                    role.api_key_env, role.parameter,
                )  # fmt: skip
        except UserError as exc:
            self.error = exc.message

    def ready(self) -> tuple[str, str | None]:
        """(this worker's name, why it cannot call, or None)."""
        return self.name, self.error

    async def answer(
        self, ref: ModelRef, request: LLMRequest, seed: int | None
    ) -> tuple[_SentOutcome, CallCounters]:
        """One call through the shared call path, and the counts of that call alone."""
        counters = CallCounters()
        client = ModelClient(
            self.providers[ref], self.policy, None, self.limits, self.credentials, counters
        )
        outcome = await client.generate(request, ref.model, seed)
        return _SentOutcome.of(outcome), counters


class ClusterRateLimiter:
    """The one rate-limiter actor every worker waits on: the role's ``rpm``/``tpm``."""

    def __init__(self, rpm: float | None, tpm: float | None) -> None:
        self.limits = RateLimits(rpm, tpm)

    async def acquire(self, tokens: int) -> None:
        """Return once a request of about ``tokens`` prompt tokens fits under the limits."""
        await self.limits.acquire_tokens(tokens)


class _ClusterLimits:
    """A worker's limiter: asks the cluster's rate-limiter actor before each attempt."""

    def __init__(self, actor: Any) -> None:
        self.actor = actor

    async def acquire(self, payload: dict[str, Any]) -> None:
        """Wait for the cluster's limiter to let one request of this size through."""
        await self.actor.acquire.remote(prompt_tokens_estimate(payload))


_RemoteWorker = ray.remote(ReplayWorker)
_RemoteLimiter = ray.remote(ClusterRateLimiter)


def _connect(address: str | None) -> bool:
    """Connect to the cluster at ``address``, or start a local one; True when this call made
    the connection (and so ends it)."""
    if ray.is_initialized():
        return False
    # abt does not opt its users in to Ray's usage reporting.
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    quiet: dict[str, Any] = {"logging_level": "ERROR", "log_to_driver": False}
    try:
        if address is None:
            ray.init("local", num_cpus=os.cpu_count() or 1, include_dashboard=False, **quiet)
        else:
            ray.init(address=address, **quiet)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        where = f"at {address}" if address else "on this machine"
        raise UserError(
            f"cannot reach a Ray cluster {where} ({str(exc).splitlines()[0]}): start one with "
            "ray start --head, or name its address (auto, or ray://HOST:10001)",
            "ray_address",
        ) from None
    return True


def _limiter(role: ModelRole) -> Any | None:
    """The cluster's rate-limiter actor, on the driver's node, when the role sets a limit."""
    if not role.rpm and not role.tpm:
        return None
    here = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=True)
    return _RemoteLimiter.options(num_cpus=0, scheduling_strategy=here).remote(role.rpm, role.tpm)


def _start_worker(spec: _WorkerSpec) -> Any:
    # Its CPUs each, spread over the nodes; a lost worker is not restarted (its calls move).
    return _RemoteWorker.options(
        num_cpus=spec.cpus, scheduling_strategy="SPREAD", max_restarts=0
    ).remote(spec)


def _ready(actors: list[Any]) -> list[_Handle]:
    """The workers once each has started and can call; a user error when one cannot."""
    try:
        answers = ray.get([actor.ready.remote() for actor in actors], timeout=READY_SECONDS)
    except GetTimeoutError:
        raise UserError(
            f"the Ray workers did not start within {READY_SECONDS:.0f} s: see ray status",
            "executor",
        ) from None
    for name, error in answers:
        if error is not None:
            raise UserError(f"the Ray worker {name} cannot call: {error}", "executor")
    return [_Handle(actor, name) for actor, (name, _) in zip(actors, answers, strict=True)]


def _from_cache(client: ModelClient, call: ModelCall) -> CallOutcome | None:
    """The call's answer from the driver's cache, counted as a hit; None when not there."""
    if client.cache is None:
        return None
    _, adjustments, request_sha = client.prepare(call.request, call.model.model, call.seed)
    key = cache_key(client.provider.name, client.provider.endpoint, request_sha)
    cached = client.cache.get(key)
    if cached is None:
        return None
    client.counters.count_cache_hit()
    return CallOutcome(cached, None, 0, None, True, request_sha, adjustments)


def _store(client: ModelClient, outcome: CallOutcome) -> None:
    """A worker's answer into the driver's cache (errors are never stored)."""
    if client.cache is None or outcome.response is None:
        return
    key = cache_key(client.provider.name, client.provider.endpoint, outcome.request_sha)
    if not client.cache.put(key, outcome.response):
        client.counters.count_cache_write_error()
