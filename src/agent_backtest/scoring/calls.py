"""Matching the tool calls of one answer: golden calls against candidate calls, as a set.

Each golden call's arguments are the reference the candidate's are compared with: the golden's
answer key when it has one (every acceptable form of the call), else production's recorded
arguments (one value each); :func:`~agent_backtest.scoring.arguments.match_arguments` scores
both alike. The calls of one answer (parallel calls) are paired one to one by an optimal
assignment that maximises the total argument score, preferring same-tool pairs among equally
good pairings; a call left over on either side is missing or extra. A pair of different tools
(outside an equivalence group) scores 0 and carries no argument verdict.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

import orjson

from agent_backtest.scoring.arguments import (
    ArgumentsKey,
    ArgumentsMatch,
    MatchRules,
    Unparseable,
    compile_key,
    golden_key,
    match_arguments,
    rules_for,
    tally_parameters,
)
from agent_backtest.scoring.assignment import (
    SLACK,
    best_assignment,
    lazy_best_assignment,
    within_row_bound,
)
from agent_backtest.trace.models import ToolCall, ToolDef
from agent_backtest.units.agent_config import AgentConfig
from agent_backtest.units.answer_key import CallKey

__all__ = [
    "CallPair",
    "CallsMatch",
    "call_arguments",
    "clear_memos",
    "match_calls",
    "tool_names_equal",
]

# Among pairings of equal total score, one more same-tool pair is worth this much: far below
# the difference between two unequal totals of argument scores in answers of any realistic size
# (scores are fractions with small denominators, the parameter counts), so it only breaks ties.
_SAME_TOOL_BONUS = 1e-6


@dataclass(slots=True)
class CallPair:
    """One golden call paired with one candidate call (indexes into the two lists)."""

    golden: int
    candidate: int
    same_tool: bool
    arguments: ArgumentsMatch | None


@dataclass(slots=True)
class CallsMatch:
    """The verdict on all tool calls of one answer."""

    pairs: list[CallPair]
    missing: list[int]
    extra: list[int]
    exact: bool
    equal: bool
    score: float


def tool_names_equal(a: str, b: str, agent: AgentConfig) -> bool:
    """True when two tool names are the same or in one of the config's equivalence groups."""
    if a == b:
        return True
    return any(a in group and b in group for group in agent.equivalent_tools)


def call_arguments(call: ToolCall) -> Any:
    """The arguments to compare: parsed JSON, ``{}`` when none, :class:`Unparseable` if broken."""
    if call.arguments is None:
        if call.arguments_raw is not None:
            return Unparseable(call.arguments_raw, call.arguments_error)
        return {}
    return call.arguments


def golden_key_of(call: ToolCall) -> Any:
    """A recorded call's arguments as a reference: :func:`golden_key` of an object, else the
    value as recorded (compared whole) or :class:`Unparseable`."""
    arguments = call_arguments(call)
    return golden_key(arguments) if type(arguments) is dict else arguments


def match_calls(
    golden: Sequence[ToolCall],
    candidate: Sequence[ToolCall],
    tools: Mapping[str, ToolDef],
    agent: AgentConfig,
    exact_strings: bool = False,
    answer_key: Sequence[CallKey] | None = None,
) -> CallsMatch:
    """Match the candidate's calls of one answer against the golden's, as a set.

    ``answer_key`` holds one key per golden call, in order (the golden's calls are then only
    their names); without one, each golden call's recorded arguments are its reference.
    Arguments are compared under the rules of the golden call's tool (its schema from ``tools``
    and the agent config); see :mod:`agent_backtest.scoring.arguments`. Prose is detected only
    against recorded arguments: a key's listed values are acceptable as they are.
    """
    recorded = answer_key is None
    # Each golden call's reference and rules are made once, not once per candidate call.
    source = golden if recorded else answer_key
    known = _KEYS.get(id(source))
    if known is None or known.source is not source or known.golden is not golden:
        known = _references(source, golden, recorded, known)
    references = known.references
    if len(golden) == 1 and len(candidate) == 1 and golden[0].name == candidate[0].name:
        # One call each, to the same tool (most answers): straight to its verdict.
        call = candidate[0]
        reference = references[0]
        rules = _rules(tools, call.name, call.name, agent, exact_strings, recorded)
        arguments = call.arguments
        if type(arguments) is dict and type(reference) is ArgumentsKey:
            verdict = tally_parameters(reference, arguments, rules, False, False)
        else:
            if arguments is None:
                arguments = call_arguments(call)
            verdict = match_arguments(reference, arguments, rules)
        return CallsMatch(
            [CallPair(0, 0, True, verdict)], [], [], verdict.exact, verdict.equal, verdict.score
        )
    if len(golden) > 1 and len(candidate) > 1 and not agent.equivalent_tools:
        verdict = _parallel(known, candidate, tools, agent, exact_strings, recorded)
        if verdict is not None:
            return verdict
    return _several(golden, candidate, references, tools, agent, exact_strings, recorded)


class _Golden:
    """What one answer's golden side gives every candidate it is matched with: each golden
    call's reference and name, made once per unit rather than once per answer."""

    __slots__ = ("all_keys", "at", "golden", "names", "references", "source")

    def __init__(
        self,
        source: Sequence[Any],
        golden: Sequence[ToolCall],
        recorded: bool,
        references: list[Any] | None = None,
    ) -> None:
        """The references of ``source`` (:func:`golden_key_of` each ``recorded`` golden call,
        else :func:`compile_key` of each call's key), unless given, and the names of
        ``golden``'s calls."""
        self.source = source  # held, with golden, so their ids are not reused
        self.golden = golden
        if references is None:
            if recorded:
                references = [golden_key_of(call) for call in source]
            else:
                references = [compile_key(key.arguments) for key in source]
        self.references = references
        # What the pairing of parallel calls reads, made only for a golden of several calls
        # (most goldens have one, and one call each goes straight to its comparison).
        self.names: list[str] = []
        self.all_keys = False
        self.at: dict[str, int] | None = None
        if len(golden) > 1:
            self.names = list(map(_NAME, golden))
            self.all_keys = all(type(reference) is ArgumentsKey for reference in references)
            # Each name's call, for pairing by names; None when a tool is called twice (the
            # names then cannot settle a pairing).
            at = dict(zip(self.names, range(len(self.names)), strict=True))
            self.at = at if len(at) == len(self.names) else None


# The golden side is memoised by the identity of the unit's key or golden calls, held so the id
# is not reused (neither is changed once loaded): a unit's reference is scored against every
# repeat of its unit.
_KEYS: dict[int, _Golden] = {}


def _references(
    source: Sequence[Any], golden: Sequence[ToolCall], recorded: bool, before: _Golden | None
) -> _Golden:
    """The golden side of ``source`` and ``golden``, made and memoised; the references of
    ``before`` are kept when it was made from the same ``source`` (an answer key met again
    with another list of golden calls)."""
    same = before is not None and before.source is source
    known = _Golden(source, golden, recorded, before.references if same else None)
    _remember(_KEYS, id(source), known)
    return known


# Rules are memoised twice. By the identity of the tool definition, with the agent config and
# settings they were made for: the same objects are scored answer after answer, and walking a
# schema costs more than matching most arguments (the memo holds the objects, so an id is not
# reused while its entry lives; tool definitions and configs are not changed once loaded). And
# by content, for the copies of one tool that every recorded step carries: a JSON dump of the
# schema is cheaper than the walk.
_BY_ID: dict[int, tuple[Any, AgentConfig, bool, str, bool, MatchRules]] = {}
_BY_CONTENT: dict[tuple[bytes, int, bool, str, bool], tuple[AgentConfig, MatchRules]] = {}
_MEMO_SIZE = 4096


def clear_memos() -> None:
    """Forget memoised rules and keys (for benchmarks, or after changing a config in place)."""
    _BY_ID.clear()
    _BY_CONTENT.clear()
    _KEYS.clear()


def _rules(
    tools: Mapping[str, ToolDef],
    name: str,
    fallback: str,
    agent: AgentConfig,
    exact_strings: bool,
    detect_prose: bool,
) -> MatchRules:
    """:func:`rules_for` tool ``name`` (else its equivalent ``fallback``), memoised."""
    tool = tools.get(name) or tools.get(fallback)
    hit = _BY_ID.get(id(tool))
    if (
        hit is not None
        and hit[0] is tool
        and hit[1] is agent
        and hit[2] == exact_strings
        and hit[3] == name
        and hit[4] == detect_prose
    ):
        return hit[5]
    schema = orjson.dumps(tool.parameters) if tool is not None else b""
    content_key = (schema, id(agent), exact_strings, name, detect_prose)
    found = _BY_CONTENT.get(content_key)
    if found is not None and found[0] is agent:
        rules = found[1]
    else:
        rules = rules_for(tool, agent, exact_strings, name=name, detect_prose=detect_prose)
        _remember(_BY_CONTENT, content_key, (agent, rules))
    # One entry per tool: the same tool under other settings (rare) takes it over.
    _remember(_BY_ID, id(tool), (tool, agent, exact_strings, name, detect_prose, rules))
    return rules


def _remember(memo: dict, key: Any, value: Any) -> None:
    """Store in a memo, emptying it first when full (simpler than tracking recency)."""
    if len(memo) >= _MEMO_SIZE:
        memo.clear()
    memo[key] = value


def _several(
    golden: Sequence[ToolCall],
    candidate: Sequence[ToolCall],
    references: list[Any],
    tools: Mapping[str, ToolDef],
    agent: AgentConfig,
    exact_strings: bool,
    recorded: bool,
) -> CallsMatch:
    """The verdict on any other answer: compare golden/candidate pairs, assign optimally."""
    n_golden, n_candidate = len(golden), len(candidate)
    g_names = list(map(_NAME, golden))
    c_names = list(map(_NAME, candidate))
    same_tool_rules: dict[str, MatchRules] = {}  # each golden tool's (parallel calls share)
    other_tool_rules: dict[tuple[str, str], MatchRules] = {}  # an equivalent tool's
    groups = agent.equivalent_tools

    def compare(i: int, j: int, all_right: bool = False) -> ArgumentsMatch | float | None:
        g_name, c_name = g_names[i], c_names[j]
        if g_name == c_name:
            rules = same_tool_rules.get(g_name)
            if rules is None:
                rules = same_tool_rules[g_name] = _rules(
                    tools, g_name, g_name, agent, exact_strings, recorded
                )
        elif groups and tool_names_equal(g_name, c_name, agent):
            rules = other_tool_rules.get((g_name, c_name))
            if rules is None:
                rules = other_tool_rules[g_name, c_name] = _rules(
                    tools, g_name, c_name, agent, exact_strings, recorded
                )
        else:
            return None
        arguments = candidate[j].arguments
        reference = references[i]
        if type(arguments) is dict and type(reference) is ArgumentsKey:  # the usual case
            return tally_parameters(reference, arguments, rules, False, all_right)
        if arguments is None:
            arguments = call_arguments(candidate[j])
        return match_arguments(reference, arguments, rules, all_right=all_right)

    if n_golden == n_candidate == 1:  # one call each, to different tools
        verdict = compare(0, 0)
        pair = CallPair(0, 0, verdict is not None, verdict)
        if verdict is None:
            return CallsMatch([pair], [], [], exact=False, equal=False, score=0.0)
        return CallsMatch([pair], [], [], verdict.exact, verdict.equal, verdict.score)
    if n_golden == 1 or n_candidate == 1:
        return _one_to_many(n_golden, n_candidate, compare)
    # What compare said of pair (i, j), at i * n_candidate + j: a verdict, None (other tools),
    # or a bound on the score (asked whether all was right, it was not).
    cells: list[Any] = [_UNSEEN] * (n_golden * n_candidate)
    if n_golden == n_candidate:
        in_order = _all_right_in_order(n_golden, cells, compare)
        if in_order is not None:
            return in_order

    def verdict_of(i: int, j: int) -> ArgumentsMatch | None:
        cell = i * n_candidate + j
        verdict = cells[cell]
        if verdict is _UNSEEN or type(verdict) is float:
            verdict = cells[cell] = compare(i, j)
        return verdict

    if n_golden and n_candidate and not groups:
        by_name = _paired_by_name(g_names, c_names)
        if by_name is not None:
            return _verdict_of_pairs(by_name, n_golden, n_candidate, verdict_of)

    def weigh(i: int, j: int, bound: bool) -> float:
        # Most pairs tried while looking for each call's partner are wrong: asked for a bound,
        # their comparison stops at their first wrong parameter, a fraction of the work.
        cell = i * n_candidate + j
        verdict = cells[cell]
        if verdict is _UNSEEN or (not bound and type(verdict) is float):
            verdict = cells[cell] = compare(i, j, bound)
        if type(verdict) is float:
            return verdict + _SAME_TOOL_BONUS
        return 0.0 if verdict is None else verdict.score + _SAME_TOOL_BONUS

    chosen = lazy_best_assignment(n_golden, n_candidate, weigh, 1.0 + _SAME_TOOL_BONUS)
    return _verdict_of_pairs(chosen, n_golden, n_candidate, verdict_of)


def _parallel(
    known: _Golden,
    candidate: Sequence[ToolCall],
    tools: Mapping[str, ToolDef],
    agent: AgentConfig,
    exact_strings: bool,
    recorded: bool,
) -> CallsMatch | None:
    """The verdict on the usual answer of parallel calls, or None for any other answer.

    The usual one has several calls on each side, no equivalent tools, every candidate's
    arguments an object and every reference a key. For it this is what :func:`_several` and
    :func:`~agent_backtest.scoring.assignment.lazy_best_assignment` do together (with as many
    calls as the golden, the calls in golden order first; then the tools' names, then the quick
    pairing and its proof, then the full matrix), written as one function: the same weights and
    bounds asked in the same order, so the same pairs, without the layers of calls around each
    comparison that cost more than the comparisons on answers of a few calls.
    """
    if not known.all_keys:
        return None
    arguments = list(map(_ARGUMENTS, candidate))
    for value in arguments:
        if type(value) is not dict:
            return None
    references = known.references
    g_names = known.names
    n_golden, n_candidate = len(g_names), len(candidate)
    c_names = list(map(_NAME, candidate))
    rules_by_name: dict[str, MatchRules] = {}
    # The assignment's rows are the side with fewer calls (the golden's, of equal sides).
    flip = n_golden > n_candidate
    cols = n_golden if flip else n_candidate
    # What was found of row r and column c, at r * cols + c: a verdict, None (other tools), or
    # a bound on the score (asked whether all was right, it was not).
    cells: list[Any] = [_UNSEEN] * (n_golden * n_candidate)

    def compare(r: int, c: int, bound: bool) -> ArgumentsMatch | float | None:
        i, j = (c, r) if flip else (r, c)
        name = g_names[i]
        if name != c_names[j]:
            return None
        rules = rules_by_name.get(name)
        if rules is None:
            rules = rules_by_name[name] = _rules(tools, name, name, agent, exact_strings, recorded)
        return tally_parameters(references[i], arguments[j], rules, False, bound)

    if n_golden == n_candidate:
        in_order = _all_right_in_order(n_golden, cells, compare)
        if in_order is not None:
            return in_order
    chosen = None if known.at is None else _paired_by_name(g_names, c_names, known.at)
    if chosen is None:
        chosen = _quick_pairing(n_candidate if flip else n_golden, cols, cells, compare)
        if flip:
            chosen = sorted([(c, r) for r, c in chosen])
    pairs = []
    for i, j in chosen:
        r, c = (j, i) if flip else (i, j)
        verdict = cells[r * cols + c]
        if verdict is _UNSEEN or type(verdict) is float:
            verdict = cells[r * cols + c] = compare(r, c, False)
        pairs.append(CallPair(i, j, verdict is not None, verdict))
    return _verdict_with_unpaired(pairs, chosen, n_golden, n_candidate)


def _quick_pairing(
    rows: int,
    cols: int,
    cells: list[Any],
    compare: Callable[[int, int, bool], ArgumentsMatch | float | None],
) -> list[tuple[int, int]]:
    """The pairs (row, column) of a ``rows`` × ``cols`` matrix (``rows <= cols``), in row
    order, chosen as :func:`~agent_backtest.scoring.assignment.lazy_best_assignment` chooses
    them with the weights of :func:`_several` (a verdict's score plus the same-tool bonus, 0
    for other tools); ``cells`` holds what ``compare(r, c, bound)`` found so far and is filled
    as pairs are asked.
    """
    top = 1.0 + _SAME_TOOL_BONUS
    unseen = _UNSEEN

    def ceiling(r: int, c: int) -> float:
        # An upper bound on the weight, exact at the top: a bound is asked for when unseen.
        cell = r * cols + c
        verdict = cells[cell]
        if verdict is unseen:
            verdict = cells[cell] = compare(r, c, True)
        if verdict is None:
            return 0.0
        if type(verdict) is float:
            return verdict + _SAME_TOOL_BONUS
        return verdict.score + _SAME_TOOL_BONUS

    def weight(r: int, c: int) -> float:
        cell = r * cols + c
        verdict = cells[cell]
        if verdict is unseen or type(verdict) is float:
            verdict = cells[cell] = compare(r, c, False)
        return 0.0 if verdict is None else verdict.score + _SAME_TOOL_BONUS

    # Each row takes the first unused column at the top: the one after the previous row's,
    # its own, then the rest in order.
    chosen: list[tuple[int, int]] = []
    used = [False] * cols
    left_over: list[int] = []
    follows = 0
    for r in range(rows):
        if follows < cols and not used[follows] and ceiling(r, follows) >= top:
            c = follows
        elif r != follows and not used[r] and ceiling(r, r) >= top:
            c = r
        else:
            for c in range(cols):
                if c != follows and c != r and not used[c] and ceiling(r, c) >= top:
                    break
            else:
                left_over.append(r)
                follows += 1
                continue
        chosen.append((r, c))
        used[c] = True
        follows = c + 1
    if not left_over:
        chosen.sort()
        return chosen
    for r in left_over:
        best_c, best_w = -1, -1.0
        for c in range(cols):
            if not used[c]:
                w = weight(r, c)
                if w > best_w:
                    best_c, best_w = c, w
        chosen.append((r, best_c))
        used[best_c] = True
    total = sum([weight(r, c) for r, c in chosen])
    if not within_row_bound(total, top * (rows - len(left_over)), left_over, cols, ceiling):
        top_cols = set()
        for cell, verdict in enumerate(cells):
            if type(verdict) is ArgumentsMatch and verdict.score + _SAME_TOOL_BONUS >= top:
                top_cols.add(cell % cols)
        col_max = [
            top if c in top_cols else max(ceiling(r, c) for r in range(rows)) for c in range(cols)
        ]
        if total < sum(sorted(col_max, reverse=True)[:rows]) - SLACK:
            matrix = [[weight(r, c) for c in range(cols)] for r in range(rows)]
            chosen = best_assignment(matrix)
    chosen.sort()
    return chosen


def _paired_by_name(
    golden: list[str], candidate: list[str], g_at: dict[str, int] | None = None
) -> list[tuple[int, int]] | None:
    """The calls of each tool paired (golden, candidate), in golden order, when the names
    alone make the optimal pairing, else None; ``g_at`` is each golden name's index, when known.

    They do when no side calls a tool twice and every call of the side with fewer calls has a
    namesake on the other: each such pair is then its call's only pair above 0, so any other
    pairing scores less.
    """
    if g_at is None:
        g_at = dict(zip(golden, range(len(golden)), strict=True))
        if len(g_at) != len(golden):
            return None
    c_at = dict(zip(candidate, range(len(candidate)), strict=True))
    if len(c_at) != len(candidate):
        return None
    pairs = []
    if len(golden) <= len(candidate):
        for i, name in enumerate(golden):
            j = c_at.get(name)
            if j is None:
                return None
            pairs.append((i, j))
        return pairs
    for j, name in enumerate(candidate):
        i = g_at.get(name)
        if i is None:
            return None
        pairs.append((i, j))
    pairs.sort()
    return pairs


def _verdict_of_pairs(
    chosen: list[tuple[int, int]],
    n_golden: int,
    n_candidate: int,
    verdict_of: Callable[[int, int], ArgumentsMatch | None],
) -> CallsMatch:
    """The answer's verdict from its chosen pairs (golden, candidate), in golden order, each
    pair's verdict given by ``verdict_of(i, j)``; the calls left out are missing or extra."""
    pairs = []
    for i, j in chosen:
        verdict = verdict_of(i, j)
        pairs.append(CallPair(i, j, verdict is not None, verdict))
    return _verdict_with_unpaired(pairs, chosen, n_golden, n_candidate)


def _verdict_with_unpaired(
    pairs: list[CallPair], chosen: list[tuple[int, int]], n_golden: int, n_candidate: int
) -> CallsMatch:
    """The answer's verdict from its pairs (``chosen``, golden and candidate indexes, in golden
    order); the calls left out are missing or extra."""
    if len(chosen) == n_golden == n_candidate:
        return _verdict(pairs, [], [], n_golden)
    missing = list(range(n_golden))
    extra = list(range(n_candidate))
    for i, j in chosen:
        missing.remove(i)
        extra.remove(j)
    return _verdict(pairs, missing, extra, max(n_golden, n_candidate))


def _all_right_in_order(
    n: int, cells: list[Any], compare: Callable[[int, int, bool], ArgumentsMatch | float | None]
) -> CallsMatch | None:
    """The verdict on ``n`` calls a side when each is all right against the golden call in its
    position (list order is then optimal), else None; what ``compare(i, i, True)`` found goes
    to ``cells[i * n + i]``.

    Each is asked whether it is all right, so a wrong one costs only its first wrong parameter.
    """
    for i in range(n):
        verdict = cells[i * n + i] = compare(i, i, True)
        if verdict is None or type(verdict) is float or not verdict.equal:
            return None
    return _verdict([CallPair(i, i, True, cells[i * n + i]) for i in range(n)], [], [], n)


_UNSEEN: Any = object()
_NAME = attrgetter("name")
_ARGUMENTS = attrgetter("arguments")


def _one_to_many(n_golden: int, n_candidate: int, compare: Any) -> CallsMatch:
    """One call on one side: it pairs with its best partner on the other (the first of equals).

    The first partner with every argument right is the best; failing one, every partner is
    weighed.
    """
    golden_side = n_golden == 1
    others = n_candidate if golden_side else n_golden
    best, best_weight, best_verdict = 0, -1.0, None
    for k in range(others):
        verdict = compare(0, k, True) if golden_side else compare(k, 0, True)
        if type(verdict) is float:
            continue
        if verdict is not None and verdict.score >= 1.0:
            best, best_verdict = k, verdict
            break
    else:
        for k in range(others):
            verdict = compare(0, k) if golden_side else compare(k, 0)
            weight = -0.5 if verdict is None else verdict.score
            if weight > best_weight:
                best, best_weight, best_verdict = k, weight, verdict
    rest = [k for k in range(others) if k != best]
    if golden_side:
        pair = CallPair(0, best, best_verdict is not None, best_verdict)
        return _verdict([pair], [], rest, n_candidate)
    pair = CallPair(best, 0, best_verdict is not None, best_verdict)
    return _verdict([pair], rest, [], n_golden)


def _verdict(pairs: list[CallPair], missing: list[int], extra: list[int], total: int) -> CallsMatch:
    """The answer's verdict from its pairs and unpaired calls."""
    exact = equal = not missing and not extra
    score = 0.0
    for pair in pairs:
        arguments = pair.arguments
        if arguments is None:
            exact = equal = False
            continue
        score += arguments.score
        exact = exact and arguments.exact
        equal = equal and arguments.equal
    return CallsMatch(pairs, missing, extra, exact, equal, score / total if total else 1.0)
