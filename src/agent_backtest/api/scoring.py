"""``score()``: grade a run's answers against production's, never calling the candidate."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from agent_backtest.api.options import AgentOptions, JudgeOptions, PathLike
from agent_backtest.api.roles import JUDGES, Roles, given_roles, judges
from agent_backtest.errors import UserError
from agent_backtest.providers import load_model_config
from agent_backtest.providers.config import ModelRole, RoleName
from agent_backtest.providers.roles import RoleModel
from agent_backtest.runs import RunDirectory
from agent_backtest.runs.lock import run_lock
from agent_backtest.runs.manifest import RunManifest
from agent_backtest.runs.run import Run
from agent_backtest.scoring.run import ScoreOutcome, ScoreSettings, score_run
from agent_backtest.units import AgentConfig
from agent_backtest.units.gold import GoldCheck


def score(
    run: PathLike | Run,
    *,
    roles: Roles | None = None,
    judging: JudgeOptions | None = None,
    agent: AgentOptions | None = None,
    config_file: PathLike | None = None,
    workers: int | None = None,
) -> ScoreOutcome:
    """Score every result of ``run``: scores.jsonl and summary.json (an earlier scoring with
    other settings is kept beside them under its scoring id).

    ``roles`` names the judges (``judge``, ``fallback_judge``). Without a judge, text answers
    get a labelled token-overlap similarity, never a verdict, and ``workers`` processes share
    the answers (default: one per core, on runs of thousands of answers; the files are the same
    whatever the number).
    The agent rules default to the ones the run was made with; the model config to the run's.
    """
    if workers is not None and workers < 1:
        raise UserError(f"needs at least one worker, not {workers}", "workers")
    judge_models = given_roles(roles, JUDGES)
    directory = RunDirectory(run.path if isinstance(run, Run) else Path(run))
    directory.load_manifest()  # a folder that is not a run fails before the lock is made
    with run_lock(directory.path, "score"):
        return score_locked(
            directory,
            judge_models,
            judging or JudgeOptions(),
            agent or AgentOptions(),
            config_file,
            workers=workers,
        )


def score_locked(
    directory: RunDirectory,
    judge_models: Mapping[RoleName, RoleModel],
    judging: JudgeOptions,
    agent: AgentOptions,
    config_file: PathLike | None,
    recorded_judges: Mapping[str, ModelRole] | None = None,
    workers: int | None = None,
) -> ScoreOutcome:
    """:func:`score`, for a caller that already holds the run's lock; ``recorded_judges`` are
    used when ``judge_models`` names no judge."""
    manifest = directory.load_manifest()
    source = config_file or manifest.config.config_file
    config = load_model_config(Path(source) if source else None)
    roles = judges(judge_models, config, *run_cache(manifest)) or dict(recorded_judges or {})
    agent_config = agent.config() if agent.given else manifest.config.agent
    notes = []
    if agent_config.answer_keys:
        notes = check_gold(directory, manifest, Path(agent_config.answer_keys))
    settings = score_settings(judging, agent_config, roles)
    return score_run(directory, settings, config, workers, notes)


def run_cache(manifest: RunManifest) -> tuple[bool, str | None]:
    """Whether a run's calls use the response cache, and which (its candidate's, as run.json
    records it): a judge named after the run was made answers from and into the same cache, so
    scoring again after a stop pays no judge call twice."""
    candidate = manifest.config.roles.get("candidate")
    if candidate is None:
        return True, None
    return candidate.cache_dir is not None, candidate.cache_dir


def check_gold(directory: RunDirectory, manifest: RunManifest, gold: Path) -> list[str]:
    """The gold file fits the run's units, before anything is scored or written; the warning
    that names the units whose key fits no answer (scored ``unsatisfiable_key``), if any.

    Its lines must name units of the run only when the run kept every unit of its inputs: a
    line for a unit the selection left out is no mistake.
    """
    check = GoldCheck(gold)
    count = 0
    for unit in directory.read_units():
        check.check(unit)
        count += 1
    if not manifest.config.selection.dropped:
        check.finish(f"the {count:,} units of run {directory.path}")
    warning = check.warning()
    return [warning] if warning else []


def score_settings(
    judging: JudgeOptions, agent: AgentConfig, roles: Mapping[str, ModelRole]
) -> ScoreSettings:
    """What decides the scores: the judge roles, the judging options and the agent rules."""
    return ScoreSettings(
        judge=roles.get("judge"),
        fallback_judge=roles.get("fallback_judge"),
        judge_repeats=judging.judge_repeats,
        exact_strings=judging.exact_strings,
        agent=agent,
    )
