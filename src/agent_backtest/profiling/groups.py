"""Which group a session belongs to: by session, agent, model, or a named variant.

A variant is named by ``NAME=SELECTOR``; a selector is one or more conditions joined by commas,
each ``FIELD=GLOB`` (matches) or ``FIELD!=GLOB`` (does not match), all of which must hold. For a
field with several values in a session (``model``, ``tool``) ``=`` means any value matches and
``!=`` that none does. A field the session did not record matches no glob.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase

import orjson

from agent_backtest.errors import InputError, UserError
from agent_backtest.profiling.cases import RunAnnotation
from agent_backtest.profiling.facts import model_of, tool_name_of
from agent_backtest.runs.profile import GroupBy
from agent_backtest.trace import Session

FIELDS = (
    "agent",
    "agent_version",
    "model",
    "tool",
    "session",
    "file",
    "format",
    "case",
    "run_variant",
)
NO_LLM_CALLS = "(no LLM calls)"
NO_AGENT = "(agent not recorded)"


@dataclass(frozen=True)
class SessionFacts:
    """What selectors and group keys look at in a session, read once."""

    session: Session
    file: str
    format: str
    annotation: RunAnnotation | None

    def values(self, field: str) -> list[str]:
        """The session's values of a selector field (none when not recorded)."""
        session, agent = self.session, self.session.agent
        if field.startswith("meta."):
            return _metadata(session.metadata, field.removeprefix("meta."))
        single = {
            "agent": agent.name if agent else None,
            "agent_version": agent.version if agent else None,
            "session": session.id,
            "file": self.file,
            "format": self.format,
            "case": self.annotation.case_id if self.annotation else None,
            "run_variant": self.annotation.variant if self.annotation else None,
        }
        if field in single:
            return [single[field]] if single[field] is not None else []
        steps = session.steps()
        if field == "model":
            return sorted({model_of(step) for step in steps if step.kind == "llm"})
        return sorted({tool_name_of(step) for step in steps if step.kind == "tool"})


def _metadata(metadata: dict[str, object], key: str) -> list[str]:
    """A session metadata value as text (JSON for non-strings), or none."""
    if key not in metadata or metadata[key] is None:
        return []
    value = metadata[key]
    return [value if isinstance(value, str) else orjson.dumps(value).decode()]


@dataclass(frozen=True)
class Condition:
    """One ``FIELD=GLOB`` or ``FIELD!=GLOB``."""

    field: str
    glob: str
    negated: bool

    def holds(self, facts: SessionFacts) -> bool:
        """True when the session satisfies the condition."""
        matched = any(fnmatchcase(value, self.glob) for value in facts.values(self.field))
        return matched != self.negated


@dataclass(frozen=True)
class Variant:
    """A named variant and the conditions its sessions meet."""

    name: str
    conditions: tuple[Condition, ...]

    def holds(self, facts: SessionFacts) -> bool:
        """True when the session belongs to the variant."""
        return all(condition.holds(facts) for condition in self.conditions)


def parse_variant(text: str) -> Variant:
    """A ``NAME=SELECTOR`` option value as a variant; an error names what is wrong."""
    name, _, selector = text.partition("=")
    if not name or not selector:
        raise _bad(text, "expected NAME=SELECTOR, e.g. v2=agent_version=2.*")
    return Variant(name, tuple(_condition(text, part) for part in selector.split(",")))


def _condition(text: str, part: str) -> Condition:
    """One ``FIELD=GLOB`` or ``FIELD!=GLOB`` of a selector."""
    negated = "!=" in part
    field, _, glob = part.partition("!=" if negated else "=")
    field = field.strip()
    if not glob:
        raise _bad(text, f"condition {part!r} is not FIELD=GLOB or FIELD!=GLOB")
    if field not in FIELDS and not (field.startswith("meta.") and len(field) > 5):
        raise _bad(text, f"unknown field {field!r}; one of: {', '.join(FIELDS)}, meta.KEY")
    return Condition(field, glob, negated)


def parse_variants(texts: Iterable[str]) -> list[Variant]:
    """Every ``--variant`` value, with distinct names."""
    variants = [parse_variant(text) for text in texts]
    names = [variant.name for variant in variants]
    for name in names:
        if names.count(name) > 1:
            raise UserError(f"variant {name!r} is named twice", "variants")
    return variants


def _bad(text: str, why: str) -> InputError:
    """The error for a ``--variant`` value that cannot be read."""
    return UserError(f"{text!r}: {why}", "variants")


def group_key(group_by: GroupBy, facts: SessionFacts, variants: Sequence[Variant]) -> str | None:
    """The session's group, or None when it is in no variant."""
    if group_by == "session":
        return facts.session.id
    if group_by == "agent":
        return _agent_key(facts)
    if group_by == "model":
        return "+".join(facts.values("model")) or NO_LLM_CALLS
    return _variant_key(facts, variants)


def _agent_key(facts: SessionFacts) -> str:
    """``name@version`` of the session's agent, or that it was not recorded."""
    agent = facts.session.agent
    if agent is None or not agent.name:
        return NO_AGENT
    return f"{agent.name}@{agent.version}" if agent.version else agent.name


def _variant_key(facts: SessionFacts, variants: Sequence[Variant]) -> str | None:
    """The one variant the session matches (None for none; two is an error)."""
    if not variants:
        return facts.annotation.variant if facts.annotation else None
    matched = [variant.name for variant in variants if variant.holds(facts)]
    if len(matched) > 1:
        raise UserError(
            f"session {facts.session.id!r} matches variants "
            f"{' and '.join(matched)}; make the selectors exclusive",
            "variants",
        )
    return matched[0] if matched else None
