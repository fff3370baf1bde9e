"""``abt simulate generate``: test conversations written by a teacher model from seed ones."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from agent_backtest.api import simulate as api
from agent_backtest.api.results import GenerationError
from agent_backtest.cli.errors import report
from agent_backtest.cli.terminal import SafeConsole

# The teacher's options, shared with abt simulate run --generate.
TeacherOption = Annotated[
    str | None,
    typer.Option(
        "--teacher",
        metavar="MODEL",
        help="The model (provider/model) that writes the flows [default: [roles.teacher] of "
        "abt.toml].",
    ),
]
TEACHER_FAILED = 1


def teacher_failures_exit_1(command: Callable[..., Any]) -> Callable[..., Any]:
    """A command that generates flows: the teacher's failure is one line on stderr and exit
    code 1 (the model failed, not the user's input, which is exit code 2)."""

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except GenerationError as exc:
            report(str(exc))
            raise typer.Exit(TEACHER_FAILED) from None

    return run


@teacher_failures_exit_1
def generate(
    capabilities: Annotated[
        Path,
        typer.Argument(
            metavar="CAPABILITIES",
            show_default=False,
            help="The capability file (YAML or JSON): families, each with a description, the "
            "tools it uses and seed conversations.",
        ),
    ],
    out: Annotated[
        Path, typer.Option("--out", metavar="FILE", help="The flows file to write (JSONL).")
    ],
    per_family: Annotated[
        int,
        typer.Option("--per-family", metavar="N", min=1, help="Exactly N flows for each family."),
    ],
    tools: Annotated[
        Path,
        typer.Option(
            "--tools",
            metavar="FILE",
            help="The agent's tool definitions (OpenAI function format): the catalogue the "
            "families' tools and every flow's expect_tools come from.",
        ),
    ],
    teacher: TeacherOption = None,
    config_file: Annotated[
        Path | None,
        typer.Option(
            "--config",
            metavar="FILE",
            help="Model config (abt.toml) for the teacher role [default: ./abt.toml, else the "
            "user config dir].",
        ),
    ] = None,
) -> None:
    """Have a teacher model write exactly N test conversations per capability family from its
    seed conversations; every flow is checked, and nothing is written unless all are there."""
    generated = api.simulate_generate(
        capabilities,
        tools=tools,
        out=out,
        per_family=per_family,
        roles={"teacher": teacher} if teacher else None,
        config_file=config_file,
    )
    calls = generated.calls
    families = len(generated.asks)
    asks = sum(generated.asks.values())
    SafeConsole(highlight=False, soft_wrap=True).print(
        f"{len(generated.flows)} flows for {families} families written to {out} ({asks} "
        f"questions: {calls['calls']} calls, {calls['cache_hits']} from the cache)",
        markup=False,
    )
