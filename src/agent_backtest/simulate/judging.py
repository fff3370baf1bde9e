"""The judging stage of a simulate run: a verdict for every conversation of a run directory.

Reads ``flows.jsonl`` and ``conversations.jsonl`` (never the target: judging a saved run costs
no replay), writes ``verdicts.jsonl`` and ``judging.json`` (the judges, the rubric and its
sha256, the owners, the tools file and the checks). Each verdict is appended and flushed the
moment it is decided, so a kill loses at most the conversations being judged; the file is
rewritten (atomically, one record per flow, in the flows' order) when the stage starts and
when it ends. It is a ``runs.record_log`` log: a reader takes the first whole record of each
flow, so a conversation judged again has its old verdict taken out of the file (the rewrite at
the start) before its new one is appended.

Which conversations are judged: all of them on a first judging; with ``resume`` those that have
no verdict yet; with ``rejudge="uncertain"`` those too and those left ``uncertain``, asked again
without the response cache (a cached answer would give the same invalid verdict);
``rejudge="all"`` every one. Flows not played yet are counted, not judged.

A flow's state checks decide before the judge is asked (:mod:`.check_verdicts`); with
``checks_only`` (``--judge none``) no judge is asked at all and the checks decide alone.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import orjson
from pydantic import Field, ValidationError

from agent_backtest.episodes.judge_chain import JudgeSeat
from agent_backtest.errors import InputError, UserError, bounded
from agent_backtest.executors import ExecutorKind, role_calls
from agent_backtest.formats.tools_file import load_tools_file
from agent_backtest.input_files import read_bytes
from agent_backtest.providers import CallCounters, ModelConfig, load_model_config
from agent_backtest.providers.config import ModelRole
from agent_backtest.providers.roles import (
    RoleModel,
    check_role,
    close_clients,
    open_clients,
    resolve_role,
)
from agent_backtest.record_model import TaggedRecord, schema_tag
from agent_backtest.redaction import redact
from agent_backtest.runs.files import private_atomic_writer
from agent_backtest.runs.lock import run_lock
from agent_backtest.runs.record_log import RecordLog
from agent_backtest.simulate.check_verdicts import (
    check_state_owners,
    checks_only_verdict,
    state_verdict,
)
from agent_backtest.simulate.checks import (
    NamedCheck,
    all_checks,
    first_failure,
    transport_failure,
)
from agent_backtest.simulate.findings import Findings, write_findings
from agent_backtest.simulate.judge import ConversationJudge, Decision, judged_owner
from agent_backtest.simulate.layout import CONVERSATIONS, FLOWS, JUDGING, MANIFEST, VERDICTS
from agent_backtest.simulate.log import read_conversations
from agent_backtest.simulate.manifest import SimulateManifest
from agent_backtest.simulate.models import ConversationRecord, Flow, Verdict
from agent_backtest.simulate.mutation import UNISOLATED, unisolated_mutation
from agent_backtest.simulate.report import SimulateReport, write_report
from agent_backtest.simulate.rubric import DEFAULT_TAXONOMY, Owners, load_owners, load_rubric
from agent_backtest.trace import ToolDef, sha256_of

JUDGING_SCHEMA = "abt.judging/1"
Rejudge = Literal["uncertain", "all"]


class JudgingSettings(TaggedRecord):
    """``judging.json``: what decided the verdicts of a run."""

    schema_: Literal["abt.judging/1"] = schema_tag(JUDGING_SCHEMA)
    judge: ModelRole | None = Field(description="None: the checks alone decide (--judge none).")
    fallback_judge: ModelRole | None = None
    rubric: str = Field(description="The rubric, as conversation@version.")
    rubric_sha256: str
    owners: dict[str, str] = Field(description="The owner taxonomy: name → what it owns.")
    owners_file: str | None = None
    tools_file: str | None = None
    tools_sha256: str | None = None
    checks: list[str] = Field(default_factory=list, description="The user's checks, in order.")
    config_file: str | None = None
    status: Literal["started", "complete"] = "started"


@dataclass
class JudgingPlan:
    """Everything a judging needs, checked before any file is written or any call is made."""

    run: Path
    settings: JudgingSettings
    owners: Owners
    tools: list[ToolDef] | None
    checks: list[NamedCheck]
    config: ModelConfig
    flows: list[Flow]
    conversations: dict[str, ConversationRecord]
    kept: dict[str, Verdict]
    """The verdicts that stand: the earlier ones of flows not judged again."""
    to_judge: list[Flow]
    executor: ExecutorKind = "local"
    """Where the judges' calls are made (here, or on Ray workers)."""
    ray_address: str | None = None


@dataclass
class JudgingOutcome:
    """What a judging did: the verdicts of the run, and its counts."""

    verdicts: list[Verdict]
    judged: int
    not_played: list[str]
    calls: dict[str, Any]
    path: Path
    counts: Counter[str] = field(default_factory=Counter)
    reasons: Counter[str] = field(default_factory=Counter)
    report: SimulateReport | None = None
    findings: Findings | None = None
    """The ledger and coverage manifest written from the verdicts."""


@dataclass
class JudgingHooks:
    """What a caller sees while conversations are judged: how many will be, and each verdict
    the moment it is decided."""

    on_judging: Callable[[int], None] = lambda todo: None
    on_verdict: Callable[[Verdict], None] = lambda verdict: None


@dataclass(frozen=True)
class JudgingOptions:
    """What a judging is asked to do; what is not given comes from the run's earlier judging
    (``judging.json``), else the defaults and ``[roles.judge]`` of the config."""

    judge: RoleModel | None = None
    fallback_judge: RoleModel | None = None
    owners: Path | None = None
    tools: Path | None = None
    checks: Sequence[str] = ()
    resume: bool = False
    rejudge: Rejudge | None = None
    config_file: Path | None = None
    cache: bool = True
    checks_only: bool = False
    """Decide by the checks alone, asking no judge (``--judge none``)."""


def judge_run(
    run: Path, options: JudgingOptions, hooks: JudgingHooks | None = None
) -> JudgingOutcome:
    """Plan and judge under the run's lock (one writer per run)."""
    read_run(run)  # a folder that is not a simulate run fails before the lock is made
    with run_lock(run, "judge"):
        return judge_locked(plan_judging(run, options), hooks)


def check_judging(options: JudgingOptions, run: Path | None = None) -> JudgingSettings:
    """Check the judges, the owners, the tools and the checks of a judging still to come (the
    run's earlier judging, if ``run`` has one, filling what is not given), before a simulate
    run plays its first flow; what ``judging.json`` will record."""
    recorded = read_settings(run) if run is not None else None
    options = _with_recorded(options, recorded)
    settings, taxonomy, tools = _settings(options, load_model_config(options.config_file), recorded)
    all_checks(tools, options.checks, taxonomy)
    return settings


def record_judging(run: Path, settings: JudgingSettings) -> None:
    """Write ``judging.json`` before the first conversation, so that a run killed while playing
    is judged on resume as it was asked to be."""
    _write_settings(run, settings)


def plan_judging(run: Path, options: JudgingOptions) -> JudgingPlan:
    """Check the run, the judges, the owners, the tools and the checks; choose what to judge."""
    flows, conversations = read_run(run)
    recorded = read_settings(run)
    options = _with_recorded(options, recorded)
    config = load_model_config(options.config_file)
    settings, taxonomy, tools = _settings(options, config, recorded)
    check_state_owners(flows, taxonomy)
    earlier = read_verdicts(run / VERDICTS)
    if earlier and not options.resume and options.rejudge is None:
        raise UserError(
            f"{run} already has verdicts for {len(earlier)} of {len(flows)} flows: --resume "
            "judges the rest, --rejudge uncertain asks again where no verdict was reached, "
            "--rejudge all judges every flow again",
            "resume",
        )
    again = [
        flow
        for flow in flows
        if flow.id in conversations and _judge_again(earlier, flow.id, options.rejudge)
    ]
    chosen = {flow.id for flow in again}
    return JudgingPlan(
        run,
        settings,
        taxonomy,
        tools,
        all_checks(tools, options.checks, taxonomy),
        config,
        flows,
        conversations,
        {flow_id: v for flow_id, v in earlier.items() if flow_id not in chosen},
        again,
    )


def _with_recorded(options: JudgingOptions, recorded: JudgingSettings | None) -> JudgingOptions:
    """The options, with the earlier judging's files and checks where none are given."""
    if recorded is None:
        return options
    return replace(
        options,
        checks_only=options.checks_only or (recorded.judge is None and options.judge is None),
        config_file=options.config_file or _path(recorded.config_file),
        owners=options.owners or _path(recorded.owners_file),
        tools=options.tools or _path(recorded.tools_file),
        checks=options.checks or recorded.checks,
    )


def _settings(
    options: JudgingOptions, config: ModelConfig, recorded: JudgingSettings | None
) -> tuple[JudgingSettings, Owners, list[ToolDef] | None]:
    """What judging.json records, the owner taxonomy and the tool definitions, each checked."""
    cache = options.cache and options.rejudge is None
    if options.checks_only:
        if options.judge is not None or options.fallback_judge is not None:
            raise UserError("decides by the checks alone: name no judge with it", "checks_only")
        roles: list[ModelRole] = []
    else:
        roles = _roles(config, options.judge, options.fallback_judge, recorded, cache)
    taxonomy = load_owners(options.owners) if options.owners else DEFAULT_TAXONOMY
    tools = load_tools_file(options.tools) if options.tools else None
    rubric = load_rubric()
    settings = JudgingSettings(
        judge=roles[0] if roles else None,
        fallback_judge=roles[1] if len(roles) > 1 else None,
        rubric=rubric.id,
        rubric_sha256=rubric.sha256,
        owners=taxonomy.descriptions,
        owners_file=_text(options.owners),
        tools_file=_text(options.tools),
        tools_sha256=sha256_of([t.model_dump() for t in tools]) if tools else None,
        checks=list(options.checks),
        config_file=_text(options.config_file or _path(config.source)),
    )
    return settings, taxonomy, tools


def judge_locked(plan: JudgingPlan, hooks: JudgingHooks | None = None) -> JudgingOutcome:
    """:func:`judge_run`, for a caller that already holds the run's lock."""
    hooks = hooks or JudgingHooks()
    _write_settings(plan.run, plan.settings)
    path = plan.run / VERDICTS
    write_verdicts(path, _in_flow_order(plan.flows, plan.kept))
    counters = CallCounters()
    hooks.on_judging(len(plan.to_judge))
    decided = asyncio.run(_judge_all(plan, counters, hooks))
    verdicts = _in_flow_order(plan.flows, {**plan.kept, **decided})
    write_verdicts(path, verdicts)
    _count_judge_calls(plan.run, counters)
    _write_settings(plan.run, plan.settings.model_copy(update={"status": "complete"}))
    outcome = JudgingOutcome(
        verdicts,
        len(decided),
        [flow.id for flow in plan.flows if flow.id not in plan.conversations],
        counters.as_dict(),
        path,
    )
    outcome.counts.update(v.verdict for v in verdicts)
    outcome.reasons.update(v.reason for v in verdicts if v.reason)
    outcome.report = write_report(plan.run, plan.flows, plan.conversations, verdicts)
    outcome.findings = write_findings(plan.run, plan.flows, verdicts)
    return outcome


async def _judge_all(
    plan: JudgingPlan, counters: CallCounters, hooks: JudgingHooks
) -> dict[str, Verdict]:
    """Every chosen conversation judged, at most the judge's concurrency at once, each verdict
    appended the moment it is decided."""
    roles = [*filter(None, [plan.settings.judge, plan.settings.fallback_judge])]
    clients = [open_clients(role, [role.ref], plan.config, counters) for role in roles]
    calls = role_calls(plan.executor, plan.ray_address, plan.config, len(roles))
    try:
        with ExitStack() as opened:  # each judge's executor closed after its last call
            judges = [
                JudgeSeat(
                    role.name,  # type: ignore[arg-type]
                    opened.enter_context(calls(role, found))[role.ref],
                    role.model,
                    role.ref.model,
                )
                for role, found in zip(roles, clients, strict=True)
            ]
            return await _judge_with(plan, judges, hooks)
    finally:
        for found in clients:
            await close_clients(found)


async def _judge_with(
    plan: JudgingPlan, judges: list[JudgeSeat], hooks: JudgingHooks
) -> dict[str, Verdict]:
    """Every chosen conversation judged by ``judges`` in turn (the judge, then the fallback)."""
    judge = ConversationJudge(judges, plan.owners, plan.tools, load_rubric()) if judges else None
    role = plan.settings.judge
    gate = asyncio.Semaphore(role.concurrency if role is not None else 1)
    decided: dict[str, Verdict] = {}
    writer = verdicts_log(plan.run / VERDICTS).open(sync=False)

    async def one(flow: Flow) -> None:
        async with gate:
            verdict = await decide(flow, plan.conversations[flow.id], plan, judge)
        if verdict is not None:  # None: a checks-only run found nothing to decide it
            writer.append(verdict)
            decided[flow.id] = verdict
            hooks.on_verdict(verdict)

    try:
        await asyncio.gather(*(one(flow) for flow in plan.to_judge))
    finally:
        writer.close()
    return decided


async def decide(
    flow: Flow,
    conversation: ConversationRecord,
    plan: JudgingPlan,
    judge: ConversationJudge | None,
) -> Verdict | None:
    """One conversation's verdict, its evidence redacted (a judge may quote a key that a tool
    result held); None when no judge is asked and no check decides."""
    verdict = await _decide(flow, conversation, plan, judge)
    if verdict is None or verdict.evidence is None:
        return verdict
    return verdict.model_copy(update={"evidence": redact(verdict.evidence)})


async def _decide(
    flow: Flow,
    conversation: ConversationRecord,
    plan: JudgingPlan,
    judge: ConversationJudge | None,
) -> Verdict | None:
    """The checks first (the state checks before any), then the judge (never asked about a
    conversation that could not be completed, that may have changed the agent's data
    unisolated, or that its data already decides)."""
    common = {"flow_id": flow.id, "rubric_version": plan.settings.rubric}
    transport = transport_failure(conversation)
    if transport is not None:
        return Verdict(
            **common,
            verdict="uncertain",
            decided_by="check",
            check="transport",
            reason="transport_error",
            evidence=bounded(transport),
            reproduction=reproduction(conversation, []),
        )
    mutation = unisolated_mutation(conversation)
    if mutation is not None:  # whatever it did, the data later flows saw may have changed
        return Verdict(
            **common,
            verdict="uncertain",
            decided_by="check",
            check=UNISOLATED,
            reason=UNISOLATED,
            evidence=bounded(mutation),
            reproduction=reproduction(conversation, []),
        )
    by_state = state_verdict(conversation, common)
    if by_state is not None:
        return by_state
    failed = first_failure(plan.checks, flow, conversation, plan.owners)
    if judge is None:
        said = reproduction(conversation, failed[1].failed_turns if failed else [])
        return checks_only_verdict(conversation, common, failed, said)
    decision = await judge.decide(flow, conversation)
    if failed is not None:
        name, failure = failed
        return Verdict(
            **common,
            verdict="fail",
            owner=failure.owner,
            judge_reported_owner=judged_owner(decision),
            failure_category=failure.failure_category,
            failed_turns=sorted(set(failure.failed_turns)),
            evidence=failure.evidence,
            reproduction=reproduction(conversation, failure.failed_turns),
            decided_by="check",
            check=name,
            judge_model=decision.model,
        )
    return _judged(common, decision, conversation)


def _judged(
    common: dict[str, str], decision: Decision, conversation: ConversationRecord
) -> Verdict:
    """The judge's verdict, or ``uncertain`` with the reason none was reached."""
    answer = decision.answer
    if answer is None:
        return Verdict(
            **common,
            verdict="uncertain",
            decided_by="none",
            reason=decision.reason,
            evidence=decision.detail,
            reproduction=reproduction(conversation, []),
        )
    return Verdict(
        **common,
        verdict=answer.verdict,
        score=answer.score,
        owner=answer.owner,
        failure_category=answer.failure_category,
        failed_turns=sorted(set(answer.failed_turns)),
        evidence=answer.evidence,
        reproduction=reproduction(conversation, answer.failed_turns),
        decided_by=decision.decided_by or "none",
        reason="judge_uncertain" if answer.verdict == "uncertain" else None,
        judge_model=decision.model,
    )


def reproduction(conversation: ConversationRecord, failed_turns: Iterable[int]) -> list[str]:
    """The user messages that reproduce the conversation: up to its last failed turn, or all.

    Taken from the recording rather than asked of the judge, which could only copy them."""
    last = max(failed_turns, default=len(conversation.turns))
    return [turn.user for turn in conversation.turns if turn.index <= last]


def verdicts_log(path: Path) -> RecordLog[Verdict]:
    """A verdicts file as a record log: one verdict per flow, the first one wins."""
    return RecordLog(path, Verdict, lambda verdict: verdict.flow_id)


def write_verdicts(path: Path, verdicts: Iterable[Verdict]) -> None:
    """Replace verdicts.jsonl with these verdicts, atomically."""
    verdicts_log(path).rewrite(verdicts)


def read_verdicts(path: Path) -> dict[str, Verdict]:
    """The verdict of each flow in verdicts.jsonl: its first whole record."""
    return {verdict.flow_id: verdict for verdict in verdicts_log(path).read()}


def read_run(run: Path) -> tuple[list[Flow], dict[str, ConversationRecord]]:
    """The run's flows, and the conversation of each flow played (its first record)."""
    if not (run / FLOWS).is_file():
        raise InputError(run, None, f"no {FLOWS}: not a simulate run (abt simulate run)")
    flows = list(RecordLog(run / FLOWS, Flow, lambda flow: flow.id).records())
    ids = Counter(flow.id for flow in flows)
    twice = sorted(flow_id for flow_id, n in ids.items() if n > 1)
    if twice:
        raise InputError(run / FLOWS, None, f"flow id {twice[0]!r} is listed twice")
    path = run / CONVERSATIONS
    conversations = {c.flow_id: c for c in read_conversations(path)}
    unknown = sorted(set(conversations) - set(ids))
    if unknown:
        raise InputError(path, None, f"a conversation of flow {unknown[0]!r}, not in {FLOWS}")
    return flows, conversations


def read_settings(run: Path) -> JudgingSettings | None:
    """``judging.json`` of an earlier judging, or None."""
    path = run / JUDGING
    if not path.exists():
        return None
    try:
        return JudgingSettings.model_validate_json(read_bytes(path, "judging record"))
    except ValidationError as exc:
        raise InputError(path, None, f"not a judging record: {exc.errors()[0]['msg']}") from None


def _judge_again(earlier: dict[str, Verdict], flow_id: str, rejudge: Rejudge | None) -> bool:
    """True when the flow's conversation is to be judged (again)."""
    verdict = earlier.get(flow_id)
    if verdict is None or rejudge == "all":
        return True
    return rejudge == "uncertain" and verdict.verdict == "uncertain"


def _roles(
    config: ModelConfig,
    judge: RoleModel | None,
    fallback_judge: RoleModel | None,
    recorded: JudgingSettings | None,
    cache: bool,
) -> list[ModelRole]:
    """The judge role and the fallback judge's, each checked (provider, key, model file)."""
    caching = {"cache": None if cache else False}
    if judge is None and recorded is not None and recorded.judge is not None:
        judge = recorded.judge.model
        if fallback_judge is None and recorded.fallback_judge is not None:
            fallback_judge = recorded.fallback_judge.model
    roles = [resolve_role("judge", config, judge, **caching)]
    if fallback_judge is not None:
        roles.append(resolve_role("fallback_judge", config, fallback_judge, **caching))
    for role in roles:
        check_role(role, [role.ref], config)
    return roles


def _in_flow_order(flows: list[Flow], verdicts: dict[str, Verdict]) -> list[Verdict]:
    """The verdicts in the order of the run's flows."""
    return [verdicts[flow.id] for flow in flows if flow.id in verdicts]


def _count_judge_calls(run: Path, counters: CallCounters) -> None:
    """Add this judging's calls (judge and fallback judge) to the run's counts in run.json."""
    path = run / MANIFEST
    if not path.is_file():  # judged outside a run made by abt simulate run
        return
    manifest = SimulateManifest.load(path)
    manifest.add_counts("judge", counters.as_dict())
    manifest.save(path)


def _write_settings(run: Path, settings: JudgingSettings) -> None:
    """``judging.json``, atomically."""
    with private_atomic_writer(run / JUDGING) as handle:
        handle.write(
            orjson.dumps(
                settings.model_dump(mode="json", by_alias=True),
                option=orjson.OPT_INDENT_2,
            )
        )


def _path(value: str | None) -> Path | None:
    return Path(value) if value is not None else None


def _text(value: Path | None) -> str | None:
    """A path as judging.json records it: absolute, so a later judging finds it from any
    directory."""
    return str(value.resolve()) if value is not None else None
