"""Planning a simulate run, new or resumed: every check made before anything is written or
sent (flows, target, agent config, user role, isolation, output directory), so a mistake
costs nothing and leaves nothing behind."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_backtest.errors import InputError, UserError
from agent_backtest.providers import ModelConfig, load_model_config
from agent_backtest.providers.config import ModelRole
from agent_backtest.providers.roles import RoleModel, check_role, resolve_role
from agent_backtest.redaction import redact
from agent_backtest.runs.manifest import describe_input
from agent_backtest.simulate.flows import LocatedFlow
from agent_backtest.simulate.generation import GenerationPlan
from agent_backtest.simulate.isolation import Commands, FixtureDb, Isolation, check_fixture_db
from agent_backtest.simulate.judging import read_verdicts, write_verdicts
from agent_backtest.simulate.layout import CONVERSATIONS, FIXTURE_COPY, MANIFEST, VERDICTS
from agent_backtest.simulate.ledger import check_ledger
from agent_backtest.simulate.log import read_conversations, rewrite
from agent_backtest.simulate.manifest import (
    IsolationRecord,
    PlayedCounts,
    SelectionRecord,
    SimulateManifest,
    TargetRecord,
)
from agent_backtest.simulate.models import Flow
from agent_backtest.simulate.mutation import ToolSafety
from agent_backtest.simulate.preflight import check_target
from agent_backtest.simulate.repeats import repeated, written_id
from agent_backtest.simulate.run import SimulatePlan, read_run_flows
from agent_backtest.simulate.selection import (
    FlowSelection,
    generated_source,
    may_change_state,
    select_flows,
    source_flows,
)
from agent_backtest.simulate.state_checks import needs_database
from agent_backtest.simulate.targets import AgentFactory, AgentRole, load_target, prepare_agent
from agent_backtest.simulate.targets.turns import DEFAULT_RESULT_CHARS
from agent_backtest.units import AgentConfig, load_agent_config


@dataclass(frozen=True)
class IsolationOptions:
    """How flows that may change the agent's data are kept from changing it for the next."""

    read_only_only: bool = False
    """Skip (and count) the flows that may change state instead of refusing the run."""
    fixture_db: Path | None = None
    """A SQLite file: copied once, restored before and after every flow that may change it."""
    snapshot_cmd: str | None = None
    """A shell command that snapshots the agent's data once (with restore_cmd)."""
    restore_cmd: str | None = None
    """A shell command that restores that snapshot, before and after every such flow."""

    def check(self) -> str:
        """The isolation kind asked for: none, fixture_db or commands; a contradiction is a
        user error."""
        commands = self.snapshot_cmd is not None or self.restore_cmd is not None
        if self.read_only_only and (self.fixture_db is not None or commands):
            raise UserError(
                "skips the flows that isolation would run: give one or the other",
                "read_only_only",
            )
        if self.fixture_db is not None and commands:
            raise UserError("give --fixture-db or the commands, not both", "fixture_db")
        if commands and not (self.snapshot_cmd and self.restore_cmd):
            missing = "restore_cmd" if self.snapshot_cmd else "snapshot_cmd"
            raise UserError("needed with the other command: a snapshot needs a restore", missing)
        if self.fixture_db is not None:
            check_fixture_db(self.fixture_db)
            return "fixture_db"
        return "commands" if commands else "none"


def plan_simulation(
    flows_file: Path | None,
    target_file: Path,
    out: Path,
    *,
    selection: FlowSelection,
    isolation: IsolationOptions,
    user_role: ModelRole | None,
    config: ModelConfig,
    config_file: Path | None,
    agent: RoleModel | None = None,
    agent_config_file: Path | None,
    concurrency: int,
    result_chars: int = DEFAULT_RESULT_CHARS,
    generation: GenerationPlan | None = None,
    ledger: Path | None = None,
    k: int = 1,
) -> SimulatePlan:
    """The plan of a new run into ``out`` (from ``flows_file``, the earlier run of
    ``selection.from_run``, or with ``generation`` the teacher's flows, ``flows_file`` then
    being the capability file, asked for last), each played ``k`` times; nothing is written."""
    _check_counts(concurrency, result_chars, selection)
    kind = isolation.check()
    agent_config = load_agent_config(agent_config_file) if agent_config_file else AgentConfig()
    target = load_target(target_file)
    agent_role = agent_role_for(target.type, agent, config)
    factory = prepare_agent(target, target_file, AgentRole(agent_role, config))
    check_ledger(ledger)
    sha256 = describe_input(target_file).sha256
    teacher_calls: dict[str, Any] | None = None
    if generation is None:
        source = source_flows(flows_file, selection, target.name, sha256)
    else:  # generating is paid: it comes after the target and its agent are checked
        assert flows_file is not None
        generated, teacher_calls = _generated(generation, out, target.name, factory)
        source = generated_source(flows_file, generated, selection, target.name, sha256)
    chosen = select_flows(
        source.flows,
        selection,
        agent_config.read_only_tools,
        isolation.read_only_only,
        kind != "none",
    )
    selected = repeated([entry.flow for entry in chosen.flows], k)
    may_change = {written_id(e.flow) for e in chosen.flows if e.flow.id in chosen.may_change_state}
    changing = {flow.id for flow in selected if written_id(flow) in may_change}
    _check_state_database(selected, kind)
    check_user_role(selected, user_role, config)
    _check_out(out)
    if generation is None:  # the last check: it is the first that sends anything
        check_target(target.name, factory)
    roles = {"user": user_role, "agent": agent_role}
    if generation is not None:
        roles["teacher"] = generation.role
    manifest = SimulateManifest.new(
        flows=describe_input(source.path.resolve()),
        target=TargetRecord(
            name=target.name, type=target.type, file=describe_input(target_file.resolve())
        ),
        agent_config=_resolved(agent_config_file),
        config_file=_resolved(config_file or (Path(config.source) if config.source else None)),
        roles={name: role for name, role in roles.items() if role is not None},
        ledger=str(ledger.resolve()) if ledger else None,
        selection=SelectionRecord(
            families=list(selection.families),
            per_family=selection.per_family,
            offset=selection.offset,
            limit=selection.limit,
            read_only_only=isolation.read_only_only,
            from_run=_resolved(selection.from_run),
            verdicts=list(selection.from_verdicts),
            owners=list(selection.from_owners),
            exclude_judged=[str(run.resolve()) for run in source.consulted],
            left_out=dict(source.left_out),
        ),
        isolation=_isolation_record(kind, isolation),
        concurrency=concurrency,
        result_chars=result_chars,
        repeats=k,
        played=PlayedCounts(
            flows=len(selected),
            isolated=len(changing),
            skipped_may_change_state=chosen.skipped_may_change_state,
        ),
    )
    if teacher_calls is not None:
        manifest.add_counts("teacher", teacher_calls)
    return _planned(out, manifest, selected, changing, factory, config, isolation, agent_config)


def _check_state_database(flows: list[Flow], isolation: str) -> None:
    """SQL state checks query the fixture database, so a run with them needs one."""
    flow_id = needs_database(flows)
    if flow_id is not None and isolation != "fixture_db":
        raise UserError(
            f"flow {flow_id!r} checks the agent's data with SQL: name its SQLite file with "
            "--fixture-db FILE",
            "fixture_db",
        )


def _generated(
    generation: GenerationPlan, out: Path, target: str, factory: AgentFactory
) -> tuple[list[LocatedFlow], dict[str, Any]]:
    """The teacher's flows and the calls they took, asked for after the checks that cost
    nothing (the target and its agent are checked before this; then the output), and after
    the target answered its pre-flight."""
    _check_out(out)
    check_target(target, factory)
    generated = generation.generate()
    located = [LocatedFlow(flow, number) for number, flow in enumerate(generated.flows, 1)]
    return located, generated.calls


def plan_resume(
    run: Path,
    *,
    concurrency: int | None = None,
    snapshot_cmd: str | None = None,
    restore_cmd: str | None = None,
) -> SimulatePlan:
    """The plan that finishes the run in ``run``; nothing is written (see :func:`begin_resume`)."""
    path = run / MANIFEST
    if not path.exists():
        raise UserError(f"{run} holds no simulate run (no run.json) to resume", "resume")
    try:
        manifest = SimulateManifest.load(path)
    except ValueError:
        raise InputError(path, None, "not the manifest of a simulate run") from None
    if concurrency is not None:
        _check_counts(concurrency, manifest.result_chars, FlowSelection())
        manifest.concurrency = concurrency
    flows = read_run_flows(run)
    target_file = Path(manifest.target.file.path)
    recorded = manifest.target.file.sha256
    if not target_file.is_file() or describe_input(target_file).sha256 != recorded:
        raise InputError(
            target_file,
            None,
            "is not the target file the run started with (missing or edited): put it back, "
            "or start a new run",
        )
    config = load_model_config(Path(manifest.config_file) if manifest.config_file else None)
    target = load_target(target_file)
    factory = prepare_agent(target, target_file, AgentRole(manifest.roles.get("agent"), config))
    agent_config = (
        load_agent_config(Path(manifest.agent_config)) if manifest.agent_config else AgentConfig()
    )
    check_user_role(flows, manifest.roles.get("user"), config)
    check_target(target.name, factory)
    changing = {f.id for f in flows if may_change_state(f, agent_config.read_only_tools)}
    kind = manifest.isolation.kind
    if changing and kind == "none":  # only a hand-edited flows.jsonl gets here
        raise InputError(run / "flows.jsonl", None, "holds flows that may change state, unisolated")
    options = _resumed_isolation(manifest.isolation, snapshot_cmd, restore_cmd)
    return _planned(run, manifest, flows, changing, factory, config, options, agent_config)


def _planned(
    out: Path,
    manifest: SimulateManifest,
    flows: list[Flow],
    changing: set[str],
    agent: AgentFactory,
    config: ModelConfig,
    options: IsolationOptions,
    agent_config: AgentConfig,
) -> SimulatePlan:
    """The plan of the run in ``out``: isolated as its manifest records (a snapshot an earlier
    start took is not taken again), held to the tool safety its agent config declares."""
    record = manifest.isolation
    return SimulatePlan(
        out=out,
        manifest=manifest,
        flows=flows,
        changing=changing,
        agent=agent,
        config=config,
        isolation=_isolation(record.kind, options, out, record.snapshot_taken),
        safety=_safety(agent_config),
    )


def agent_role_for(
    target_type: str, agent: RoleModel | None, config: ModelConfig
) -> ModelRole | None:
    """The ``agent`` role of a model target: the model named, else ``[roles.agent]`` of the
    config; other targets run their own model, so naming one for them is a mistake."""
    if target_type != "model":
        if agent is not None:
            raise UserError(
                f"the {target_type} target runs its own model: --agent is for a model target",
                "agent",
            )
        return None
    configured = config.roles.get("agent")
    if agent is None and (configured is None or configured.model is None):
        return None
    return resolve_role("agent", config, agent)


def check_user_role(flows: list[Flow], role: ModelRole | None, config: ModelConfig) -> None:
    """A simulated user needs the ``user`` role, reachable."""
    simulated = [flow.id for flow in flows if flow.user is not None]
    if simulated and role is None:
        raise UserError(
            f"flow {simulated[0]!r} has a simulated user: name the model that plays it "
            "(provider/model)",
            "user",
        )
    if role is not None:
        check_role(role, [role.ref], config)


def begin_resume(plan: SimulatePlan, retry_errors: bool) -> None:
    """Rewrite the run's files clean (whole records only, one per flow; with ``retry_errors``
    none that ended in a transport error, and none of their verdicts, so that the conversations
    played again are judged again) and mark it running; the caller holds the lock."""
    ids = {flow.id for flow in plan.flows}
    kept = [
        record
        for record in read_conversations(plan.out / CONVERSATIONS)
        if record.flow_id in ids and not (retry_errors and record.transport_error is not None)
    ]
    rewrite(plan.out, kept)
    plan.done = {record.flow_id for record in kept}
    _drop_verdicts(plan.out / VERDICTS, plan.done)
    manifest = plan.manifest
    manifest.played.conversations = len(kept)
    manifest.played.transport_errors = sum(r.transport_error is not None for r in kept)
    manifest.played.unisolated_mutations = sum(bool(r.unisolated_calls) for r in kept)
    manifest.attempts_of_run += 1
    manifest.status = "running"
    manifest.finished_at = None
    manifest.error = None
    manifest.save(plan.out / MANIFEST)


def _drop_verdicts(path: Path, played: set[str]) -> None:
    """Rewrite the verdicts file (atomically) without the verdicts of conversations that are
    no longer recorded: each is judged again once it is played again."""
    if not path.exists():
        return
    verdicts = read_verdicts(path)
    if set(verdicts) - played:
        write_verdicts(path, [v for flow_id, v in verdicts.items() if flow_id in played])


def _check_counts(concurrency: int, result_chars: int, selection: FlowSelection) -> None:
    if concurrency < 1:
        raise UserError(f"must be at least 1, got {concurrency}", "concurrency")
    if result_chars < 0:
        raise UserError(f"must be 0 or more, got {result_chars}", "result_chars")
    if selection.offset < 0:
        raise UserError(f"must be 0 or more, got {selection.offset}", "offset")
    if selection.limit is not None and selection.limit < 1:
        raise UserError(f"must be at least 1, got {selection.limit}", "limit")
    if selection.per_family is not None and selection.per_family < 1:
        raise UserError(f"must be at least 1, got {selection.per_family}", "per_family")


def _check_out(out: Path) -> None:
    """The output must be a new run: an existing one is resumed, never mixed with."""
    if (out / MANIFEST).exists() or (out / CONVERSATIONS).exists():
        raise InputError(
            out, None, f"already holds a run: use --resume {out} to finish it, or another --out"
        )
    if out.exists() and not out.is_dir():
        raise UserError(f"{out} is a file, not a directory: name another --out", "out")


def _safety(config: AgentConfig) -> ToolSafety:
    return ToolSafety.declared(config.read_only_tools, config.mutating_tools)


def _resolved(path: Path | None) -> str | None:
    """A path as run.json records it: absolute, so the run resumes from any directory."""
    return str(path.resolve()) if path is not None else None


def _isolation_record(kind: str, options: IsolationOptions) -> IsolationRecord:
    return IsolationRecord(
        kind=kind,  # type: ignore[arg-type]
        fixture_db=str(options.fixture_db.resolve()) if options.fixture_db else None,
        snapshot_cmd=redact(options.snapshot_cmd) if options.snapshot_cmd else None,
        restore_cmd=redact(options.restore_cmd) if options.restore_cmd else None,
    )


def _isolation(kind: str, options: IsolationOptions, run: Path, taken: bool) -> Isolation | None:
    if kind == "fixture_db":
        assert options.fixture_db is not None
        return FixtureDb(options.fixture_db, run / FIXTURE_COPY)
    if kind == "commands":
        assert options.snapshot_cmd and options.restore_cmd
        return Commands(options.snapshot_cmd, options.restore_cmd, taken)
    return None


def _resumed_isolation(
    recorded: IsolationRecord, snapshot_cmd: str | None, restore_cmd: str | None
) -> IsolationOptions:
    """The isolation of a resumed run. Commands are recorded redacted (they may hold a
    secret), so a run isolated by commands needs them again, and they must be the same."""
    if recorded.kind == "fixture_db":
        assert recorded.fixture_db is not None
        path = Path(recorded.fixture_db)
        check_fixture_db(path)
        return IsolationOptions(fixture_db=path)
    if recorded.kind != "commands":
        return IsolationOptions()
    for given, kept, parameter in (
        (snapshot_cmd, recorded.snapshot_cmd, "snapshot_cmd"),
        (restore_cmd, recorded.restore_cmd, "restore_cmd"),
    ):
        if given is None or redact(given) != kept:
            raise UserError(
                "this run isolates its flows with commands, which are not stored: give the "
                "same --snapshot-cmd and --restore-cmd again",
                parameter,
            )
    return IsolationOptions(snapshot_cmd=snapshot_cmd, restore_cmd=restore_cmd)
