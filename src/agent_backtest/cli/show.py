"""``abt show``: a readable view of a session or a unit, as the model saw it."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

import orjson
from rich.console import Console

from agent_backtest import api
from agent_backtest.api import ReadingOptions
from agent_backtest.cli.flags import with_groups
from agent_backtest.cli.options import OUTPUT, SELECTION, ShowSecrets, argument, option
from agent_backtest.cli.terminal import SafeConsole, escape, printable

if TYPE_CHECKING:
    from agent_backtest.formats import InputSummary
    from agent_backtest.formats.base import SpanReading
    from agent_backtest.trace import LLMRequest, LLMResponse, Message, Session, Step, ToolCall
    from agent_backtest.units import Unit

ROLE_STYLES = {
    "system": "magenta",
    "developer": "magenta",
    "user": "green",
    "assistant": "cyan",
    "tool": "yellow",
}


TraceOrUnits = argument(Path, "FILE", "A trace file in any supported format, or a units JSONL.")
SessionId = option(str | None, "--session", SELECTION, "Show this session.", metavar="ID")
UnitId = option(str | None, "--unit", SELECTION, "Show this unit (units files).", metavar="ID")
Explain = option(
    bool,
    "--explain",
    OUTPUT,
    "For each span or observation: the step it became, the dialect that read it, and why it gave "
    "no unit.",
)


@with_groups()
def show(
    reading: ReadingOptions,
    file: TraceOrUnits,
    session: SessionId = None,
    unit: UnitId = None,
    explain: Explain = False,
    show_secrets: ShowSecrets = False,
) -> None:
    """Show a session (turns, messages, tool calls, timing) or a unit (request and golden).

    With several sessions or units and no id, list them.
    """
    shown = api.show(
        file,
        session=session,
        unit=unit,
        explain_records=explain,
        reading=reading,
        show_secrets=show_secrets,
    )
    console = SafeConsole(highlight=False)
    if shown.explanation is not None:
        print_explanation(console, shown.explanation)
    elif shown.units:
        if shown.single:
            print_unit(console, shown.units[0])
        else:
            _list_units(console, shown.file, shown.units)
    elif shown.single:
        print_session(console, shown.sessions[0])
    else:
        _list_sessions(console, shown.sessions)


def print_explanation(console: Console, summary: InputSummary) -> None:
    """Each span or observation: the step it became, who read it, and what blocks its unit."""
    readings = summary.skips.readings or []
    if not readings:
        console.print(
            escape(
                f"{summary.file} ({summary.format}) records calls, not spans: "
                f"{summary.sessions} sessions; skipped " + (_counts(summary.skips.counts) or "none")
            )
        )
        return
    for reading in readings:
        read_by = f", read by {reading.dialect}" if reading.dialect else ""
        label = f"{reading.name}: {reading.kind} step{read_by}" if reading.name else "not read"
        console.print(escape(f"{reading.location}\n    {label} → {_outcome(reading)}"))
        for found in reading.found:
            console.print(escape(f"      recognised by {found}"))
    blocked = Counter(r.reason for r in readings if r.reason and r.kind == "llm")
    units = sum(r.kind == "llm" and r.reason is None for r in readings)
    console.print(
        escape(
            f"{len(readings)} records ({summary.format}): {units} LLM steps give a unit; "
            f"LLM steps without one: {_counts(blocked) or 'none'}; "
            f"records skipped: {_counts(summary.skips.counts) or 'none'}"
        ),
        markup=False,
    )


def _outcome(reading: SpanReading) -> str:
    """What became of a span, in words."""
    if reading.kind == "none":
        return f"skipped: {reading.reason}: {reading.detail}"
    if reading.kind == "llm":
        if reading.reason is None:
            return "a unit"
        return f"no unit: {reading.reason}: {reading.detail}"
    return reading.detail or "not a model call"


def _counts(counts: Counter[str]) -> str:
    return " · ".join(f"{name} {count}" for name, count in sorted(counts.items()))


def _list_units(console: Console, file: Path, units: list[Unit]) -> None:
    from rich.table import Table

    table = Table("unit", "session", "turn", "node", "kind", "golden", show_edge=False)
    for unit in units:
        table.add_row(
            escape(unit.unit_id),
            escape(unit.session_id),
            str(unit.turn_index),
            escape(unit.node or ""),
            unit.kind,
            escape(_answer_summary(unit.golden.message)),
        )
    console.print(table)
    console.print(
        printable(f"{len(units)} units; abt show {file} --unit ID shows one"), markup=False
    )


def _list_sessions(console: Console, sessions: list[Session]) -> None:
    from rich.table import Table

    table = Table("session", "turns", "steps", "llm steps", "started", show_edge=False)
    for session in sessions:
        steps = session.steps()
        started = min((s.started_at for s in steps if s.started_at), default=None)
        table.add_row(
            escape(session.id),
            str(len(session.turns)),
            str(len(steps)),
            str(sum(s.kind == "llm" for s in steps)),
            started.isoformat() if started else "not recorded",
        )
    console.print(table)
    console.print(f"{len(sessions)} sessions; abt show FILE --session ID shows one", markup=False)


def print_session(console: Console, session: Session) -> None:
    """A session turn by turn: the user's words, each step with its timing, the answer."""
    source = f" from {session.source.file} ({session.source.format})" if session.source else ""
    console.print(f"[bold]session {escape(session.id)}[/bold]{escape(source)}")
    # One version for the whole session goes in its header; otherwise each step shows its own.
    version = session.agent.version if session.agent else None
    if session.agent is not None and (session.agent.name or version):
        agent = " ".join(part for part in (session.agent.name, version) if part)
        console.print(escape(f"agent {agent}"))
    for turn in session.turns:
        console.rule(
            escape(f"turn {turn.index}" + (f" · topic {turn.topic}" if turn.topic else ""))
        )
        if turn.user_input is not None:
            console.print(f"[green]user:[/green] {escape(turn.user_input)}")
        for step in turn.steps:
            _print_step(console, step, show_version=version is None)
        if turn.agent_output is not None:
            console.print(f"[cyan]agent:[/cyan] {escape(turn.agent_output)}")


def _print_step(console: Console, step: Step, show_version: bool) -> None:
    header = f"  [{step.kind}] {step.name or step.id}  {_timing(step)}"
    if show_version and step.agent_version is not None:
        header += f"  agent {step.agent_version}"
    if step.status == "error":
        header += f"  error: {step.error or ''}"
    console.print(escape(header), style="dim" if step.kind == "other" else None)
    if step.llm is not None:
        request = step.llm.request
        model = request.model or "model not recorded"
        tools = "tools not recorded" if request.tools is None else f"{len(request.tools)} tools"
        flags = " · request rebuilt, not recorded as sent" if step.llm.reconstructed else ""
        console.print(escape(f"    {model} · {len(request.messages)} messages · {tools}{flags}"))
        if step.llm.response is not None:
            console.print("    → " + escape(_answer_summary(step.llm.response.message)))
    if step.tool is not None:
        arguments = orjson.dumps(step.tool.arguments).decode()
        outcome = f"error: {step.tool.error}" if step.tool.error else _short(step.tool.result)
        console.print(escape(f"    {step.tool.name}({arguments}) → {outcome}"))


def print_unit(console: Console, unit: Unit) -> None:
    """A unit: where it comes from, the request as the model saw it, and the golden answer."""
    version = f" · agent {escape(unit.agent_version)}" if unit.agent_version else ""
    console.print(
        f"[bold]unit {escape(unit.unit_id)}[/bold] · {unit.kind} · session "
        f"{escape(unit.session_id)} turn {unit.turn_index} node "
        f"{escape(unit.node or '—')}{version}"
    )
    _print_request(console, unit.request)
    console.rule("golden (production's answer)")
    _print_response(console, unit.golden)


def _print_request(console: Console, request: LLMRequest) -> None:
    console.print(
        escape(
            f"model {request.model or 'not recorded'} · params "
            f"{orjson.dumps(request.params).decode()}"
        )
    )
    if request.tools is None:
        console.print("tools: not recorded in the trace")
    else:
        console.print(escape("tools: " + (", ".join(t.name for t in request.tools) or "none")))
    for message in request.messages:
        _print_message(console, message)


def _print_response(console: Console, response: LLMResponse) -> None:
    _print_message(console, response.message)
    usage = response.usage
    tokens = (
        f"{usage.input_tokens} in / {usage.output_tokens} out" if usage else "tokens not recorded"
    )
    console.print(
        escape(
            f"finish {response.finish_reason or 'not recorded'} · {tokens} · "
            f"model {response.model or 'not recorded'}"
        ),
        style="dim",
    )


def _print_message(console: Console, message: Message) -> None:
    style = ROLE_STYLES.get(message.role, "")
    label = message.role + (f" ({message.tool_call_id})" if message.tool_call_id else "")
    console.print(f"[{style}]{escape(label)}:[/{style}] {escape(message.text())}")
    for call in message.tool_calls or []:
        console.print("   ⤷ " + escape(_call_text(call)))


def _answer_summary(message: Message) -> str:
    if message.tool_calls:
        return "; ".join(_call_text(call) for call in message.tool_calls)
    return _short(message.text())


def _call_text(call: ToolCall) -> str:
    if call.arguments_raw is not None:
        return f"{call.name}({call.arguments_raw}) [unparseable arguments]"
    return f"{call.name}({orjson.dumps(call.arguments).decode()})"


def _timing(step: Step) -> str:
    if step.started_at and step.ended_at:
        return f"{(step.ended_at - step.started_at).total_seconds() * 1000:.0f} ms"
    return "timing not recorded"


def _short(value: object, limit: int = 160) -> str:
    text = value if isinstance(value, str) else orjson.dumps(value).decode()
    return text if len(text) <= limit else text[: limit - 1] + "…"
