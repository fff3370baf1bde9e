"""Spans, whatever file they came from, turned into canonical sessions.

OTLP/JSON and Langfuse exports both describe an agent run as a tree of spans. Their readers
decode the file into :class:`Span` records and hand them to :func:`build_session`, which drops
exact repeats (counted), groups the spans into turns and steps, asks the attribute dialects
(:mod:`~agent_backtest.formats.dialects`) for the LLM call or tool execution of each span, and
repairs what the span alone cannot tell: history kept server-side, instructions recorded on the
agent span, tool messages without their call id. Every span's reading is kept when asked for,
so ``abt show --explain`` can say what became of it.

A session is every trace that shares a session id (``session.id``/``langfuse.session.id``),
or a single trace when none is recorded; each trace is one turn.

Each step gets the agent version that ran it (see :func:`agent_version`); the session's agent
has a version only when all its steps agree on one.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import ValidationError

from agent_backtest.errors import RecordError
from agent_backtest.formats import dialects, genai_current, plain_steps, vercel_ai
from agent_backtest.formats.base import SkipLog, SpanReading
from agent_backtest.formats.call_checks import finish_call
from agent_backtest.formats.span_model import Span
from agent_backtest.redaction import is_secret
from agent_backtest.trace import (
    AgentInfo,
    LLMCall,
    Message,
    Session,
    SourceRef,
    Step,
    ToolExecution,
    Turn,
    common_agent_version,
)
from agent_backtest.trace.models import StepKind

SESSION_KEYS = ("session.id", "langfuse.session.id")
AGENT_NAME_KEYS = ("gen_ai.agent.name", "agent.name")
AGENT_VERSION_KEY = "gen_ai.agent.version"
# OpenLLMetry (Traceloop) records a version on the span of a decorated entity; on an agent's
# span that is the agent's version. OpenInference has no agent version attribute.
TRACELOOP_KIND_KEY, TRACELOOP_VERSION_KEY = "traceloop.span.kind", "traceloop.entity.version"


def session_key(span: Span) -> str | None:
    """The session id a span records, if any."""
    if span.session_id:
        return span.session_id
    for key in SESSION_KEYS:
        value = span.attributes.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def group_spans(spans: Iterable[Span]) -> dict[str, list[Span]]:
    """Spans by session key (the session id, else the trace id), in order of first appearance."""
    spans = list(spans)
    trace_session: dict[str, str] = {}
    for span in spans:
        key = session_key(span)
        if key is not None:
            trace_session.setdefault(span.trace_id, key)
    groups: dict[str, list[Span]] = {}
    for span in spans:
        groups.setdefault(trace_session.get(span.trace_id, span.trace_id), []).append(span)
    return groups


def build_session(
    key: str, spans: list[Span], *, file: str, format: str, skips: SkipLog
) -> Session | None:
    """The session of one group of spans; None when no span could be used.

    Spans that cannot become steps are logged in ``skips`` under their reason.
    """
    traces: dict[str, list[Span]] = {}
    for span in unique_spans(spans, skips):
        traces.setdefault(span.trace_id, []).append(span)
    ordered = sorted(traces.values(), key=lambda trace: min(map(_start_key, trace)))
    history = _History()
    turns = []
    for trace in ordered:
        steps = _trace_steps(trace, history, skips)
        if steps:
            turns.append(_turn(len(turns), steps))
    if not turns:
        return None
    return Session(
        id=key,
        source=SourceRef(file=file, format=format, location=spans[0].location),
        agent=_agent_info(spans, [step for turn in turns for step in turn.steps]),
        turns=turns,
        metadata=_metadata(ordered),
    )


def unique_spans(spans: list[Span], skips: SkipLog) -> list[Span]:
    """The spans with exact repeats (the same trace and span id, the same content) dropped and
    counted; a repeat whose content differs is skipped as ``span_id_conflict``."""
    seen: dict[tuple[str, str], Span] = {}
    kept = []
    for span in spans:
        key = (span.trace_id, span.span_id)
        first = seen.get(key)
        if first is None:
            seen[key] = span
            kept.append(span)
        elif _content(first) == _content(span):
            skips.drop_duplicate(span.location, f"a repeat of the span at {first.location}")
        else:
            skips.skip(
                "span_id_conflict",
                span.location,
                f"span {span.span_id} was read before at {first.location} with other content",
            )
    return kept


def _content(span: Span) -> tuple[Any, ...]:
    """What makes two records of a span the same span (not where they are in the file)."""
    return (
        span.name,
        span.parent_id,
        span.started_at,
        span.ended_at,
        span.status,
        span.attributes,
        span.events,
        span.input,
        span.output,
    )


def agent_version(span: Span, by_id: dict[str, Span]) -> str | None:
    """The version of the agent that ran a span, as recorded; None when nothing records one.

    Most specific first: ``gen_ai.agent.version`` on the span or the nearest span around it that
    has one (OpenLLMetry: ``traceloop.entity.version`` of an agent span), then the version the
    source records for the span itself (Langfuse), then the ``service.version`` of the resource
    that emitted it.
    """
    for candidate in (span, *_ancestors(span, by_id)):
        attributes = candidate.attributes
        # Most spans record neither key: those are passed over without a call.
        if AGENT_VERSION_KEY in attributes or TRACELOOP_KIND_KEY in attributes:
            version = _declared_agent_version(attributes)
            if version is not None:
                return version
    return span.version or version_text(span.resource_attributes.get("service.version"))


def _declared_agent_version(attributes: dict[str, Any]) -> str | None:
    """The agent version a span's own attributes state, if any."""
    version = version_text(attributes.get(AGENT_VERSION_KEY))
    if version is None and attributes.get(TRACELOOP_KIND_KEY) == "agent":
        version = version_text(attributes.get(TRACELOOP_VERSION_KEY))
    return version


def version_text(value: Any) -> str | None:
    """A recorded version as text: a non-empty string, or an integer (OpenLLMetry's are)."""
    if isinstance(value, str):
        return value or None
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


def clean_attributes(attributes: dict[str, Any], drop: Iterable[str] = ()) -> dict[str, Any]:
    """Attributes safe to keep: credentials removed, and the keys in ``drop`` left out."""
    dropped = drop if isinstance(drop, set | frozenset) else set(drop)
    return {
        key: value
        for key, value in attributes.items()
        if key not in dropped and not is_secret(key, value)
    }


# --- steps ------------------------------------------------------------------------------------


class _History:
    """LLM exchanges of the session so far, by response id, for server-side history."""

    def __init__(self) -> None:
        """An empty history."""
        self.by_response_id: dict[str, tuple[str, list[Message], Message]] = {}

    def remember(self, step_id: str, call: LLMCall) -> None:
        """Keep a finished exchange so a later call continuing it can be rebuilt."""
        if call.response is not None and call.response.id:
            self.by_response_id[call.response.id] = (
                step_id,
                call.request.messages,
                call.response.message,
            )


def _start_key(span: Span) -> tuple[bool, float]:
    # Timed spans first by time; untimed keep their file order (sorted() is stable).
    """Sort key of a span: timed spans by time, untimed after them."""
    return (
        span.started_at is None,
        span.started_at.timestamp() if span.started_at is not None else 0.0,
    )


def _trace_steps(trace: list[Span], history: _History, skips: SkipLog) -> list[Step]:
    """The steps of one trace in time order; unusable spans are logged as skips."""
    by_id = {span.span_id: span for span in trace}
    kinds: dict[str, StepKind] = {}
    explain = skips.readings is not None
    steps = []
    for span in sorted(trace, key=_start_key):
        plain = None if explain else _plain_step(span, by_id, kinds)
        if plain is not None:
            try:
                step = Step.model_validate(plain)
            except ValidationError:
                pass  # read again by the general readers, which name the value of the wrong type
            else:
                if step.llm is not None:
                    history.remember(span.span_id, step.llm)
                steps.append(step)
                continue
        try:
            step, found = _step(span, by_id, kinds, history, explain)
        except RecordError as exc:
            skips.record_error(exc, span.location)
            continue
        except ValidationError as exc:
            # A value of the wrong type deep inside a payload (a part's text, a role, …).
            error = exc.errors()[0]
            where = ".".join(str(part) for part in error["loc"])
            skips.skip("mistyped_field", span.location, f"{where}: {error['msg']}")
            continue
        steps.append(step)
        if explain:  # a reading asks the tool dialects again: only worth it when kept
            skips.read(_reading(span, step, found))
    return steps


def _plain_step(
    span: Span, by_id: dict[str, Span], kinds: dict[str, StepKind]
) -> dict[str, Any] | None:
    """The step of a span as the plain values of its JSON (what :func:`_step` makes of it,
    field by field), when its call or tool execution is of a shape read as plain values;
    else None."""
    kind = _kind(span, kinds)
    payload: dict[str, Any] = {}
    consumed = span.consumed
    name: str | None = span.name
    if kind == "llm":
        call = plain_steps.genai_call(span)
        if call is None:
            return None
        payload["llm"] = call
        # Keys the span does not hold drop nothing, so the dialect's whole set serves (a span
        # read by genai_call consumed none itself).
        consumed = genai_current.CONTENT_KEYS
        name = _enclosing_agent_name(span, by_id, kinds) or span.name
    elif kind == "tool":
        tool = plain_steps.genai_tool(span, _error_text(span))
        if tool is None:
            return None
        payload["tool"] = tool
        keys = genai_current.CONTENT_KEYS
        consumed = (consumed | keys) if consumed else keys
        name = tool["name"]
    elif kind == "agent":
        name = _first_str(span.attributes, AGENT_NAME_KEYS) or span.name
    step = {"id": span.span_id, "trace_id": span.trace_id, "kind": kind}
    for key, value in (
        ("name", name),
        ("parent_id", span.parent_id),
        ("started_at", span.started_at),
        ("ended_at", span.ended_at),
        ("status", span.status if span.status in ("ok", "error") else None),
        ("error", _error_text(span)),
        ("agent_version", agent_version(span, by_id)),
    ):
        if value is not None:
            step[key] = value
    step.update(payload)
    step["attributes"] = clean_attributes(span.attributes, consumed)
    return step


def _reading(span: Span, step: Step, found: list[str]) -> SpanReading:
    """How a span became a step, for ``--explain``; ``found`` says what each dialect that
    recognised an LLM span found in it."""
    dialect, reason, detail = None, None, None
    if step.llm is not None:
        dialect = step.llm.dialect
        if step.llm.unusable is not None:
            reason, detail = step.llm.unusable.reason, step.llm.unusable.detail
    elif step.kind == "tool":
        dialect = dialects.tool_dialect(span)
    elif dialects.looks_like_llm(span):
        detail = "records a model name or token usage, no call of its own: an enclosing span"
    return SpanReading(
        span.location, span.span_id, span.name, step.kind, dialect, reason, detail, found
    )


def _step(
    span: Span,
    by_id: dict[str, Span],
    kinds: dict[str, StepKind],
    history: _History,
    explain: bool,
) -> tuple[Step, list[str]]:
    """One span as a step of its kind (``kinds`` keeps the trace's, see :func:`_kind`), and
    (with ``explain``) what each dialect that read its call found."""
    kind = _kind(span, kinds)
    llm, tool, consumed = None, None, set(span.consumed)
    name: str | None = span.name
    found: list[str] = []
    if kind == "llm":
        llm, keys, found = _llm_call(span, by_id, history, explain)
        consumed |= keys
        name = _enclosing_agent_name(span, by_id, kinds) or span.name
        history.remember(span.span_id, llm)
    elif kind == "tool":
        tool, keys = _tool_execution(span)
        consumed |= keys
        name = tool.name
    elif kind == "agent":
        name = _first_str(span.attributes, AGENT_NAME_KEYS) or span.name
    step = Step(
        id=span.span_id,
        trace_id=span.trace_id,
        kind=kind,
        name=name,
        parent_id=span.parent_id,
        started_at=span.started_at,
        ended_at=span.ended_at,
        status=span.status if span.status in ("ok", "error") else None,
        error=_error_text(span),
        agent_version=agent_version(span, by_id),
        llm=llm,
        tool=tool,
        attributes=clean_attributes(span.attributes, consumed),
    )
    return step, found


def _llm_call(
    span: Span, by_id: dict[str, Span], history: _History, explain: bool
) -> tuple[LLMCall, set[str], list[str]]:
    """The call of an LLM span, with history and instructions repaired and its blocker named;
    the keys its dialects read and (with ``explain``) what each one found."""
    call, consumed, readings = dialects.read_call(span)
    # Described before the repairs below change the call a lone reading shares.
    found = [reading.found for reading in readings] if explain else []
    if call.request.messages:
        _continue_history(span, call, history)
        _add_agent_instructions(span, call, by_id)
        _add_object_schema(span, call, by_id)
    finish_call(call)
    return call, consumed, found


def _continue_history(span: Span, call: LLMCall, history: _History) -> None:
    """Rebuild a request whose history the provider kept (``previous_response_id``)."""
    conversation = span.attributes.get("gen_ai.conversation.id")
    earlier = history.by_response_id.get(conversation) if isinstance(conversation, str) else None
    messages = call.request.messages
    if earlier is not None:
        step_id, before, answer = earlier
        call.request.messages = _chain([*before, answer], messages)
        call.reconstructed = True
        call.notes.append(
            f"the trace recorded only the new input; history rebuilt from step {step_id} "
            f"(response {conversation}) and its answer"
        )
        return
    if conversation and not any(m.role in ("system", "developer", "user") for m in messages):
        raise RecordError(
            "history_not_recorded",
            f"the input holds no system or user message and continues conversation "
            f"{conversation!r}, whose earlier exchange is not in the trace",
        )


def _chain(before: list[Message], new: list[Message]) -> list[Message]:
    # Instructions are re-sent with every call; the history already carries them first.
    """Earlier history followed by the new input, the system message first and once."""
    has_system = bool(before) and before[0].role == "system"
    systems = [m for m in new if m.role == "system"]
    rest = [m for m in new if m.role != "system"]
    head = [] if has_system else systems[:1]
    return [*head, *before, *rest]


def _add_agent_instructions(span: Span, call: LLMCall, by_id: dict[str, Span]) -> None:
    """Microsoft Agent Framework records the instructions only on the agent span."""
    if any(m.role == "system" for m in call.request.messages):
        return
    for ancestor in _ancestors(span, by_id):
        if ancestor.attributes.get("gen_ai.operation.name") != "invoke_agent":
            continue
        content = genai_current.system_instructions(
            ancestor.attributes.get("gen_ai.system_instructions")
        )
        if content is not None:
            call.request.messages.insert(0, Message(role="system", content=content))
            call.notes.append(
                f"system message taken from gen_ai.system_instructions of agent "
                f"span {ancestor.span_id}"
            )
            return


def _add_object_schema(span: Span, call: LLMCall, by_id: dict[str, Span]) -> None:
    """The AI SDK records a ``generateObject`` call's schema only on its outer span."""
    if "response_format" in call.request.params or not vercel_ai.is_model_call(span.attributes):
        return
    for ancestor in _ancestors(span, by_id):
        found = vercel_ai.response_format(ancestor.attributes)
        if found is not None:
            call.request.params["response_format"] = found
            call.notes.append(f"response_format taken from ai.schema of span {ancestor.span_id}")
            return


def _tool_execution(span: Span) -> tuple[ToolExecution, set[str]]:
    """The execution of a tool span, with the keys the dialect consumed."""
    tool, consumed = dialects.read_tool(span)
    return _with_error(tool, span), consumed


def _with_error(tool: ToolExecution, span: Span) -> ToolExecution:
    """The execution with the span's error when the span failed."""
    if tool.error is None and span.status == "error":
        tool.error = _error_text(span)
    return tool


def _error_text(span: Span) -> str | None:
    """The error of a failed span: its status message, else ``error.type``."""
    if span.status != "error":
        return None
    if span.status_message:
        return span.status_message
    error_type = span.attributes.get("error.type")
    return str(error_type) if error_type is not None else None


def _ancestors(span: Span, by_id: dict[str, Span]) -> Iterable[Span]:
    """The span's parents, nearest first, within the trace."""
    seen = {span.span_id}
    parent = by_id.get(span.parent_id) if span.parent_id else None
    while parent is not None and parent.span_id not in seen:
        yield parent
        seen.add(parent.span_id)
        parent = by_id.get(parent.parent_id) if parent.parent_id else None


def _kind(span: Span, kinds: dict[str, StepKind]) -> StepKind:
    """The step kind of a span, asked of the dialects once per span of a trace (``kinds``):
    each LLM step asks it again of the spans around it, for its agent's name."""
    kind = kinds.get(span.span_id)
    if kind is None:
        kind = kinds[span.span_id] = dialects.step_kind(span)
    return kind


def _enclosing_agent_name(
    span: Span, by_id: dict[str, Span], kinds: dict[str, StepKind]
) -> str | None:
    """The agent name of the nearest enclosing agent span."""
    for ancestor in _ancestors(span, by_id):
        if _kind(ancestor, kinds) == "agent":
            name = _first_str(ancestor.attributes, AGENT_NAME_KEYS)
            if name:
                return name
    return None


# --- turns and sessions -----------------------------------------------------------------------


def _turn(index: int, steps: list[Step]) -> Turn:
    """A turn of steps, with the user input and the agent output it found."""
    calls = [step.llm for step in steps if step.llm is not None]
    user_input = None
    if calls:
        users = [m for m in calls[0].request.messages if m.role == "user"]
        user_input = users[-1].text() if users else None
    answers = [
        call.response.message.text()
        for call in calls
        if call.response is not None and call.response.message.text()
    ]
    return Turn(
        index=index,
        user_input=user_input,
        agent_output=answers[-1] if answers else None,
        steps=steps,
    )


def _agent_info(spans: list[Span], steps: list[Step]) -> AgentInfo | None:
    """The agent, from the agent name attributes or the service resource, and the version its
    steps agree on."""
    keys = (*AGENT_NAME_KEYS, "gen_ai.agent.id")
    name = next((value for span in spans if (value := _first_str(span.attributes, keys))), None)
    service = spans[0].resource_attributes.get("service.name")
    if name is None and isinstance(service, str) and not service.startswith("unknown_service"):
        name = service
    version = common_agent_version(steps)
    if name is None and version is None:
        return None
    return AgentInfo(name=name, version=version)


def _metadata(traces: list[list[Span]]) -> dict[str, Any]:
    """The session's trace ids and (credential-free) resource attributes."""
    metadata: dict[str, Any] = {"trace_ids": [trace[0].trace_id for trace in traces]}
    resource = clean_attributes(traces[0][0].resource_attributes)
    if resource:
        metadata["resource"] = resource
    return metadata


def _first_str(attributes: dict[str, Any], keys: Iterable[str]) -> str | None:
    """The first non-empty string among the keys."""
    for key in keys:
        value = attributes.get(key)
        if isinstance(value, str) and value:
            return value
    return None
