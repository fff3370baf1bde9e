"""``abt replay``: send every selected unit to a candidate model and record the answers."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from agent_backtest.cli.options import (
    FormatOption,
    RecordedModelOption,
    StrictOption,
    ToolsOption,
)
from agent_backtest.cli.patch import cover_run
from agent_backtest.cli.score import (
    ExactStringsOption,
    FallbackJudgeOption,
    JudgeOption,
    JudgeRepeatsOption,
    print_outcome,
)
from agent_backtest.cli.tally import units_from_inputs
from agent_backtest.cli.unit_options import (
    AgentConfigOption,
    ExcludeSessionsOption,
    LimitOption,
    NodeOption,
    PerSessionOption,
    RouterNodesOption,
    SplitOption,
    SplitSaltOption,
    StepsOption,
    ValFractionOption,
    agent_config,
    make_selection,
)
from agent_backtest.errors import InputError, UserError
from agent_backtest.patch.ops import PatchSettings, load_patch
from agent_backtest.providers import default_cache_dir, load_model_config, parse_model_ref
from agent_backtest.providers.refs import TRACE
from agent_backtest.replay.run import (
    ReplaySettings,
    RunHooks,
    RunResult,
    new_manifest,
    resume_run,
    start_run,
    write_run_patch,
)
from agent_backtest.runs import ResultRecord, RunDirectory, describe_input
from agent_backtest.scoring.judge import JudgeError, check_judge
from agent_backtest.scoring.run import ScoreSettings, score_run
from agent_backtest.units import (
    DEFAULT_SPLIT_SALT,
)

INTERRUPTED = 130


def replay(
    inputs: Annotated[
        list[Path] | None,
        typer.Argument(
            metavar="INPUT",
            help="A units JSONL (from abt units) or trace files in any supported format.",
            show_default=False,
        ),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            metavar="MODEL",
            help="Candidate: provider/model (openai/…, anthropic/…, "
            "local/smollm2, mock/golden), or trace for the model that served each step.",
        ),
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", metavar="DIR", help="The run directory to create.")
    ] = None,
    resume: Annotated[
        Path | None,
        typer.Option(
            "--resume", metavar="DIR", help="Finish this run: send only the pairs with no result."
        ),
    ] = None,
    retry_errors: Annotated[
        bool,
        typer.Option(
            "--retry-errors",
            help="With --resume: also send again the pairs that ended in an infrastructure error.",
        ),
    ] = False,
    overwrite: Annotated[
        bool,
        typer.Option(
            "--overwrite", help="Replace a run already in --out (its files are removed first)."
        ),
    ] = False,
    k: Annotated[int, typer.Option("--k", min=1, metavar="N", help="Repeats per unit.")] = 1,
    seed: Annotated[
        int, typer.Option("--seed", metavar="N", help="Seed of repeat 0; repeat r uses seed + r.")
    ] = 0,
    concurrency: Annotated[
        int | None,
        typer.Option(
            "--concurrency", min=1, metavar="N", help="Calls in flight at once [default: 8]."
        ),
    ] = None,
    rpm: Annotated[
        float | None,
        typer.Option("--rpm", min=1, metavar="N", help="At most this many requests per minute."),
    ] = None,
    tpm: Annotated[
        float | None,
        typer.Option(
            "--tpm", min=1, metavar="N", help="At most about this many prompt tokens per minute."
        ),
    ] = None,
    timeout: Annotated[
        float | None,
        typer.Option("--timeout", min=0.001, metavar="SECONDS", help="Per attempt [default: 60]."),
    ] = None,
    max_retries: Annotated[
        int | None,
        typer.Option(
            "--max-retries",
            min=0,
            metavar="N",
            help="Retries of a 429, 5xx, connection error or "
            "malformed answer, with exponential backoff honouring Retry-After; a timeout is "
            "retried once [default: 4].",
        ),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Write units.jsonl and run.json, send nothing.")
    ] = False,
    cache_dir: Annotated[
        Path | None,
        typer.Option(
            "--cache-dir", metavar="DIR", help="Response cache [default: the user cache dir]."
        ),
    ] = None,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Neither read nor fill the response cache.")
    ] = False,
    base_url: Annotated[
        str | None,
        typer.Option(
            "--base-url",
            metavar="URL",
            help="Endpoint of the candidate's provider (any "
            "OpenAI-compatible server for openai/…).",
        ),
    ] = None,
    config_file: Annotated[
        Path | None,
        typer.Option(
            "--config",
            metavar="FILE",
            help="Model config (abt.toml): endpoints, key variables, "
            "aliases [default: ./abt.toml, else the user config dir].",
        ),
    ] = None,
    credential_command: Annotated[
        str | None,
        typer.Option(
            "--credential-command",
            metavar="CMD",
            help="On HTTP 401, run CMD; it prints a fresh "
            "API key, and the call is sent again once.",
        ),
    ] = None,
    format: FormatOption = None,
    tools: ToolsOption = None,
    recorded_model: RecordedModelOption = None,
    strict: StrictOption = False,
    agent_config_file: AgentConfigOption = None,
    router_nodes: RouterNodesOption = None,
    steps: StepsOption = "all",
    node: NodeOption = None,
    from_model: Annotated[
        list[str] | None,
        typer.Option(
            "--from-model",
            metavar="MODEL",
            help="Keep only steps answered by this recorded model (repeatable).",
        ),
    ] = None,
    val_fraction: ValFractionOption = None,
    split_salt: SplitSaltOption = DEFAULT_SPLIT_SALT,
    split: SplitOption = "all",
    exclude_sessions: ExcludeSessionsOption = None,
    limit: LimitOption = None,
    per_session: PerSessionOption = None,
    no_score: Annotated[
        bool,
        typer.Option("--no-score", help="Only record the answers; score later with abt score."),
    ] = False,
    judge: JudgeOption = None,
    fallback_judge: FallbackJudgeOption = None,
    judge_repeats: JudgeRepeatsOption = 1,
    exact_strings: ExactStringsOption = False,
    patch_file: Annotated[
        Path | None,
        typer.Option(
            "--patch",
            metavar="FILE",
            help="Edit ops (abt.patch/1, JSON or YAML) applied to each "
            "unit's request before it is sent; patch_coverage.json is written first, and the run "
            "stops there if an op matches nothing.",
        ),
    ] = None,
    allow_unmatched: Annotated[
        bool,
        typer.Option(
            "--allow-unmatched", help="With --patch: replay even when an op matches nothing."
        ),
    ] = False,
) -> None:
    """Replay units on a candidate model; every answer is recorded the moment it arrives, then
    the run is scored against production (as abt score does)."""
    console = Console(stderr=True, highlight=False)
    if resume is not None:
        if inputs or out or model or patch_file:
            raise typer.BadParameter(
                "--resume takes the run's own inputs, model and settings; "
                "pass only the run directory (and call settings)"
            )
        overrides = {
            name: value
            for name, value in (
                ("concurrency", concurrency),
                ("timeout", timeout),
                ("max_retries", max_retries),
                ("rpm", rpm),
                ("tpm", tpm),
            )
            if value is not None
        }
        directory = RunDirectory(resume)
        scoring = (
            None
            if no_score
            else ScoreSettings(
                judge=judge,
                fallback_judge=fallback_judge,
                judge_repeats=judge_repeats,
                exact_strings=exact_strings,
                agent=agent_config(agent_config_file, router_nodes),
            )
        )
        _run_and_score(
            console,
            directory,
            scoring,
            lambda hooks: resume_run(directory, retry_errors, overrides, credential_command, hooks),
        )
        return
    if not inputs or not model or not out:
        raise typer.BadParameter("give INPUT…, --model and --out (or --resume DIR)")
    if model != TRACE:
        parse_model_ref(model)
    selection = make_selection(
        steps,
        node,
        from_model,
        val_fraction,
        split_salt,
        split,
        exclude_sessions,
        limit,
        per_session,
    )
    units = selection.apply(
        units_from_inputs(
            inputs,
            format,
            tools,
            recorded_model,
            strict,
            agent_config(agent_config_file, router_nodes),
        )
    )
    first = next(units, None)
    if first is None:
        raise InputError(
            inputs[0],
            None,
            "no units to replay (see abt ingest for what the inputs hold, and the selection flags)",
        )
    settings = ReplaySettings(
        model=model,
        k=k,
        seed=seed,
        base_url=base_url,
        config_file=str(config_file) if config_file else None,
        cache_dir=None if no_cache else str(cache_dir or default_cache_dir()),
        concurrency=concurrency or 8,
        rpm=rpm,
        tpm=tpm,
        timeout=timeout or 60.0,
        max_retries=4 if max_retries is None else max_retries,
        selection={
            "steps": steps,
            "nodes": sorted(node or []),
            "from_models": sorted(from_model or []),
            "val_fraction": val_fraction,
            "split_salt": split_salt,
            "split": split,
            "limit": limit,
            "per_session": per_session,
            "excluded_sessions": str(exclude_sessions) if exclude_sessions else None,
        },
    )
    patch = None
    if patch_file is not None:  # a broken patch fails before the run directory is made
        patch = load_patch(patch_file)
        settings.patch = PatchSettings(
            file=patch_file.name,
            ops=patch.op_ids(),
            sha256=describe_input(patch_file).sha256,
            allow_unmatched=allow_unmatched,
        )
    load_model_config(config_file)  # a broken config fails before the run directory is made
    if judge and model != TRACE:  # a judge that is the candidate fails before anything is sent
        try:
            check_judge(judge, [model])
        except JudgeError as exc:
            raise UserError(str(exc), "judge") from None
    directory = RunDirectory(out)
    directory.create(overwrite)
    manifest = new_manifest(settings, [describe_input(path) for path in inputs])
    manifest.units, manifest.sessions = directory.write_units(itertools.chain([first], units))
    manifest.config["selection"]["dropped"] = dict(sorted(selection.dropped.items()))
    # Coverage comes before run.json exists, so a patch that stops leaves no run behind.
    if patch is not None and patch_file is not None:
        cover_run(console, directory, patch, patch_file, allow_unmatched)
        write_run_patch(directory, patch)
    if dry_run:
        manifest.status = "completed"
        manifest.config["dry_run"] = True
        manifest.save(directory.manifest_path)
        console.print(
            f"dry run: {manifest.units} units × k={k} written to "
            f"{directory.units_path}; nothing sent",
            markup=False,
        )
        return
    scoring = (
        None
        if no_score
        else ScoreSettings(
            judge=judge,
            fallback_judge=fallback_judge,
            judge_repeats=judge_repeats,
            exact_strings=exact_strings,
            agent=agent_config(agent_config_file, router_nodes),
        )
    )
    _run_and_score(
        console,
        directory,
        scoring,
        lambda hooks: start_run(directory, settings, manifest, credential_command, hooks),
    )


def _run_and_score(
    console: Console,
    directory: RunDirectory,
    scoring: ScoreSettings | None,
    run: Callable[[RunHooks], RunResult],
) -> None:
    """Run with a progress bar, report how it ended, then score it unless told not to."""
    progress, hooks = _progress(console)
    try:
        result = run(hooks)
    finally:
        progress.stop()
    _finish(console, directory, result)
    if scoring is not None:
        print_outcome(Console(highlight=False), directory.path, score_run(directory, scoring))


def _progress(console: Console) -> tuple[Progress, RunHooks]:
    """A progress bar (rate, time left, errors by kind) and the hooks that drive it."""
    progress = Progress(
        TextColumn("replay"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rate]}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        TextColumn("{task.fields[errors]}"),
        console=console,
        transient=False,
    )
    errors: Counter[str] = Counter()
    state: dict[str, int] = {}

    def on_start(todo: int, done: int) -> None:
        if done:
            console.print(
                f"{done} (unit, repeat) pairs already have results; sending {todo}", markup=False
            )
        state["task"] = progress.add_task("replay", total=todo, rate="", errors="")
        progress.start()

    def on_result(record: ResultRecord) -> None:
        if record.error is not None:
            errors[record.error.kind] += 1
        task = progress.tasks[state["task"]]
        # completed ÷ elapsed: rich's own speed re-sums its samples on every update
        speed = f"{(task.completed + 1) / task.elapsed:.1f}/s" if task.elapsed else ""
        text = " ".join(f"{kind} {count}" for kind, count in sorted(errors.items()))
        progress.update(
            state["task"], advance=1, rate=speed, errors=f"errors: {text}" if text else ""
        )

    return progress, RunHooks(on_start, on_result)


def _finish(console: Console, directory: RunDirectory, result: RunResult) -> None:
    counts = result.manifest.counts
    errors = ", ".join(f"{k} {v}" for k, v in counts.get("errors", {}).items()) or "none"
    console.print(
        f"{result.outcome.finished} of {result.todo} sent pairs recorded in "
        f"{directory.results_path} · calls {counts.get('calls', 0)} · cache hits "
        f"{counts.get('cache_hits', 0)} · infrastructure errors: {errors}"
        + (
            f" · credential refreshes {counts['credential_refreshes']}"
            if counts.get("credential_refreshes")
            else ""
        ),
        markup=False,
    )
    if result.outcome.interrupted:
        console.print(
            f"interrupted: finish with abt replay --resume {directory.path}", markup=False
        )
        raise typer.Exit(INTERRUPTED)
