"""The ``abt`` command: one module per subcommand, errors for people at this one place.

A command's module (and the library behind it) is imported only when that command runs or
prints its own help: ``abt --help`` lists the commands from the table below and imports none of
them, so the command line starts in a fraction of the time the whole library takes to load.
This is click's lazily loading group under the typer app; as typer's group reads its mapping of
commands directly (for the "did you mean" of a mistyped name too), that mapping is the lazy part.
"""

from __future__ import annotations

import gc
import importlib
import sys
import textwrap
import warnings
from collections.abc import Iterator, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Annotated, Any

import typer
from typer.core import TyperCommand, TyperGroup

GC_THRESHOLD = 50_000
# Shipped examples the commands' own examples read (in the source tree).
TAU_TRACES = "examples/tau_airline/gpt-4o-airline-tasks-00-24.json"
DEMO = "examples/demo_agent"
HELP = "agent-backtest: what a change to an LLM agent would have done on its recorded traces."


@dataclass(frozen=True)
class Command:
    """A command run by ``function`` of ``agent_backtest.cli.MODULE``; ``summary`` is the first
    sentence of its docstring, shown by the group's help (a test keeps the two equal), and
    ``example`` a command line its own help ends with."""

    module: str
    function: str
    summary: str
    example: str


@dataclass(frozen=True)
class Group:
    """A group of commands, such as ``abt cache``; ``summary`` is also its help."""

    summary: str
    commands: Mapping[str, Command] = field(default_factory=dict)


Entry = Command | Group

COMMANDS: Mapping[str, Entry] = {
    "ingest": Command(
        "ingest",
        "ingest",
        "Read traces and report, per input, what they hold and how many replay units they give.",
        f"abt ingest {TAU_TRACES} --recorded-model gpt-4o",
    ),
    "units": Command(
        "units",
        "units",
        "Build one replay unit per recorded LLM step: the request as sent, production's answer.",
        f"abt units {TAU_TRACES} --recorded-model gpt-4o --steps action -o units.jsonl",
    ),
    "replay": Command(
        "replay",
        "replay",
        "Replay units on a candidate model; every answer is recorded the moment it arrives, then "
        "the run is scored against production (as abt score does).",
        "abt replay traces.jsonl --model openai/gpt-4.1-mini --judge openai/gpt-4.1 --out "
        "runs/candidate --report",
    ),
    "score": Command(
        "score",
        "score",
        "Score a run's results against production's answers; never calls the candidate.",
        "abt score runs/candidate --judge openai/gpt-4.1",
    ),
    "report": Command(
        "report",
        "report",
        "Write results.csv and report.html (one offline page) into a scored run's directory, or "
        "summary.json and report.html into a simulate run's.",
        "abt report runs/candidate --format markdown",
    ),
    "compare": Command(
        "compare",
        "compare",
        "Compare two scored runs: agreement of each, the paired difference, McNemar, flips; or "
        "two simulate runs: pass rates, the paired difference, flips by flow.",
        "abt compare runs/self-control runs/candidate --max-drop 0.02",
    ),
    "gate": Command(
        "gate",
        "gate",
        "Check a scored run, or a simulate run, against bars; exit 3 when one is not met (2 is a "
        "usage error).",
        "abt gate runs/candidate --min-agreement 0.9 --use-lower-bound",
    ),
    "show": Command(
        "show",
        "show",
        "Show a session (turns, messages, tool calls, timing) or a unit (request and golden).",
        f"abt show {TAU_TRACES} --session SESSION_ID",
    ),
    "schema": Command(
        "schema",
        "schema",
        "Print the JSON Schema of every persisted record (sessions, units, run files).",
        "abt schema summary",
    ),
    "profile": Command(
        "profile",
        "profile",
        "Profile agent loops: calls, times, gaps, tokens, failures and retries, per group.",
        f"abt profile {TAU_TRACES} --group-by model",
    ),
    "collect": Command(
        "collect",
        "collect",
        "Receive OTLP/HTTP traces (protobuf or JSON, gzip or not) and append them to a file "
        "until Ctrl-C or SIGTERM.",
        "abt collect --listen 127.0.0.1:4318 --out traces.jsonl",
    ),
    "pull": Group(
        "Pull traces from a running backend into a file the readers take.",
        {
            "phoenix": Command(
                "pull",
                "phoenix",
                "Pull a Phoenix project's spans into an OTLP/JSON trace file (OpenInference "
                "attributes kept); resumable.",
                "abt pull phoenix --endpoint http://127.0.0.1:6006 --project default "
                "-o traces.jsonl",
            ),
            "langfuse": Command(
                "pull",
                "langfuse",
                "Pull Langfuse traces with their observations into the export the Langfuse "
                "reader takes; resumable.",
                "abt pull langfuse --since 2026-12-01 -o langfuse.jsonl",
            ),
        },
    ),
    "push": Command(
        "push",
        "push",
        "Push a scored run's verdicts onto the production spans they judge, as Phoenix span "
        "annotations.",
        "abt push runs/candidate --to phoenix --endpoint http://127.0.0.1:6006",
    ),
    "bench": Group(
        "Benchmarks: agents rolled out in tool environments, graded against hidden gold; their "
        "results and training exports.",
        {
            "run": Command(
                "bench_run",
                "run",
                "Roll out an agent on a benchmark's cases, then grade every episode against the "
                "gold (read only after the rollouts).",
                "abt bench run tau_airline --agent openai/gpt-4.1-mini --user openai/gpt-4.1 "
                "--rollouts 4 --out runs/airline",
            ),
            "rescore": Command(
                "bench_rescore",
                "rescore",
                "Recompute the rewards of recorded τ-bench trajectories, with no model call: "
                "pass^k, and how many equal the recorded ones.",
                f"abt bench rescore {TAU_TRACES} --env tau_airline",
            ),
            "report": Command(
                "bench_report",
                "report",
                "Write summary.json, results.csv and report.html into a bench run; print pass^k.",
                "abt bench report runs/airline",
            ),
            "export": Command(
                "bench_export",
                "export",
                "Write a bench run's eligible episodes as training data: SFT chat JSONL, RL "
                "prompt groups.",
                "abt bench export runs/airline --sft sft.jsonl --rl groups.jsonl",
            ),
        },
    ),
    "cache": Group(
        "The response cache of model answers.",
        {
            "stats": Command("cache", "stats", "Entries and size of the cache.", "abt cache stats"),
            "clear": Command(
                "cache",
                "clear",
                "Remove every stored answer.",
                "abt cache clear --cache-dir .cache",
            ),
        },
    ),
    "config": Group(
        "The model config (abt.toml): endpoints, key variables, roles and aliases.",
        {
            "path": Command(
                "config",
                "path",
                "Print the config file in effect (./abt.toml, else the user's), then where each "
                "is looked for.",
                "abt config path",
            )
        },
    ),
    "simulate": Group(
        "Simulate: test conversations played through a live agent, then judged.",
        {
            "run": Command(
                "simulate_run",
                "run",
                "Play test conversations through a live agent and record every turn; "
                "conversations are appended as they end, and --resume finishes an interrupted "
                "run.",
                f"abt simulate run {DEMO}/flows.yaml --target {DEMO}/target.toml --judge "
                "openai/gpt-4.1 --out runs/sim",
            ),
            "generate": Command(
                "simulate_generate",
                "generate",
                "Have a teacher model write exactly N test conversations per capability family "
                "from its seed conversations; every flow is checked, and nothing is written "
                "unless all are there.",
                f"abt simulate generate {DEMO}/capabilities.yaml --tools {DEMO}/tools.json "
                "--per-family 3 --teacher openai/gpt-4.1 --out flows.jsonl",
            ),
            "judge": Command(
                "simulate_judge",
                "judge",
                "Judge a saved simulate run's conversations: checks, then the judge; never "
                "replays.",
                "abt simulate judge runs/sim --judge openai/gpt-4.1 --rejudge uncertain",
            ),
            "traces": Command(
                "simulate_traces",
                "traces",
                "Join the agent's own traces to a simulate run's conversations (by the "
                "traceparent each turn carried, or the agent's session id) and write them as "
                "sessions whose model calls abt replay can backtest.",
                "abt simulate traces runs/sim agent-traces.jsonl",
            ),
            "coverage": Command(
                "simulate_coverage",
                "coverage",
                "Per family of a corpus of flows: its seeds, those judged pass or fail in any of "
                "the runs, those pending (never judged, or only uncertain), and the percent "
                "covered.",
                f"abt simulate coverage {DEMO}/flows.yaml --runs runs",
            ),
        },
    ),
    "patch": Group(
        "Patches: edit ops applied to each unit's request before it is sent (abt replay --patch).",
        {
            "check": Command(
                "patch",
                "check",
                "Apply a patch to the units and report, per op, how many units have its target "
                "and how many it changed; exit 1 when an op matches nothing.",
                "abt patch check prompt-change.yaml runs/candidate/units.jsonl",
            )
        },
    ),
}


def load_command(name: str, entry: Entry) -> TyperCommand | TyperGroup:
    """Build the command ``name`` of ``entry``: a group of lazy commands, or the function of
    its module (imported now) behind ``friendly_errors``."""
    if isinstance(entry, Group):
        return LazyGroup(
            name=name,
            table=entry.commands,
            help=entry.summary,
            no_args_is_help=True,
            rich_markup_mode=None,
        )
    from agent_backtest.cli.errors import friendly_errors

    module = importlib.import_module(f"agent_backtest.cli.{entry.module}")
    single = typer.Typer(add_completion=False, rich_markup_mode=None)
    single.command(name, cls=PanelledCommand, epilog=entry.example)(
        friendly_errors(getattr(module, entry.function))
    )
    return typer.main.get_command(single)


class PanelledCommand(TyperCommand):
    """A command whose help lists its arguments, then its options panel by panel (inputs,
    selection, models and roles, calls, scoring, output: see ``cli/options.py``), then its
    example (the epilog) as a command line that is never wrapped."""

    def format_options(self, ctx: typer.Context, formatter: Any) -> None:
        from agent_backtest.cli.options import PANELS

        arguments: list[tuple[str, str]] = []
        panels: dict[str, list[tuple[str, str]]] = {name: [] for name in PANELS}
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            if param.param_type_name == "argument":
                arguments.append(record)
            else:
                panel = getattr(param, "rich_help_panel", None) or "Options"
                panels.setdefault(panel, []).append(record)
        for title, records in [("Arguments", arguments), *panels.items()]:
            if records:
                with formatter.section(title):
                    formatter.write_dl(records)

    def format_epilog(self, ctx: typer.Context, formatter: Any) -> None:
        if self.epilog:
            with formatter.section("Example"):
                formatter.write(" " * formatter.current_indent + self.epilog + "\n")


class LazyCommands(MutableMapping[str, TyperCommand | TyperGroup]):
    """A group's commands by name, each built the first time it is looked up."""

    def __init__(self, table: Mapping[str, Entry]) -> None:
        self.table = table
        self.built: dict[str, TyperCommand | TyperGroup] = {}

    def __getitem__(self, name: str) -> TyperCommand | TyperGroup:
        if name not in self.built:
            self.built[name] = load_command(name, self.table[name])
        return self.built[name]

    def __setitem__(self, name: str, command: TyperCommand | TyperGroup) -> None:
        self.built[name] = command

    def __delitem__(self, name: str) -> None:
        del self.built[name]

    def __iter__(self) -> Iterator[str]:
        yield from self.table
        yield from (name for name in self.built if name not in self.table)

    def __len__(self) -> int:
        return len(self.table) + sum(name not in self.table for name in self.built)


class LazyGroup(TyperGroup):
    """A typer group whose commands come from a table and are imported only when one runs (or
    prints its own help); its help lists them from the table."""

    table: Mapping[str, Entry] = COMMANDS

    def __init__(self, *, table: Mapping[str, Entry] | None = None, **attrs: Any) -> None:
        super().__init__(**attrs)
        if table is not None:
            self.table = table
        self.commands = LazyCommands(self.table)

    def get_help_option(self, ctx: typer.Context) -> Any:
        """The group's --help, False when not given: typer passes a value that is not already
        a bool through a pydantic adapter, and a group reads its own --help on the way to each
        of its commands, so a None here would load pydantic for every command's help."""
        option = super().get_help_option(ctx)
        if option is not None:
            option.default = False
        return option

    def list_commands(self, ctx: typer.Context) -> list[str]:
        """The names, in the order of the table, without building any command."""
        return list(self.commands)

    def format_commands(self, ctx: typer.Context, formatter: Any) -> None:
        """The command list with each one's summary from the table."""
        if not self.table:
            return
        limit = formatter.width - 6 - max(len(name) for name in self.table)
        rows = [
            (name, textwrap.shorten(entry.summary, limit, placeholder="..."))
            for name, entry in self.table.items()
        ]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def _show_version(value: bool) -> None:
    """``--version``: print ``abt X.Y.Z`` and stop before any command."""
    if value:
        from agent_backtest import __version__

        typer.echo(f"abt {__version__}")
        raise typer.Exit()


app = typer.Typer(
    name="abt",
    cls=LazyGroup,
    help=HELP,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


@app.callback()
def root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", is_eager=True, callback=_show_version, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """The options before any command: --version (and --help)."""


def show_warning(message: Warning | str, *_: object) -> None:
    """A warning (such as the response cache's) as one line on stderr, like every message."""
    from agent_backtest.cli.terminal import printable

    print(f"abt: warning: {printable(str(message))}", file=sys.stderr)


def _run_app() -> int:
    """The command's exit code; a mistake in the command line itself (an unknown flag, a value
    that is not a number, a missing argument) is one line and exit code 2, as every other user
    mistake is, instead of click's usage block."""
    from agent_backtest.cli.errors import USER_ERROR, report

    # click's exceptions as typer exposes them (its own copy of click, or click itself)
    bad_parameter = typer.BadParameter
    usage_error = bad_parameter.__base__

    try:
        code = app(standalone_mode=False, prog_name="abt")
    except bad_parameter as exc:
        name = _flag(exc.param)
        report(
            f"{name}: {exc.message}" if name and exc.message else _sentence(exc.format_message())
        )
        return USER_ERROR
    except usage_error as exc:
        where = f" (see {exc.ctx.command_path} --help)" if exc.ctx else ""
        report(_sentence(exc.message) + where)
        return USER_ERROR
    except typer.Abort:  # click's word for Ctrl-C at a prompt
        raise KeyboardInterrupt from None
    return code if isinstance(code, int) else 0


def _flag(param: Any) -> str | None:
    """How the command line names a parameter: its long flag, else its metavar."""
    if param is None:
        return None
    opts = [opt for opt in getattr(param, "opts", []) if opt.startswith("--")]
    return opts[0] if opts else getattr(param, "human_readable_name", None)


def _sentence(message: str) -> str:
    """click's message as the rest of abt's errors read: lower case, no closing full stop."""
    message = message.strip().rstrip(".")
    return message[:1].lower() + message[1:]


def run() -> None:
    """Run the command of ``sys.argv`` (``agent_backtest.cli.main`` is the entry point)."""
    warnings.showwarning = show_warning
    # The commands make and drop many JSON containers and few reference cycles: with Python's
    # first-generation threshold (700) the cycle collector runs thousands of times, walking
    # every object a command holds (all the units while scoring) to find almost nothing.
    gc.set_threshold(GC_THRESHOLD, *gc.get_threshold()[1:])
    try:
        sys.exit(_run_app())
    finally:
        # The interpreter's last collection walks every object left (a third of a second after
        # a replay) only for the process to end: frozen, they are left to the exit. What must
        # be flushed or closed (results, manifest, cache) was closed explicitly by now.
        gc.freeze()
