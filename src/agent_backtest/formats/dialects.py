"""Which attribute dialect a span speaks, what kind of step it is, and the call or tool it holds.

The same span shape (OTLP span or Langfuse observation) carries many dialects: request and
answer bodies kept whole as JSON attributes (Logfire's ``request_data``), the Vercel AI SDK's
``ai.*``, Google ADK's request and response, the current OTel GenAI attributes, OpenInference,
OpenLLMetry's indexed attributes, the older GenAI events, Braintrust's, and, last, the input
and output a source keeps beside the attributes. Every dialect that recognises a span gives its
reading, in that order; :mod:`~agent_backtest.formats.readings` keeps the most complete one and
fills what it lacks from the others, and the names are kept on the call so ``abt show
--explain`` can say who read what.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from agent_backtest.errors import RecordError
from agent_backtest.formats import (
    braintrust,
    genai_current,
    genai_events,
    google_genai,
    openinference,
    openllmetry,
    payloads,
    raw_bodies,
    vercel_ai,
)
from agent_backtest.formats.base import first_validation_error
from agent_backtest.formats.readings import Reading, combined
from agent_backtest.formats.span_model import Span
from agent_backtest.trace import LLMCall, ToolExecution, Unusable
from agent_backtest.trace.models import StepKind

LLM_OPERATIONS = ("chat", "text_completion", "generate_content", "completion", "responses")
AGENT_OPERATIONS = ("invoke_agent", "create_agent", "invoke_workflow")
TRACELOOP_KIND_KEY = "traceloop.span.kind"
# Attributes that say a span ran a whole agent (Pydantic AI's "agent run", Logfire).
AGENT_RUN_KEYS = ("pydantic_ai.all_messages", "all_messages_events", "agent_name")
# Evidence that a span is about a model call: what "LLM-looking" means for the accounting.
MODEL_KEYS = ("gen_ai.request.model", "gen_ai.response.model", "llm.model_name", "ai.model.id")
USAGE_PREFIXES = ("gen_ai.usage.", "llm.token_count.", "llm.usage.", "ai.usage.")
# Only a model call asks for a model; a span with usage alone may be a sum over calls.
REQUEST_MODEL_KEYS = ("gen_ai.request.model", "llm.request.model")
# Dotted parts of an attribute name that say it holds a prompt or an answer.
CONTENT_NAMES = frozenset(
    {"input", "output", "prompt", "prompts", "completion", "completions", "messages"}
)

# The dialects that read LLM calls, in the order they are asked.
CALL_DIALECTS: tuple[tuple[str, Any], ...] = (
    ("raw_bodies", raw_bodies),
    ("vercel_ai", vercel_ai),
    ("google_adk", google_genai),
    ("genai", genai_current),
    ("openinference", openinference),
    ("openllmetry", openllmetry),
    ("genai_events", genai_events),
    ("braintrust", braintrust),
    ("payload", payloads),
)
# Dialects that read the request and answer bodies as sent: their reading beats any other.
EXACT_DIALECTS = frozenset({"raw_bodies"})
TOOL_DIALECTS: tuple[tuple[str, Any], ...] = (
    ("vercel_ai", vercel_ai),
    ("genai", genai_current),
    ("openinference", openinference),
)


def step_kind(span: Span) -> StepKind:
    """What a span did: an LLM call, a tool execution, an agent invocation, or something else."""
    attributes = span.attributes
    ai_operation = vercel_ai.operation(attributes)
    if ai_operation is not None:
        # The AI SDK's outer spans are the turn; their doGenerate/doStream children the calls.
        if vercel_ai.is_model_call(attributes):
            return "llm"
        return "tool" if ai_operation == "ai.toolCall" else "agent"
    if span.kind_hint is not None:
        return span.kind_hint
    declared = braintrust.span_type(attributes)
    if declared is not None:
        return declared
    operation = attributes.get("gen_ai.operation.name")
    oi_kind = attributes.get("openinference.span.kind")
    traceloop = attributes.get(TRACELOOP_KIND_KEY)
    if (
        operation in LLM_OPERATIONS
        or oi_kind == "LLM"
        or genai_events.has_events(span)
        or raw_bodies.request_body(attributes) is not None
    ):
        return "llm"
    if operation == "execute_tool" or oi_kind == "TOOL" or traceloop == "tool":
        return "tool"
    if (
        operation in AGENT_OPERATIONS
        or oi_kind in ("AGENT", "CHAIN")
        or traceloop
        in (
            "agent",
            "workflow",
            "task",
        )
    ):
        return "agent"
    if any(key in attributes for key in AGENT_RUN_KEYS):
        return "agent"
    if (
        genai_current.claims(attributes)
        or openllmetry.claims(attributes)
        or google_genai.REQUEST_KEY in attributes
        or attributes.get("llm.request.type") in ("chat", "completion")
        or any(key in attributes for key in REQUEST_MODEL_KEYS)
        or (looks_like_llm(span) and _content_like_keys(attributes))
    ):
        # A message span without gen_ai.operation.name, or a call whose content was not
        # captured: a step, so that what keeps it from being a unit is counted.
        return "llm"
    return "other"


def looks_like_llm(span: Span) -> bool:
    """True when a span shows evidence of a model call: a model name or token usage."""
    attributes = span.attributes
    return any(key in attributes for key in MODEL_KEYS) or any(
        key.startswith(USAGE_PREFIXES) for key in attributes
    )


def call_readings(span: Span) -> tuple[list[Reading], list[str]]:
    """Every dialect's reading of an LLM span, in the order the dialects are asked, and a note
    for each dialect that found the span malformed.

    A malformed reading never hides another dialect's; when no dialect gives a reading, the
    first error is raised, so the span is skipped under that reason.
    """
    readings: list[Reading] = []
    errors: list[RecordError | ValidationError] = []
    notes = []
    for name, dialect in CALL_DIALECTS:
        try:
            call = dialect.llm_call(span)
        except RecordError as exc:
            errors.append(exc)
            notes.append(f"the {name} reading was left out: {exc.reason}: {exc.detail}")
            continue
        except ValidationError as exc:
            errors.append(exc)
            notes.append(f"the {name} reading was left out: {first_validation_error(exc)}")
            continue
        if call is not None:
            call.dialect = name
            keys = dialect.content_keys(span.attributes)
            readings.append(Reading(name, call, keys, exact=name in EXACT_DIALECTS))
    if not readings and errors:
        raise errors[0]
    return readings, notes


def read_call(span: Span) -> tuple[LLMCall, set[str], list[Reading]]:
    """The call of an LLM span, combined from every dialect that recognises it, with the
    attribute keys they read and their readings; a call with only metadata when none does."""
    found, notes = call_readings(span)
    if found:
        keys = set().union(*(reading.keys for reading in found))
        call = combined(found)
        call.notes.extend(notes)
        return call, keys, found
    if span.fallback is not None:
        fallback = span.fallback()
        if isinstance(fallback, LLMCall):
            return fallback, set(), []
    return unread_call(span), set(), []


def unread_call(span: Span) -> LLMCall:
    """The call of an LLM span no dialect recognises: its metadata, and a reason that names
    the evidence of a model call and what is missing."""
    attributes = span.attributes
    call = genai_current.metadata_only_call(attributes)
    call.dialect = "metadata"
    evidence = ", ".join(_evidence(attributes)) or span.name
    unread = _content_like_keys(attributes)
    if unread:
        call.unusable = Unusable(
            reason="unread_content",
            detail=f"records a model call ({evidence}) but keeps its content under attributes "
            f"no dialect reads: {', '.join(unread)}",
        )
    else:
        call.unusable = Unusable(
            reason="no_input_messages",
            detail=f"records a model call ({evidence}) but no messages in any place a dialect "
            "reads (gen_ai.input.messages, gen_ai.prompt.N.*, llm.input_messages.N.*, "
            "ai.prompt.messages, request_data, GenAI events); content capture may be off",
        )
    return call


def _evidence(attributes: dict[str, Any]) -> list[str]:
    """The attributes that show a span is about a model call, usage counted once."""
    found = [key for key in (*MODEL_KEYS, *REQUEST_MODEL_KEYS) if key in attributes]
    usage = sorted({p for key in attributes for p in USAGE_PREFIXES if key.startswith(p)})
    return list(dict.fromkeys(found)) + [f"{prefix}*" for prefix in usage]


def _content_like_keys(attributes: dict[str, Any]) -> list[str]:
    """Attribute keys whose names say they hold a prompt or an answer (``input``, ``output``,
    ``prompt``, ``completion``, ``messages`` as one of their dotted parts)."""
    return sorted(key for key in attributes if CONTENT_NAMES.intersection(key.split(".")))


def read_tool(span: Span) -> tuple[ToolExecution, set[str]]:
    """The execution of a tool span, named after the tool, with the keys the dialect consumed."""
    for _, dialect in TOOL_DIALECTS:
        tool = dialect.tool_execution(span)
        if tool is not None:
            return tool, dialect.content_keys(span.attributes)
    if span.fallback is not None:
        found = span.fallback()
        if isinstance(found, ToolExecution):
            return found, set()
    return ToolExecution(name=span.name), set()


def tool_dialect(span: Span) -> str:
    """The name of the dialect that reads a tool span."""
    for name, dialect in TOOL_DIALECTS:
        if dialect.tool_execution(span) is not None:
            return name
    return "payload" if span.fallback is not None else "span name"
