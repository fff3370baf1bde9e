"""Deterministic checks of a conversation, made before (and over) the judge.

Facts the recording states outright are not left to a model to notice:

* a **transport** failure (the conversation could not be completed) is ``uncertain`` and never
  judged: nothing the agent did was observed;
* an **expected tool neither offered nor called** fails, owned by ``agent_routing``: the model
  cannot call a tool it was never given;
* a **tool call its schema rejects** (arguments that are not JSON, or that the tool's JSON Schema
  refuses) fails, owned by ``model``;
* an **error the agent reported** (its own failure event, or the built-in agent loop stopped at
  its step limit) fails, owned by ``agent_execution``, with the agent's message (or the calls
  the loop made) as evidence: it comes before the empty-answer check, since a turn that crashed
  has no answer, and the crash is the finding, not how it was shown;
* an **empty final answer** fails, owned by ``agent_rendering``.

Users add their own checks as Python functions, named ``module:function``: each is called with
the flow and its conversation and returns a :class:`CheckFailure`, or None when the conversation
passes it. The first check that fails decides the verdict; the judge is still asked, and the
owner it gave is kept beside the check's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from agent_backtest.errors import UserError
from agent_backtest.plugins import load_object
from agent_backtest.simulate.models import ConversationRecord, Flow, TurnRecord
from agent_backtest.simulate.rubric import Owners
from agent_backtest.simulate.tool_schema import schema_problems
from agent_backtest.simulate.turn_errors import AGENT_ERROR_PREFIX, STEP_LIMIT
from agent_backtest.trace import ToolDef

ROUTING_OWNER = "agent_routing"
MODEL_OWNER = "model"
EXECUTION_OWNER = "agent_execution"
RENDERING_OWNER = "agent_rendering"
BUILT_IN_OWNERS = (ROUTING_OWNER, MODEL_OWNER, EXECUTION_OWNER, RENDERING_OWNER)
EVIDENCE_CHARS = 600


@dataclass(frozen=True)
class CheckFailure:
    """Why a conversation fails a check: who should fix it, the kind, the turns, the facts."""

    owner: str
    failure_category: str
    failed_turns: list[int]
    evidence: str


UserCheck = Callable[[Flow, ConversationRecord], CheckFailure | None]


@dataclass(frozen=True)
class NamedCheck:
    """A check and the name its verdicts record."""

    name: str
    run: UserCheck


def expected_tools_check() -> NamedCheck:
    """An expected tool that was neither called nor offered in any turn that says what it
    offered (a target that reports no offer leaves the question to the judge)."""

    def run(flow: Flow, conversation: ConversationRecord) -> CheckFailure | None:
        called = {call.name for turn in conversation.turns for call in turn.tool_calls}
        reported = [turn for turn in conversation.turns if turn.tools_offered is not None]
        if not reported:
            return None
        offered = {name for turn in reported for name in turn.tools_offered or ()}
        missing = [t for t in flow.expect_tools if t not in called and t not in offered]
        if not missing:
            return None
        turns = [turn.index for turn in reported]
        return CheckFailure(
            ROUTING_OWNER,
            "expected_tool_not_offered",
            turns,
            f"{', '.join(missing)} was expected but neither offered nor called in turns "
            f"{', '.join(map(str, turns))}",
        )

    return NamedCheck("expected_tool_not_offered", run)


def tool_schema_check(tools: Sequence[ToolDef] | None) -> NamedCheck:
    """A call whose arguments are not JSON, or that its tool's schema (when known) refuses."""
    schemas = {tool.name: tool.parameters for tool in tools or () if tool.parameters}

    def run(flow: Flow, conversation: ConversationRecord) -> CheckFailure | None:
        failed: list[int] = []
        facts: list[str] = []
        for turn in conversation.turns:
            for call in turn.tool_calls:
                if isinstance(call.arguments, str):
                    problems = ["arguments are not a JSON object"]
                elif call.name in schemas:
                    problems = schema_problems(call.arguments or {}, schemas[call.name])
                else:
                    continue
                if problems:
                    failed.append(turn.index)
                    facts.append(f"turn {turn.index} called {call.name}: {'; '.join(problems)}")
        if not facts:
            return None
        return CheckFailure(
            MODEL_OWNER,
            "tool_call_rejected_by_schema",
            sorted(set(failed)),
            _bounded("; ".join(facts)),
        )

    return NamedCheck("tool_call_rejected_by_schema", run)


def agent_error_check() -> NamedCheck:
    """A turn in which the agent reported its own failure: ``step_limit`` when the built-in
    agent loop stopped at its limit (with the calls it made), else ``agent_reported_error``
    with the agent's message."""

    def run(flow: Flow, conversation: ConversationRecord) -> CheckFailure | None:
        failed = [turn for turn in conversation.turns if turn.error]
        if not failed:
            return None
        messages = [(turn, (turn.error or "").removeprefix(AGENT_ERROR_PREFIX)) for turn in failed]
        limited = [(turn, said) for turn, said in messages if said.startswith(f"{STEP_LIMIT}:")]
        if limited:
            facts = [f"turn {turn.index}: {said}; {_calls_made(turn)}" for turn, said in limited]
            turns = [turn.index for turn, _ in limited]
            return CheckFailure(EXECUTION_OWNER, STEP_LIMIT, turns, _bounded("; ".join(facts)))
        facts = [f"turn {turn.index}: the agent reported: {said}" for turn, said in messages]
        return CheckFailure(
            EXECUTION_OWNER,
            "agent_reported_error",
            [turn.index for turn in failed],
            _bounded("; ".join(facts)),
        )

    return NamedCheck("agent_reported_error", run)


def _calls_made(turn: TurnRecord) -> str:
    """The tool calls of a turn, counted by name in the order first made."""
    counted = Counter(call.name for call in turn.tool_calls)
    if not counted:
        return "it called no tool"
    return "it called " + ", ".join(
        f"{name} ×{count}" if count > 1 else name for name, count in counted.items()
    )


def empty_answer_check() -> NamedCheck:
    """A turn that ended with no final text for the user."""

    def run(flow: Flow, conversation: ConversationRecord) -> CheckFailure | None:
        empty = [t.index for t in conversation.turns if not (t.final_text or "").strip()]
        if not empty:
            return None
        return CheckFailure(
            RENDERING_OWNER,
            "empty_final_answer",
            empty,
            f"turn(s) {', '.join(map(str, empty))} ended with an empty final answer",
        )

    return NamedCheck("empty_final_answer", run)


def transport_failure(conversation: ConversationRecord) -> str | None:
    """Why the conversation could not be completed, when it could not (it is never judged)."""
    return conversation.transport_error


def load_check(name: str) -> NamedCheck:
    """The user's check ``module:function``; an unusable name is a user error."""
    if ":" not in name:
        raise UserError(f"{name!r}: name a check as module:function", "checks")
    found = load_object(name, repr(name), "checks")
    return NamedCheck(name, found)


def all_checks(
    tools: Sequence[ToolDef] | None, user_checks: Sequence[str], owners: Owners
) -> list[NamedCheck]:
    """The built-in checks, then the user's, in the order they are tried."""
    missing = [owner for owner in BUILT_IN_OWNERS if owner not in owners.names]
    if missing:
        raise UserError(
            f"the owners lack {', '.join(missing)}, which the built-in checks assign: "
            "keep them in the owners file",
            "owners",
        )
    built_in = [
        expected_tools_check(),
        tool_schema_check(tools),
        agent_error_check(),
        empty_answer_check(),
    ]
    return built_in + [load_check(name) for name in user_checks]


def first_failure(
    checks: Sequence[NamedCheck], flow: Flow, conversation: ConversationRecord, owners: Owners
) -> tuple[str, CheckFailure] | None:
    """The first check the conversation fails and why; a check that breaks is a user error."""
    for check in checks:
        try:
            failure = check.run(flow, conversation)
        except Exception as exc:
            raise UserError(
                f"check {check.name} raised {type(exc).__name__} on flow {flow.id}: {exc}",
                "checks",
            ) from None
        if failure is None:
            continue
        _validate(check.name, failure, owners, len(conversation.turns))
        return check.name, failure
    return None


def _validate(name: str, failure: object, owners: Owners, turns: int) -> None:
    """A check's failure names an owner of the taxonomy, a category, real turns and evidence."""
    if not isinstance(failure, CheckFailure):
        raise UserError(
            f"check {name} returned {type(failure).__name__}: return a CheckFailure or None",
            "checks",
        )
    problems = []
    if failure.owner not in owners.of_failures():
        problems.append(f"owner {failure.owner!r} is not one of {owners.of_failures()}")
    if not failure.failure_category.strip():
        problems.append("failure_category is empty")
    if not failure.evidence.strip():
        problems.append("evidence is empty")
    if any(not 1 <= turn <= max(turns, 1) for turn in failure.failed_turns):
        problems.append(f"failed_turns {failure.failed_turns} are not turns 1 to {turns}")
    if problems:
        raise UserError(f"check {name}: {'; '.join(problems)}", "checks")


def _bounded(text: str) -> str:
    """Evidence cut to a readable length."""
    return text if len(text) <= EVIDENCE_CHARS else text[: EVIDENCE_CHARS - 1] + "…"
