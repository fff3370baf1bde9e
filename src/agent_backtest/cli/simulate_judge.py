"""``abt simulate judge``: verdicts with owner and evidence for a saved simulate run."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from agent_backtest import api
from agent_backtest.cli.roles import JudgeFlags
from agent_backtest.cli.simulate_figures import summary_lines
from agent_backtest.cli.terminal import SafeConsole
from agent_backtest.errors import UserError

if TYPE_CHECKING:
    from agent_backtest.simulate.findings import Findings
    from agent_backtest.simulate.judging import JudgingOutcome


class RejudgeChoice(StrEnum):
    """Which verdicts ``--rejudge`` asks for again."""

    uncertain = "uncertain"
    all = "all"


# The judge's options, shared with abt simulate run (which judges after playing).
JudgeOption = Annotated[
    str | None,
    typer.Option(
        "--judge",
        metavar="MODEL",
        help="The judge (provider/model), or none to decide by the checks alone [default: the "
        "run's earlier judging, else [roles.judge] of the config].",
    ),
]
FallbackJudgeOption = Annotated[
    str | None,
    typer.Option(
        "--fallback-judge",
        metavar="MODEL",
        help="Asked when the judge gives no valid verdict after one correction.",
    ),
]
OwnersOption = Annotated[
    Path | None,
    typer.Option(
        "--owners",
        metavar="FILE",
        help="Owner taxonomy replacing the default: one owner a line, as name: what it owns.",
    ),
]
ToolsOption = Annotated[
    Path | None,
    typer.Option(
        "--tools",
        metavar="FILE",
        help="The agent's tool definitions (OpenAI function format): the judge's catalogue "
        "and the schema every call is checked against.",
    ),
]
ChecksOption = Annotated[
    list[str] | None,
    typer.Option(
        "--check",
        metavar="MODULE:FUNCTION",
        help="A check of your own, run after the built-in ones (repeatable).",
    ),
]


def judge(
    run: Annotated[
        Path,
        typer.Argument(
            metavar="RUN", show_default=False, help="A run directory from abt simulate run."
        ),
    ],
    judge_model: JudgeOption = None,
    fallback_judge: FallbackJudgeOption = None,
    owners: OwnersOption = None,
    tools: ToolsOption = None,
    checks: ChecksOption = None,
    resume: Annotated[
        bool, typer.Option("--resume", help="Judge only the conversations without a verdict.")
    ] = False,
    rejudge: Annotated[
        RejudgeChoice | None,
        typer.Option(
            "--rejudge",
            metavar="uncertain|all",
            help="Ask again where no verdict was reached (uncertain), or for every "
            "conversation (all); never from the response cache.",
        ),
    ] = None,
    config_file: Annotated[
        Path | None,
        typer.Option("--config", metavar="FILE", help="Model config (abt.toml)."),
    ] = None,
    cache: Annotated[
        bool,
        typer.Option(
            "--cache/--no-cache", help="Read and fill the response cache (--no-cache: neither)."
        ),
    ] = True,
) -> None:
    """Judge a saved simulate run's conversations: checks, then the judge; never replays."""
    judges, checks_only = judge_flags(judge_model, fallback_judge)
    outcome = api.simulate_judge(
        run,
        roles=judges,
        checks_only=checks_only,
        owners=owners,
        tools=tools,
        checks=checks or (),
        resume=resume,
        rejudge=rejudge.value if rejudge is not None else None,
        config_file=config_file,
        cache=cache,
    )
    print_outcome(SafeConsole(highlight=False), outcome)


def judge_flags(judge_model: str | None, fallback_judge: str | None) -> tuple[dict[str, str], bool]:
    """The judge roles the flags name, and whether ``--judge none`` asks for the checks alone."""
    if judge_model is not None and judge_model.lower() == "none":
        if fallback_judge is not None:
            raise UserError(
                "--judge none asks no judge: leave --fallback-judge out", "fallback_judge"
            )
        return {}, True
    return JudgeFlags(judge_model, fallback_judge).roles(), False


def print_outcome(console: SafeConsole, outcome: JudgingOutcome) -> None:
    """The counts, one line per conversation that did not pass, and where they were written."""
    counts = outcome.counts
    line = (
        f"{len(outcome.verdicts)} verdicts: {counts['pass']} pass · {counts['fail']} fail · "
        f"{counts['uncertain']} uncertain"
    )
    if outcome.reasons:
        line += " (" + ", ".join(f"{k} {v}" for k, v in sorted(outcome.reasons.items())) + ")"
    console.print(f"{line}; {outcome.judged} judged now", markup=False)
    calls = outcome.calls
    console.print(
        f"judge calls {calls['calls']} · from the cache {calls['cache_hits']} · "
        f"retries {calls['retries']}",
        markup=False,
    )
    if outcome.not_played:
        console.print(f"not played yet (not judged): {len(outcome.not_played)}", markup=False)
    for verdict in outcome.verdicts:
        if verdict.verdict == "pass":
            continue
        turns = ",".join(map(str, verdict.failed_turns))
        what = [verdict.owner or verdict.reason, verdict.failure_category]
        what.append(f"turns {turns}" if turns else None)
        console.print(
            f"{verdict.verdict} {verdict.flow_id} [{' '.join(filter(None, what))}] "
            f"{verdict.evidence or ''}",
            markup=False,
        )
    report = outcome.report
    if report is None:
        console.print(f"wrote {outcome.path}", markup=False)
    else:
        for line in summary_lines(report.summary):
            console.print(line, markup=False, soft_wrap=True)
        console.print(
            f"wrote {outcome.path}, {report.summary_path} and {report.page_path}", markup=False
        )
    if outcome.findings is not None:
        print_findings(console, outcome.findings)


def print_findings(console: SafeConsole, findings: Findings) -> None:
    """Where the ledger and the coverage manifest were written, and the team ledger appended."""
    line = f"wrote {findings.ledger} and {findings.coverage}"
    if findings.appended_to is not None:
        line += f"; appended the run's findings to {findings.appended_to}"
    console.print(line, markup=False)
