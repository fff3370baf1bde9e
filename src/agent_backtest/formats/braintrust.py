"""Span exports that carry their own input and output attributes (Braintrust's ``braintrust.*``).

Braintrust's SDK and span processor write a span's fields as attributes: ``braintrust.input_json``
and ``braintrust.output_json`` (or ``braintrust.input``/``braintrust.output``) hold the request
and the answer in any chat shape, ``braintrust.metadata`` the model and settings,
``braintrust.metrics`` the token counts and ``braintrust.span_attributes`` the span's type
(``llm``, ``tool``, ``task``, …). The payloads are read as a source's own input and output.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from agent_backtest.formats import genai_current, payloads
from agent_backtest.formats.messages import decoded
from agent_backtest.trace import LLMCall, Usage
from agent_backtest.trace.models import StepKind
from agent_backtest.trace.openai_wire import WIRE_PARAMS

if TYPE_CHECKING:
    from agent_backtest.formats.span_model import Span

INPUT_KEYS = ("braintrust.input_json", "braintrust.input")
OUTPUT_KEYS = ("braintrust.output_json", "braintrust.output")
CONTENT_KEYS = (*INPUT_KEYS, *OUTPUT_KEYS, "braintrust.metadata", "braintrust.metrics")
# Braintrust span types → step kinds.
KINDS: dict[str, StepKind] = {
    "llm": "llm",
    "tool": "tool",
    "task": "agent",
    "function": "agent",
    "eval": "agent",
}


def content_keys(attributes: dict[str, Any]) -> set[str]:
    """The attribute keys this dialect turns into the call (not kept twice in the step)."""
    return {key for key in CONTENT_KEYS if key in attributes}


def span_type(attributes: dict[str, Any]) -> StepKind | None:
    """The step kind ``braintrust.span_attributes`` names, if any."""
    value = decoded(attributes.get("braintrust.span_attributes"))
    kind = value.get("type") if isinstance(value, dict) else None
    return KINDS.get(kind) if isinstance(kind, str) else None


def llm_call(span: Span) -> LLMCall | None:
    """The call a span records in ``braintrust.*`` attributes, or None when it has none."""
    attributes = span.attributes
    found_input = next((attributes[k] for k in INPUT_KEYS if k in attributes), None)
    found_output = next((attributes[k] for k in OUTPUT_KEYS if k in attributes), None)
    if found_input is None and found_output is None:
        return None
    metadata = decoded(attributes.get("braintrust.metadata"))
    metadata = metadata if isinstance(metadata, dict) else {}
    inner = replace(span, input=decoded(found_input), output=decoded(found_output))
    call = payloads.llm_call(inner)
    if call is None:
        return None
    model = metadata.get("model")
    call.request.model = call.request.model or (model if isinstance(model, str) else None)
    # The metadata holds the request's settings beside other keys; only the API's are settings.
    settings = {k: v for k, v in metadata.items() if k in WIRE_PARAMS and v is not None}
    call.request.params = {**settings, **call.request.params}
    if call.response is not None and call.response.usage is None:
        call.response.usage = _usage(decoded(attributes.get("braintrust.metrics")))
    return call


def _usage(metrics: Any) -> Usage | None:
    """``braintrust.metrics`` token counts."""
    if not isinstance(metrics, dict):
        return None
    to_int = genai_current.to_int
    found = Usage(
        input_tokens=to_int(metrics.get("prompt_tokens"), "prompt_tokens"),
        output_tokens=to_int(metrics.get("completion_tokens"), "completion_tokens"),
        total_tokens=to_int(metrics.get("tokens"), "tokens"),
        cached_input_tokens=to_int(metrics.get("prompt_cached_tokens"), "prompt_cached_tokens"),
        reasoning_tokens=to_int(
            metrics.get("completion_reasoning_tokens"), "completion_reasoning_tokens"
        ),
    )
    return None if found == Usage() else found
