"""``abt simulate generate``: test conversations written by a teacher model from seed ones."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent_backtest import api
from agent_backtest.cli.errors import ends_with, report
from agent_backtest.cli.options import (
    INPUTS,
    OUTPUT,
    ROLES,
    SELECTION,
    ConfigFile,
    argument,
    option,
)
from agent_backtest.cli.status import PhaseStatus
from agent_backtest.cli.terminal import SafeConsole, one_line

# The teacher's options, shared with abt simulate run --generate.
TEACHER_HELP = (
    "The model (provider/model) that writes the flows [default: [roles.teacher] of abt.toml]."
)
TeacherOption = option(str | None, "--teacher", ROLES, TEACHER_HELP, metavar="MODEL")
Capabilities = argument(
    Path,
    "CAPABILITIES",
    "The capability file (YAML or JSON): families, each with a description, the tools it uses "
    "and seed conversations.",
)
FlowsFile = option(Path, "--out", OUTPUT, "The flows file to write (JSONL).", metavar="FILE")
PerFamily = option(
    int, "--per-family", SELECTION, "Exactly N flows for each family.", metavar="N", min=1
)
ToolCatalogue = option(
    Path,
    "--tools",
    INPUTS,
    "The agent's tool definitions (OpenAI function format): the catalogue the families' tools "
    "and every flow's expect_tools come from.",
    metavar="FILE",
)
TEACHER_FAILED = 1


def teacher_failures_exit_1(command: Callable[..., Any]) -> Callable[..., Any]:
    """A command that generates flows: the teacher's failure is one line on stderr and exit
    code 1 (the model failed, not the user's input, which is exit code 2)."""

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> Any:
        # the error's class comes with the generator, loaded when the command runs
        from agent_backtest.api.results import GenerationError

        ending = (lambda exc: report(str(exc)), TEACHER_FAILED)
        return ends_with({GenerationError: ending})(command)(*args, **kwargs)

    return run


@teacher_failures_exit_1
def generate(
    capabilities: Capabilities,
    out: FlowsFile,
    per_family: PerFamily,
    tools: ToolCatalogue,
    teacher: TeacherOption = None,
    config_file: ConfigFile = None,
) -> None:
    """Have a teacher model write exactly N test conversations per capability family from its
    seed conversations; every flow is checked, and nothing is written unless all are there."""
    writing = PhaseStatus(
        SafeConsole(stderr=True, highlight=False),
        None,  # a mistake found before the teacher is asked is one line, with nothing before it
        lambda: f"generate: the teacher is writing {per_family} flows a family",
    )
    with writing:
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
        one_line(
            f"{len(generated.flows)} flows for {families} families written to {out} ({asks} "
            f"questions: {calls['calls']} calls, {calls['cache_hits']} from the cache)"
        ),
        markup=False,
    )
