"""A simulate run: its plan (every check before anything is written or sent), its directory,
and the conversations played into it, resumably.

Flows that may change the agent's data and are isolated run one at a time between a restore
before and a restore after; the others run side by side, up to ``concurrency``, before them
(so no restore happens under a conversation). The caller holds the run's lock around
everything here that writes (``runs.lock.run_lock``).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from agent_backtest.episodes.calls import ModelCaller
from agent_backtest.errors import InputError, Terminated, UserError
from agent_backtest.executors import ExecutorKind, role_calls
from agent_backtest.providers import CallCounters, ModelClient, ModelConfig, ModelRef
from agent_backtest.providers.config import ModelRole
from agent_backtest.providers.roles import close_clients, open_clients
from agent_backtest.redaction import redact
from agent_backtest.runs.files import private_atomic_writer
from agent_backtest.runs.manifest_base import RunStatus
from agent_backtest.runs.provenance import collect_provenance
from agent_backtest.runs.settle import final_status, settle
from agent_backtest.runs.signals import StopRequest, stop_on_signals
from agent_backtest.simulate.conversation import Played, UserRole, play
from agent_backtest.simulate.flows import read_flows
from agent_backtest.simulate.isolation import Isolation, IsolationError
from agent_backtest.simulate.judging import JudgingHooks
from agent_backtest.simulate.layout import CONVERSATIONS, FIXTURE_COPY, FLOWS, MANIFEST, SESSIONS
from agent_backtest.simulate.log import ConversationLog
from agent_backtest.simulate.manifest import SimulateManifest
from agent_backtest.simulate.models import ConversationRecord, Flow
from agent_backtest.simulate.mutation import ToolSafety, watch_fixture
from agent_backtest.simulate.state_checks import check_state
from agent_backtest.simulate.targets import Agent, AgentFactory
from agent_backtest.trace import dump_record

RUN_FILES = (MANIFEST, FLOWS, CONVERSATIONS, SESSIONS, FIXTURE_COPY)
PLAYING_ROLES = ("agent", "user")
"""The roles whose calls a conversation makes (the judge and the teacher work apart)."""


@dataclass
class SimulateHooks(JudgingHooks):
    """What a caller sees while the run goes: the start, each conversation as it is recorded,
    then the judging (as :class:`JudgingHooks`)."""

    on_start: Callable[[int, int], None] = lambda todo, done: None
    on_conversation: Callable[[ConversationRecord], None] = lambda record: None


@dataclass
class SimulatePlan:
    """Everything a run needs, checked; nothing written yet."""

    out: Path
    manifest: SimulateManifest
    flows: list[Flow]
    changing: set[str]
    agent: AgentFactory
    config: ModelConfig
    isolation: Isolation | None = None
    done: set[str] = field(default_factory=set)
    executor: ExecutorKind = "local"
    ray_address: str | None = None
    """The Ray cluster the executor joins (None: one started on this machine)."""
    safety: ToolSafety = field(default_factory=ToolSafety)
    """The agent config's read-only and mutating tools, which each conversation is held to."""


def write_start(plan: SimulatePlan) -> None:
    """Lay a new run into its (created, locked) directory: the flows as selected, run.json."""
    with private_atomic_writer(plan.out / FLOWS) as handle:
        handle.writelines(dump_record(flow) + b"\n" for flow in plan.flows)
    plan.manifest.save(plan.out / MANIFEST)


def fixture_database(manifest: SimulateManifest) -> Path | None:
    """The SQLite file the run isolates (``--fixture-db``), which state checks query."""
    found = manifest.isolation.fixture_db
    return Path(found) if manifest.isolation.kind == "fixture_db" and found else None


def read_run_flows(run: Path) -> list[Flow]:
    """The flows a run selected (flows.jsonl)."""
    path = run / FLOWS
    if not path.exists():
        raise InputError(path, None, "missing: the run's selected flows are kept here")
    return [located.flow for located in read_flows(path)]


def play_run(plan: SimulatePlan, hooks: SimulateHooks | None = None) -> SimulateManifest:
    """Play every flow of the plan without a recorded conversation; run.json settled."""
    hooks = hooks or SimulateHooks()
    manifest = plan.manifest
    todo = [flow for flow in plan.flows if flow.id not in plan.done]
    hooks.on_start(len(todo), len(plan.done))
    log = ConversationLog(plan.out, len(plan.done))
    counters = {name: CallCounters() for name in PLAYING_ROLES}
    loads = ("ray",) if plan.executor == "ray" else ()
    manifest.provenance.append(collect_provenance(manifest.roles, plan.config, loads=loads))
    try:
        stop = asyncio.run(_play_all(plan, todo, log, counters, hooks))
    except IsolationError as exc:
        manifest.error = str(exc)
        _settle(plan, counters, "failed")
        raise UserError(f"the run stopped: {exc}") from None
    except BaseException as exc:
        stopped = isinstance(exc, KeyboardInterrupt | Terminated | asyncio.CancelledError)
        _settle(plan, counters, "interrupted" if stopped else "failed")
        raise
    finally:
        log.close()
    _settle(plan, counters, "interrupted" if stop else None)
    stop.end_if_asked()
    return manifest


async def _play_all(
    plan: SimulatePlan,
    todo: list[Flow],
    log: ConversationLog,
    counters: dict[str, CallCounters],
    hooks: SimulateHooks,
) -> StopRequest:
    """Play ``todo`` until done or asked to stop (see ``runs.signals``); how it was asked."""
    agent = plan.agent()
    roles = {name: role for name, role in plan.manifest.roles.items() if name in PLAYING_ROLES}
    clients = {
        name: open_clients(role, [role.ref], plan.config, counters[name])
        for name, role in roles.items()
    }
    with stop_on_signals() as stop:
        try:
            with _role_callers(plan, roles, clients) as callers:
                user_role = roles.get("user")
                user = (
                    UserRole(callers["user"], user_role.ref.model, user_role.sampling)
                    if user_role
                    else None
                )
                await agent.start(callers)
                parallel = [flow for flow in todo if flow.id not in plan.changing]
                isolated = [flow for flow in todo if flow.id in plan.changing]
                if plan.isolation is not None:
                    await asyncio.to_thread(plan.isolation.snapshot)
                    plan.manifest.isolation.snapshot_taken = True
                    plan.manifest.save(plan.out / MANIFEST)
                stage = _Stage(plan, agent, user, log, hooks, stop)
                await _side_by_side(stage, parallel)
                if isolated and not stop:
                    await _one_at_a_time(stage, isolated)
        finally:
            await agent.aclose()
            for opened in clients.values():
                await close_clients(opened)
    return stop


@contextmanager
def _role_callers(
    plan: SimulatePlan,
    roles: dict[str, ModelRole],
    clients: dict[str, dict[ModelRef, ModelClient]],
) -> Iterator[dict[str, ModelCaller]]:
    """Each playing role's model as its executor calls it, while the context is open."""
    calls = role_calls(plan.executor, plan.ray_address, plan.config, len(roles))
    with ExitStack() as opened:
        yield {
            name: opened.enter_context(calls(role, clients[name]))[role.ref]
            for name, role in roles.items()
        }


@dataclass(frozen=True)
class _Stage:
    """What every conversation of one start of the run is played with."""

    plan: SimulatePlan
    agent: Agent
    user: UserRole | None
    log: ConversationLog
    hooks: SimulateHooks
    stop: StopRequest

    async def play(self, flow: Flow, isolated: bool) -> ConversationRecord:
        """Play ``flow`` and record its conversation, with the tools it called unisolated
        that are not declared read-only."""
        manifest = self.plan.manifest
        played = await play(
            flow, self.agent, manifest.target.name, isolated, self.user, manifest.result_chars
        )
        if flow.state and played.record.transport_error is None:  # before any restore
            played.record.state = await asyncio.to_thread(
                check_state, flow.state, fixture_database(manifest)
            )
        if not isolated:
            played.record.unisolated_calls = self.plan.safety.not_read_only(played.record)
        _record(self.plan, played, self.log, self.hooks)
        return played.record


async def _side_by_side(stage: _Stage, flows: list[Flow]) -> None:
    gate = asyncio.Semaphore(stage.plan.manifest.concurrency)

    async def one(flow: Flow) -> None:
        async with gate:
            if stage.stop:  # asked to stop: no new conversation
                return
            await stage.play(flow, isolated=False)

    async with asyncio.TaskGroup() as group:
        for flow in flows:
            group.create_task(one(flow))


async def _one_at_a_time(stage: _Stage, flows: list[Flow]) -> None:
    """Each flow between a restore before and a restore after (whatever happens), and one
    more restore at the end; no new flow once asked to stop."""
    isolation = stage.plan.isolation
    assert isolation is not None  # the plan refuses changing flows without isolation
    watch = watch_fixture(isolation)
    try:
        for flow in flows:
            if stage.stop:
                break
            isolation.restore()
            try:
                record = await stage.play(flow, isolated=True)
                if watch is not None:  # before the restore undoes what the flow did
                    watch.after(flow.id, stage.plan.safety.mutating_calls(record))
            finally:
                isolation.restore()
    finally:
        isolation.restore()
    warning = watch.warning() if watch is not None else None
    if warning is not None and warning not in stage.plan.manifest.warnings:
        stage.plan.manifest.warnings.append(warning)  # run.json has it when the run settles


def _record(plan: SimulatePlan, played: Played, log: ConversationLog, hooks: SimulateHooks) -> None:
    log.append(played.record)
    counts = plan.manifest.played
    counts.conversations += 1
    if played.record.transport_error is not None:
        counts.transport_errors += 1
        kind = _error_kind(played.record.transport_error)
        plan.manifest.error_examples.setdefault(kind, redact(played.record.transport_error)[:300])
    if played.record.unisolated_calls:
        counts.unisolated_mutations += 1
    if played.teardown_error is not None:
        counts.teardown_errors += 1
        plan.manifest.error_examples.setdefault("teardown", played.teardown_error[:300])
    hooks.on_conversation(played.record)


_KIND = re.compile(r"^(?:turn \d+: |session: )?(?:user role: )?([a-z_0-9]+)")


def _error_kind(message: str) -> str:
    """The kind a transport error names (timeout, connection, http_5xx, …)."""
    found = _KIND.match(message)
    return found.group(1) if found else "other"


def _settle(plan: SimulatePlan, counters: dict[str, CallCounters], ended: RunStatus | None) -> None:
    """The run's honest status, with this start's calls of the agent and user roles (the
    built-in agent loop's, and the simulated user's); run.json saved."""
    manifest = plan.manifest
    for name, counted in counters.items():
        if name in manifest.roles:
            manifest.add_counts(name, counted.as_dict())
    played = manifest.played
    status = final_status(played.conversations, played.transport_errors)
    if ended is None and status == "completed" and played.unisolated_mutations:
        ended = "completed_with_errors"  # whole conversations, on data that may have drifted
    settle(manifest, plan.out / MANIFEST, ended, played.conversations, played.transport_errors)
