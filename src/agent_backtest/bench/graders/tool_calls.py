"""The ``tool_calls`` grader: did the episode make the gold's expected tool calls?

Each gold action is compared with the tool calls the environment ran, through the scoring
matcher (:func:`agent_backtest.scoring.calls.match_calls`, with the action's answer key when it
has one, else its arguments as the one right value), under the schemas of the environment's
tools. A call matches when the matcher finds it equal. Other calls (look-ups, say) are allowed.

With ``actions_in_order`` the gold actions must be made in their order: the value is the share
of them matched, in order, from the first (a greedy earliest match, which finds the longest such
run). Otherwise they are a set: the value is the share matched one to one by a maximum matching.

With ``only_these_calls`` the calls must be the gold actions and nothing else, as BFCL grades
an answer: the whole answer goes through the matcher at once (its optimal pairing, its missing
and extra calls), and the value is the share of equal pairs among the larger of the two counts,
1 only when the answer equals the gold.
"""

from __future__ import annotations

from typing import Any

from agent_backtest.bench.graders import Component, GradingInput
from agent_backtest.bench.models import GoldAction
from agent_backtest.scoring.calls import match_calls
from agent_backtest.trace import ToolCall, ToolDef
from agent_backtest.trace.openai_wire import tool_call_from_openai, tool_def_from_openai
from agent_backtest.units.agent_config import AgentConfig

_AGENT = AgentConfig()


def grade(given: GradingInput) -> Component:
    """The share of gold actions the episode made (1 when all were, in order if required)."""
    actions = given.gold.actions
    if not actions:
        return Component(None, "the gold lists no actions")
    calls = ran_calls(given.messages)
    tools = {tool.name: tool for tool in _tools(given)}
    if given.gold.only_these_calls:
        return _exactly(actions, calls, tools)
    matches = [[_matches(action, call, tools) for call in calls] for action in actions]
    if given.gold.actions_in_order:
        found = _in_order(matches)
        missing = actions[found] if found < len(actions) else None
    else:
        paired = _as_set(matches)
        found = len(paired)
        missing = next((a for i, a in enumerate(actions) if i not in paired), None)
    value = found / len(actions)
    if missing is None:
        return Component(value)
    order = " in order" if given.gold.actions_in_order else ""
    return Component(
        value, f"{found} of {len(actions)} expected calls made{order}; not {missing.name}"
    )


def ran_calls(messages: list[dict[str, Any]]) -> list[ToolCall]:
    """The tool calls of the transcript's assistant messages (the ones the environment ran)."""
    return [
        tool_call_from_openai(raw)
        for message in messages
        if message.get("role") == "assistant"
        for raw in message.get("tool_calls") or []
    ]


def _tools(given: GradingInput) -> list[ToolDef]:
    """The tools the episode's agent was offered: a fresh environment's, reset to the case
    (some environments offer each case its own)."""
    environment = given.new_environment()
    environment.reset(given.case)
    return [tool_def_from_openai(tool) for tool in environment.tools()]


def _exactly(
    actions: list[GoldAction], calls: list[ToolCall], tools: dict[str, ToolDef]
) -> Component:
    """The answer against the gold actions as a whole: the same calls, no more, no fewer."""
    golden = [ToolCall(name=action.name, arguments=action.arguments) for action in actions]
    keys = [action.key for action in actions]
    verdict = match_calls(golden, calls, tools, _AGENT, answer_key=keys if all(keys) else None)
    if verdict.equal:
        return Component(1.0)
    equal = sum(1 for pair in verdict.pairs if pair.arguments is not None and pair.arguments.equal)
    problems = []
    if verdict.missing:
        problems.append(f"{len(verdict.missing)} expected calls not made")
    if verdict.extra:
        problems.append(f"{len(verdict.extra)} calls beyond the expected")
    if equal < len(verdict.pairs):
        problems.append(f"{len(verdict.pairs) - equal} calls with other arguments")
    return Component(equal / max(len(actions), len(calls)), "; ".join(problems))


def _matches(action: GoldAction, call: ToolCall, tools: dict[str, ToolDef]) -> bool:
    """True when ``call`` is an acceptable form of the gold ``action``."""
    golden = ToolCall(name=action.name, arguments=action.arguments)
    key = [action.key] if action.key is not None else None
    verdict = match_calls([golden], [call], tools, _AGENT, answer_key=key)
    return verdict.equal


def _in_order(matches: list[list[bool]]) -> int:
    """How many gold actions, from the first, match calls in the same order."""
    position = 0
    for found, row in enumerate(matches):
        later = [j for j in range(position, len(row)) if row[j]]
        if not later:
            return found
        position = later[0] + 1
    return len(matches)


def _as_set(matches: list[list[bool]]) -> dict[int, int]:
    """A maximum one-to-one matching of gold actions to calls (augmenting paths)."""
    owner: dict[int, int] = {}  # call → action

    def place(action: int, seen: set[int]) -> bool:
        for call, ok in enumerate(matches[action]):
            if ok and call not in seen:
                seen.add(call)
                if call not in owner or place(owner[call], seen):
                    owner[call] = action
                    return True
        return False

    for action in range(len(matches)):
        place(action, set())
    return {action: call for call, action in owner.items()}
