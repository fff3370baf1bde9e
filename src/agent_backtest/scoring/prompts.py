"""The judge's prompt templates, and the trace data they are filled with.

A template is a versioned package file, ``prompts/<name>.<version>.md``, with three sections
opened by marker lines: ``<!-- abt:system -->``, ``<!-- abt:user -->`` and
``<!-- abt:correction -->`` (the request sent once more when an answer is not a valid verdict).
Placeholders are :class:`string.Template` ``${name}``s, filled in one pass, so a ``$`` in trace
text is never expanded. The template's sha256 goes into every verdict.

Everything taken from a trace goes into a block between ``[BEGIN name TAG]`` and ``[END name TAG]``
lines. TAG is a hash of the item's own data: it is the same on every rerun (so the judge's
answer is cached) and cannot be written into a trace in advance, so text inside a block cannot
close it.

How much of the conversation the judge sees (the limits are characters, not tokens):

- the agent's instructions (its first system or developer message): the first
  ``INSTRUCTIONS_CHARS`` characters;
- the last ``TAIL_MESSAGES`` other messages, and always the last user message even when it is
  older; each message clipped to ``MESSAGE_CHARS`` (its start and end kept);
- at most ``CONTEXT_CHARS`` for those messages together: the oldest are left out first, never
  the last user message. Left-out messages are counted in the text.

The graded values are clipped to ``VALUE_CHARS`` each and the tool description to ``TOOL_CHARS``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from string import Template
from typing import Any

from agent_backtest.redaction import mask_secrets
from agent_backtest.trace import Message, ToolDef

PROMPT_DIR = Path(__file__).with_name("prompts")
TEXT_ANSWER = "text_answer"
FREE_TEXT_ARGUMENT = "free_text_argument"
CURRENT_VERSION = "v1"

SECTIONS = ("system", "user", "correction")
INSTRUCTIONS_CHARS = 2_000
TAIL_MESSAGES = 6
MESSAGE_CHARS = 1_500
CONTEXT_CHARS = 8_000
VALUE_CHARS = 6_000
TOOL_CHARS = 1_500
ANSWER_QUOTE_CHARS = 2_000
TAG_CHARS = 12


@dataclass(frozen=True)
class PromptTemplate:
    """One version of one judge prompt: its sections and the hash of its file."""

    name: str
    version: str
    sha256: str
    system: Template
    user: Template
    correction: Template

    @property
    def id(self) -> str:
        """``name@version``, as verdicts record it."""
        return f"{self.name}@{self.version}"


@dataclass(frozen=True)
class RenderedPrompt:
    """A filled-in prompt: the two messages to send, and the tag its data blocks carry."""

    template: PromptTemplate
    system: str
    user: str
    tag: str

    def correction(self, answer: str, problem: str) -> str:
        """The request sent after an invalid ``answer``: it quotes it and says what was wrong."""
        return self.template.correction.substitute(
            tag=self.tag,
            problem=problem,
            answer=block("previous_answer", clip(answer, ANSWER_QUOTE_CHARS), self.tag),
        )


@cache
def load_template(
    name: str, version: str = CURRENT_VERSION, directory: Path = PROMPT_DIR
) -> PromptTemplate:
    """The template ``name`` at ``version`` from the prompt files of ``directory`` (the
    scoring judge's by default; simulate keeps its rubric beside its own code)."""
    path = directory / f"{name}.{version}.md"
    if not path.is_file():
        known = sorted(p.name for p in directory.glob("*.md"))
        raise ValueError(f"no judge prompt {name}@{version} (known: {', '.join(known)})")
    raw = path.read_bytes()
    sections = split_sections(raw.decode("utf-8"), path.name)
    return PromptTemplate(
        name,
        version,
        "sha256:" + hashlib.sha256(raw).hexdigest(),
        *(Template(sections[s]) for s in SECTIONS),
    )


def split_sections(text: str, where: str) -> dict[str, str]:
    """The text under each ``<!-- abt:NAME -->`` marker line; anything before the first is a
    comment for people."""
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("<!-- abt:") and stripped.endswith("-->"):
            current = sections.setdefault(stripped[len("<!-- abt:") : -3].strip(), [])
        elif current is not None:
            current.append(line)
    missing = [s for s in SECTIONS if s not in sections]
    if missing:
        raise ValueError(f"judge prompt {where} lacks section(s) {', '.join(missing)}")
    return {name: "\n".join(lines).strip() for name, lines in sections.items()}


def render(template: PromptTemplate, data: dict[str, str]) -> RenderedPrompt:
    """Fill ``template`` with trace ``data`` (placeholder → text), each value in its own block;
    values shaped like credentials are masked (the judge grades answers, and needs no key)."""
    data = {name: mask_secrets(text) for name, text in data.items()}
    tag = data_tag(data)
    blocks = {name: block(name, text, tag) for name, text in data.items()}
    return RenderedPrompt(
        template,
        template.system.substitute(tag=tag),
        template.user.substitute(blocks, tag=tag),
        tag,
    )


def data_tag(data: dict[str, str]) -> str:
    """A tag no block's text contains, derived from the text itself (stable across reruns)."""
    seed = json.dumps(data, sort_keys=True, ensure_ascii=False)
    for salt in range(100):
        tag = hashlib.sha256(f"{salt}:{seed}".encode()).hexdigest()[:TAG_CHARS]
        if all(tag not in text for text in data.values()):
            return tag
    raise ValueError("could not find a data tag absent from the judged text")


def block(name: str, text: str, tag: str) -> str:
    """``text`` between its BEGIN and END marker lines."""
    return f"[BEGIN {name} {tag}]\n{text}\n[END {name} {tag}]"


def clip(text: str, limit: int) -> str:
    """``text`` cut to about ``limit`` characters, its start and end kept and the cut counted."""
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    tail = limit - head
    return f"{text[:head]}\n[… {len(text) - head - tail} characters left out …]\n{text[-tail:]}"


def value_text(value: Any) -> str:
    """A graded value as the judge reads it: strings as they are, anything else as JSON."""
    if value is None:
        return "(no value: the parameter was left out)"
    if isinstance(value, str):
        return clip(value, VALUE_CHARS) if value else "(an empty string)"
    return clip(json.dumps(value, ensure_ascii=False, sort_keys=True), VALUE_CHARS)


def context_text(messages: list[Message]) -> str:
    """The bounded tail of the conversation the model saw (limits in the module docstring)."""
    instructions = next((m for m in messages if m.role in ("system", "developer")), None)
    rest = [m for m in messages if m.role not in ("system", "developer")]
    kept = _tail_indexes(rest)
    rendered = {i: message_text(rest[i], MESSAGE_CHARS) for i in kept}
    last_user = max((i for i in kept if rest[i].role == "user"), default=None)
    while sum(len(t) for t in rendered.values()) > CONTEXT_CHARS and len(rendered) > 1:
        oldest = min(i for i in rendered if i != last_user)
        del rendered[oldest]
    parts = []
    if instructions is not None:
        parts.append(f"(agent instructions) {clip(instructions.text(), INSTRUCTIONS_CHARS)}")
    parts.extend(_with_gaps(rendered))
    return "\n\n".join(parts) if parts else "(no conversation was recorded)"


def _tail_indexes(rest: list[Message]) -> list[int]:
    """The indexes of the last messages, plus the last user message when it is older."""
    kept = list(range(max(0, len(rest) - TAIL_MESSAGES), len(rest)))
    users = [i for i, m in enumerate(rest) if m.role == "user"]
    if users and users[-1] not in kept:
        kept.insert(0, users[-1])
    return kept


def _with_gaps(rendered: dict[int, str]) -> list[str]:
    """The kept messages in order, with a note where messages between them were left out."""
    out: list[str] = []
    previous = -1
    for index in sorted(rendered):
        if index - previous > 1:
            out.append(f"[{index - previous - 1} message(s) left out]")
        out.append(rendered[index])
        previous = index
    return out


def message_text(message: Message, limit: int) -> str:
    """One message as ``role: text``, tool calls and non-text parts named."""
    label = message.role
    if message.role == "tool":
        label = f"tool result ({message.name or message.tool_call_id or 'unnamed'})"
    lines = [message.text()] if message.text() else []
    if isinstance(message.content, list):
        lines += [f"[{part.type} part]" for part in message.content if part.text is None]
    for call in message.tool_calls or []:
        arguments = (
            call.arguments_raw
            if call.arguments_raw is not None
            else json.dumps(call.arguments, ensure_ascii=False, sort_keys=True)
        )
        lines.append(f"→ calls tool {call.name} with {arguments}")
    return f"{label}: {clip(chr(10).join(lines), limit) if lines else '(empty)'}"


def tool_text(tool: ToolDef | None, param: str) -> str:
    """The tool's name and description and the parameter's schema, as far as they are known."""
    lines = [f"tool: {tool.name}" if tool else "tool: (definition not recorded)"]
    if tool is not None and tool.description:
        lines.append(f"description: {clip(tool.description, TOOL_CHARS)}")
    lines.append(f"parameter: {param}")
    schema = parameter_schema(tool, param)
    if schema is not None:
        lines.append(
            "parameter schema: "
            + clip(json.dumps(schema, ensure_ascii=False, sort_keys=True), TOOL_CHARS)
        )
    return "\n".join(lines)


def parameter_schema(tool: ToolDef | None, param: str) -> dict[str, Any] | None:
    """The JSON Schema of ``param`` (a name, or a dotted path into nested objects), if known."""
    schema: Any = tool.parameters if tool is not None else None
    for part in param.split("."):
        if not isinstance(schema, dict):
            return None
        if part.isdigit():  # a list position: every element has the items schema
            schema = schema.get("items")
            continue
        if schema.get("type") == "array" and isinstance(schema.get("items"), dict):
            schema = schema["items"]
        properties = schema.get("properties")
        schema = properties.get(part) if isinstance(properties, dict) else None
    return schema if isinstance(schema, dict) else None
