"""The structured argument matcher: does a candidate's tool call carry the right arguments?

One function, :func:`match_arguments`, compares a candidate's arguments with a **reference**:
the acceptable values of every parameter (an :class:`ArgumentsKey`). An answer key from a gold
file or a benchmark lists several per parameter and may allow leaving one out
(:func:`compile_key`); production's recorded call is the same thing with one value each
(:func:`golden_key`). Both are scored by the same rules.

Values are compared as parsed JSON, not as text:

* objects key by key, in any key order;
* numbers by value (``1 == 1.0``), except where the tool's schema declares ``integer``: there an
  int and a float are a ``type`` difference, because the tool would receive a float; a bool is
  never a number;
* strings after :func:`~agent_backtest.scoring.normalise.normalise_string` (case and BFCL's
  ignorable punctuation, spaces included), or as is with ``exact_strings``;
* lists in order, unless the schema (``uniqueItems``) or the agent config (``unordered_args``)
  makes them multisets;
* a string holding a JSON object or array, where the other side has an object or array, counts
  as that value (models often double-encode nested arguments); the match is then not ``exact``;
* prose parameters (config ``free_text_args``, or, against production's call, detected by
  :func:`is_prose`) are not compared here but handed to the LLM judge.

Leaving a parameter out, or setting one the reference leaves out, is right when the key allows
leaving it out (``optional``), or when the value stands for leaving it out: ``null``, or the
parameter's default (schema ``default`` or config ``arg_defaults``). A parameter the tool's
schema **requires** is the exception: the tool is never called without it, so no value stands
for leaving it out. The candidate must send every required parameter the reference has, even
when the reference's value is the default or the key marks it optional.

Every difference is a :class:`Mismatch` naming its path, e.g. ``passengers[0].dob``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

import orjson

from agent_backtest.scoring.normalise import is_prose, normalise_string
from agent_backtest.trace.models import ToolDef
from agent_backtest.units.agent_config import AgentConfig
from agent_backtest.units.answer_key import ArgumentKey

__all__ = [
    "OMIT",
    "ArgumentsKey",
    "ArgumentsMatch",
    "Fields",
    "Items",
    "MatchRules",
    "Mismatch",
    "Unparseable",
    "compile_key",
    "golden_key",
    "is_prose",
    "match_arguments",
    "rules_for",
    "tally_parameters",
]

_INDEX = re.compile(r"\[\d+\]")


def path_key(path: str) -> str:
    """The schema form of a value path: list indexes become ``[]`` (``a[3].b`` → ``a[].b``)."""
    return _INDEX.sub("[]", path) if "[" in path else path


def _has_index(paths: Iterable[str]) -> bool:
    """True when a path holds a numeric list index (``a[0]``), to be written ``a[]``."""
    joined = "\n".join(paths)
    return "[" in joined and _INDEX.search(joined) is not None


@dataclass(frozen=True)
class MatchRules:
    """How to compare the arguments of one tool; build with :func:`rules_for`.

    Paths in ``unordered_paths``, ``defaults``, ``required`` and ``integer_paths`` are top-level
    parameter names or value paths in which list indexes may be written ``[]`` or as numbers
    (``passengers[].tags`` and ``passengers[0].tags`` both name the tags of every passenger).
    """

    exact_strings: bool = False
    unordered_paths: frozenset[str] = frozenset()
    defaults: Mapping[str, Any] = field(default_factory=dict)
    free_text: frozenset[str] = frozenset()
    required: frozenset[str] = frozenset()
    integer_paths: frozenset[str] = frozenset()
    """Where the schema declares ``integer``: int vs float is a type difference there."""
    detect_prose: bool = False
    """Hand a top-level string parameter to the judge when its golden value :func:`is_prose`."""

    def __post_init__(self) -> None:
        """Store every path in its ``[]`` form so lookups need one normalisation only."""
        for name in ("unordered_paths", "required", "integer_paths", "free_text"):
            paths = getattr(self, name)
            if type(paths) is not frozenset or (paths and _has_index(paths)):
                object.__setattr__(self, name, frozenset(path_key(p) for p in paths))
        if self.defaults and _has_index(self.defaults):
            object.__setattr__(self, "defaults", {path_key(p): v for p, v in self.defaults.items()})

    @classmethod
    def _of(cls, fields: dict[str, Any]) -> MatchRules:
        """Rules from a value for every field, as :func:`rules_for` makes them once per tool:
        the instance's attributes set in one step, not one frozen assignment at a time (which
        cost more than walking a small schema), then normalised as the dataclass's own init
        does."""
        rules = object.__new__(cls)
        rules.__dict__.update(fields)
        # Paths of schemas hold no list index unless a property's name does (or the config
        # writes one): one look over every path, not one per field (each is a frozenset).
        paths = ("unordered_paths", "required", "integer_paths", "free_text", "defaults")
        if _has_index(chain.from_iterable(map(fields.__getitem__, paths))):
            rules.__post_init__()
        return rules


@dataclass(slots=True)
class Mismatch:
    """One place where candidate and golden arguments differ."""

    path: str
    kind: str
    golden: Any
    candidate: Any
    required: bool = False


@dataclass(slots=True)
class ArgumentsMatch:
    """The verdict on one pair of argument sets."""

    exact: bool
    equal: bool
    score: float
    mismatches: list[Mismatch]
    free_text: list[tuple[str, Any, Any]]


@dataclass(frozen=True, slots=True)
class Unparseable:
    """Arguments that were not valid JSON: the raw text and the parse error."""

    raw: str
    error: str | None = None


_ABSENT: Any = object()
_NUMBERS = (int, float)
# Types whose == is exact for our purposes (same type on both sides, no bool/int confusion).
_FLAT = frozenset((str, int, float, bool, type(None)))


# ---------------------------------------------------------------------------------------------
# Rules from the tool's schema and the agent config


def rules_for(
    tool: ToolDef | None,
    agent: AgentConfig,
    exact_strings: bool = False,
    *,
    name: str | None = None,
    detect_prose: bool = True,
) -> MatchRules:
    """The matching rules of one tool, from its JSON Schema and the agent config.

    ``name`` gives the tool's name when there is no definition (config settings still apply).
    ``detect_prose`` treats top-level string parameters whose golden value reads as prose as
    free text even when the config does not list them.
    """
    tool_name = tool.name if tool is not None else name
    schema = tool.parameters if tool is not None and tool.parameters else {}
    walk = _SchemaWalk()
    walk.visit(schema, "")
    defaults = walk.defaults  # the walk's own, not kept
    unordered = walk.unordered
    free_text: frozenset[str] = frozenset()
    if tool_name is not None:
        # (most configs set nothing for most tools)
        configured_defaults = agent.arg_defaults.get(tool_name)
        if configured_defaults:
            defaults.update(configured_defaults)
        configured_unordered = agent.unordered_args.get(tool_name)
        if configured_unordered:
            unordered = unordered | set(configured_unordered)
        configured_free = agent.free_text_args.get(tool_name)
        if configured_free:
            free_text = frozenset(configured_free)
    return MatchRules._of(
        {
            "exact_strings": exact_strings,
            "unordered_paths": frozenset(unordered),
            "defaults": defaults,
            "free_text": free_text,
            "required": frozenset(walk.required),
            "integer_paths": frozenset(walk.integers),
            "detect_prose": detect_prose,
        }
    )


class _SchemaWalk:
    """Collects defaults, required, unordered and integer paths from a JSON Schema."""

    def __init__(self) -> None:
        """Start with nothing found."""
        self.defaults: dict[str, Any] = {}
        self.required: set[str] = set()
        self.unordered: set[str] = set()
        self.integers: set[str] = set()

    def visit(self, schema: Any, path: str, depth: int = 0) -> None:
        """Record what ``schema`` (the schema of the value at ``path``) says; recurse."""
        if not isinstance(schema, dict) or depth > _DEEPEST:  # self-referencing ones stop here
            return
        kind = schema.get("type")
        if kind == "integer" or (
            isinstance(kind, list) and "integer" in kind and "number" not in kind
        ):
            self.integers.add(path)
        if schema.get("uniqueItems") is True:
            self.unordered.add(path)
        properties = schema.get("properties")
        if isinstance(properties, dict):
            required = schema.get("required")
            if not isinstance(required, list):
                required = ()
            for prop, sub in properties.items():
                child = f"{path}.{prop}" if path else prop
                if prop in required:
                    self.required.add(child)
                if isinstance(sub, dict):
                    if "default" in sub:
                        self.defaults[child] = sub["default"]
                    # A leaf of one named type (with a description, an enum, a default…) needs
                    # no walk of its own unless it holds something a walk looks at.
                    leaf = sub.get("type")
                    if (
                        not isinstance(leaf, str)
                        or leaf in _NESTING
                        or (len(sub) > 2 and not _DEEPER.isdisjoint(sub))
                    ):
                        self.visit(sub, child, depth + 1)
                    elif leaf == "integer" and (len(sub) <= 2 or depth < _DEEPEST):
                        # (a longer leaf counts only where its own walk would not have stopped)
                        self.integers.add(child)
        items = schema.get("items")
        if isinstance(items, dict):
            self.visit(items, f"{path}[]", depth + 1)
        for key in _COMBINATORS:
            if key in schema:
                for sub in schema[key] or ():
                    self.visit(sub, path, depth + 1)


# Schema types (JSON Schema's and BFCL's names) whose schema holds further schemas.
_NESTING = frozenset(("object", "dict", "array", "tuple"))
_COMBINATORS = ("anyOf", "oneOf", "allOf")
# Levels of schemas a walk goes down: a schema that refers to itself is cut off there.
_DEEPEST = 20
# What a walk reads in a schema besides its type: a leaf without any of these has nothing more.
_DEEPER = frozenset(("uniqueItems", "properties", "items", *_COMBINATORS))


# ---------------------------------------------------------------------------------------------
# The reference: acceptable values per parameter


NO_PROSE: frozenset[str] = frozenset()


class ArgumentsKey(dict):
    """What a candidate's arguments are compared with: per parameter, a tuple of acceptable
    values.

    :data:`OMIT` at the end of a tuple means the parameter may be left out; a :class:`Fields`
    or :class:`Items` among the values stands for an object or array checked part by part.
    Any other value is compared with the candidate's value by the matcher's rules. ``prose``
    names the parameters whose one value reads as prose (:func:`is_prose`), for rules that
    detect prose.
    """

    __slots__ = ("prose",)

    def __init__(
        self, options: Mapping[str, tuple[Any, ...]] | None = None, prose: frozenset[str] = NO_PROSE
    ) -> None:
        """A key of ``options`` per parameter (none yet, when not given)."""
        super().__init__(options or ())
        self.prose = prose


class _Omit:
    """The type of :data:`OMIT`."""

    __slots__ = ()

    def __repr__(self) -> str:
        """Shown in test output."""
        return "OMIT"


OMIT: Any = _Omit()
"""Leaving the parameter out is acceptable (always last among a parameter's values)."""


@dataclass(frozen=True, slots=True, eq=False)
class Fields:
    """An object checked field by field: the acceptable values of each of its fields."""

    keys: dict[str, tuple[Any, ...]]


@dataclass(frozen=True, slots=True, eq=False)
class Items:
    """An array checked item by item, in order: the acceptable values of each item."""

    keys: tuple[tuple[Any, ...], ...]


_CONTAINER_OF: dict[type, type] = {Fields: dict, Items: list}
"""The JSON value that each part-by-part acceptable value checks."""


def golden_key(arguments: Mapping[str, Any]) -> ArgumentsKey:
    """Production's recorded arguments as a reference: each parameter's one value.

    Filled in one loop: every golden call of every unit becomes one, so it counts.
    """
    key = ArgumentsKey()
    prose = []
    for name, value in arguments.items():
        key[name] = (value,)
        if type(value) is str and is_prose(value):
            prose.append(name)
    if prose:
        key.prose = frozenset(prose)
    return key


def compile_key(arguments: Mapping[str, ArgumentKey]) -> ArgumentsKey:
    """An answer key's arguments (see :mod:`agent_backtest.units.answer_key`) as a reference;
    its listed values are acceptable as they are, never prose for the judge."""
    compiled = ArgumentsKey()
    for name, key in arguments.items():
        if key.fields is None and key.items is None:  # a list of values, the usual key
            compiled[name] = (*key.values, OMIT) if key.optional else tuple(key.values)
        else:
            compiled[name] = _options(key)
    return compiled


def _options(key: ArgumentKey) -> tuple[Any, ...]:
    """The acceptable values of one argument's key, :data:`OMIT` last where allowed."""
    if key.fields is not None:
        forms: tuple[Any, ...] = (
            Fields({name: _options(sub) for name, sub in key.fields.items()}),
        )
    elif key.items is not None:
        forms = (Items(tuple(_options(sub) for sub in key.items)),)
    else:
        forms = tuple(key.values)
    return (*forms, OMIT) if key.optional else forms


def _describe(options: tuple[Any, ...]) -> Any:
    """Plain data for a mismatch: the one acceptable value, or the list of them."""
    if len(options) == 1 and type(options[0]) not in (Fields, Items, _Omit):
        return options[0]
    acceptable = [_plain(option) for option in options if option is not OMIT]
    return acceptable[0] if len(acceptable) == 1 else acceptable


def _plain(option: Any) -> Any:
    """One acceptable value as plain JSON data (a nested key as its acceptable values)."""
    if type(option) is Fields:
        return {name: _describe(sub) for name, sub in option.keys.items()}
    if type(option) is Items:
        return [_describe(sub) for sub in option.keys]
    return option


def _plain_key(key: ArgumentsKey) -> dict[str, Any]:
    """A whole reference as plain data, for a mismatch at the top level."""
    return {name: _describe(options) for name, options in key.items()}


# ---------------------------------------------------------------------------------------------
# Reference against candidate


def match_arguments(
    reference: Any, candidate: Any, rules: MatchRules, *, all_right: bool = False
) -> ArgumentsMatch | float:
    """Compare a candidate's arguments with the reference under ``rules``.

    With ``all_right`` the caller asks first whether every parameter is right (score 1): the
    comparison stops at the first parameter that is not, and returns instead of a verdict an
    upper bound on the score (one parameter wrong out of as many as there can be).

    ``reference`` is an :class:`ArgumentsKey`, or production's arguments as recorded: an
    object is read as :func:`golden_key` of it, so both are scored alike. Either side may be an
    :class:`Unparseable` (the call's arguments were not valid JSON): that is a mismatch of kind
    ``unparseable``, except that identical raw text on both sides is equal. Recorded arguments
    that are not an object are compared whole (score 1.0 or 0.0); otherwise every parameter
    counts for an equal share of the score.
    """
    if type(candidate) is dict and type(reference) is ArgumentsKey:  # the usual case first
        return tally_parameters(reference, candidate, rules, False, all_right)
    if type(reference) is not ArgumentsKey:
        if isinstance(reference, Unparseable) or isinstance(candidate, Unparseable):
            return _unparseable(reference, candidate)
        if type(reference) is not dict:
            return _match_whole(reference, candidate, rules)
        reference = golden_key(reference)
    elif isinstance(candidate, Unparseable):
        return _unparseable(_plain_key(reference), candidate)
    decoded = False
    if type(candidate) is str:
        value = _decode_json(candidate, dict)
        if value is not _ABSENT:
            candidate, decoded = value, True
    if type(candidate) is not dict:
        mismatch = Mismatch("", "type", _plain_key(reference), candidate)
        return ArgumentsMatch(
            exact=False, equal=False, score=0.0, mismatches=[mismatch], free_text=[]
        )
    return tally_parameters(reference, candidate, rules, decoded, all_right)


def tally_parameters(
    key: ArgumentsKey, candidate: dict, rules: MatchRules, decoded: bool, all_right: bool
) -> ArgumentsMatch | float:
    """Score every parameter of ``candidate`` against the reference ``key``: what
    :func:`match_arguments` does once both sides are objects, for callers that know they are
    (``decoded``: the candidate's object was sent as a JSON string; ``all_right`` as there).

    Written with local variables and a fast path for a scalar found verbatim among the
    acceptable values: this loop runs for every pair of every answer, so it dominates scoring
    time.
    """
    mismatches: list[Mismatch] = []
    free_text: list[tuple[str, Any, Any]] = []
    unequal = present = prose = 0
    exact = not decoded
    free = rules.free_text
    prose_names = key.prose if rules.detect_prose else NO_PROSE
    judged = free or prose_names  # parameters the judge may read: looked for only if any
    normalised = not rules.exact_strings
    absent, flat, get = _ABSENT, _FLAT, candidate.get
    for name, options in key.items():
        cv = get(name, absent)
        if judged and (name in free or (cv is not absent and name in prose_names)):
            prose += 1
            present += cv is not absent
            if cv is absent:
                exact = _check_omitted(options, name, rules, mismatches) and exact
            else:
                exact = (
                    _free(name, _first_option(options), cv, rules, mismatches, free_text) and exact
                )
            continue
        if cv is not absent:
            present += 1
            tc = type(cv)
            if tc in flat:
                if cv in options:  # equal to one; a string is equal only to the same string
                    if tc is str:
                        continue
                    first = options[0]
                    if type(first) is tc and first == cv:  # the usual place
                        continue
                    for option in options:  # 1 is in (1.0,) too
                        if type(option) is tc and option == cv:
                            break
                    else:
                        option = absent
                    if option is not absent:
                        continue
                elif len(options) == 1 and type(options[0]) is tc:  # one value, of its type
                    if (
                        tc is str
                        and normalised
                        and normalise_string(cv) == normalise_string(options[0])
                    ):
                        exact = False  # equal once normalised, the usual case of one value
                        continue
                    if all_right:  # another value: this parameter is wrong
                        return _score_bound(key, candidate)
            elif tc is list and _list_listed(cv, options):
                continue
        before = len(mismatches)
        exact = _check_option_list(options, cv, name, rules, mismatches) and exact
        if len(mismatches) != before:
            if all_right:
                return _score_bound(key, candidate)
            unequal += 1
    compared = len(key) - prose
    if len(candidate) > present:
        exact = False
        for name, cv in candidate.items():
            if name in key:
                continue
            if name in free:
                _free(name, _ABSENT, cv, rules, mismatches, free_text)
                continue
            compared += 1
            if not _absent_is_fine(name, cv, rules):
                if all_right:
                    return _score_bound(key, candidate)
                unequal += 1
                mismatches.append(_one_sided(name, cv, "extra", rules))
    if mismatches:
        score = (compared - unequal) / compared if compared else 1.0
        return ArgumentsMatch(False, False, score, mismatches, free_text)
    return ArgumentsMatch(exact, True, 1.0, mismatches, free_text)


def _score_bound(key: ArgumentsKey, candidate: dict) -> float:
    """The best score of arguments with a parameter wrong: every parameter either side names
    counted, and only one of them wrong."""
    if candidate.keys() <= key.keys():  # the usual case, without building the union
        return 1.0 - 1.0 / len(key)
    return 1.0 - 1.0 / len(key.keys() | candidate.keys())


def _match_whole(golden: Any, candidate: Any, rules: MatchRules) -> ArgumentsMatch:
    """Arguments that are not both objects: one verdict for the whole value, path ``""``."""
    mismatches: list[Mismatch] = []
    exact = _compare(golden, candidate, "", rules, mismatches)
    equal = not mismatches
    return ArgumentsMatch(
        exact=exact and equal,
        equal=equal,
        score=1.0 if equal else 0.0,
        mismatches=mismatches,
        free_text=[],
    )


def _unparseable(golden: Any, candidate: Any) -> ArgumentsMatch:
    """Verdict when either side's arguments were not valid JSON."""
    g_raw = golden.raw if isinstance(golden, Unparseable) else golden
    c_raw = candidate.raw if isinstance(candidate, Unparseable) else candidate
    same = isinstance(golden, Unparseable) and isinstance(candidate, Unparseable) and g_raw == c_raw
    mismatches = [] if same else [Mismatch("", "unparseable", g_raw, c_raw)]
    return ArgumentsMatch(
        exact=same, equal=same, score=1.0 if same else 0.0, mismatches=mismatches, free_text=[]
    )


def _decode_json(text: str, expected: type) -> Any:
    """``text`` parsed as JSON when it holds a value of type ``expected``, else ``_ABSENT``."""
    stripped = text.strip()
    if not stripped or stripped[0] not in "{[":
        return _ABSENT
    try:
        value = orjson.loads(stripped)
    except orjson.JSONDecodeError:
        return _ABSENT
    return value if type(value) is expected else _ABSENT


def _one_side_only(
    path: str, value: Any, kind: str, rules: MatchRules, out: list[Mismatch]
) -> None:
    """A value only one side set (``kind`` missing or extra): a mismatch, unless setting it is
    the same call as leaving it out."""
    if not _absent_is_fine(path, value, rules):
        out.append(_one_sided(path, value, kind, rules))


def _absent_is_fine(path: str, value: Any, rules: MatchRules) -> bool:
    """True when leaving out the parameter at ``path`` is the same call as sending ``value``:
    ``null`` or the parameter's default, unless the schema requires the parameter."""
    key = path_key(path)
    if key in rules.required:
        return False
    if value is None:
        return True
    if key in rules.defaults:
        return _equal(rules.defaults[key], value, path, rules)
    return False


def _one_sided(path: str, value: Any, kind: str, rules: MatchRules) -> Mismatch:
    """The mismatch for a parameter only one side set."""
    required = path_key(path) in rules.required
    if kind == "missing":
        return Mismatch(path, "missing", value, None, required)
    return Mismatch(path, "extra", None, value, required)


def _equal(golden: Any, candidate: Any, path: str, rules: MatchRules) -> bool:
    """True when the two values match under ``rules`` (mismatches discarded)."""
    scratch: list[Mismatch] = []
    _compare(golden, candidate, path, rules, scratch)
    return not scratch


def _compare(g: Any, c: Any, path: str, rules: MatchRules, out: list[Mismatch]) -> bool:
    """Compare golden ``g`` with candidate ``c`` at ``path``, appending mismatches to ``out``.

    Returns True only when the two are identical (numbers by value, strings as is, lists in
    order, no default or null substituted): the ``exact`` verdict, computed in the same pass.
    """
    tg = type(g)
    if tg is type(c):
        if tg is dict:
            return _compare_dicts(g, c, path, rules, out)
        if tg is list:
            return _compare_lists(g, c, path, rules, out)
        if g == c:
            return True
        if tg is str and not rules.exact_strings and normalise_string(g) == normalise_string(c):
            return False
        out.append(Mismatch(path, "value", g, c))
        return False
    return _compare_mixed(g, c, path, rules, out)


def _compare_mixed(g: Any, c: Any, path: str, rules: MatchRules, out: list[Mismatch]) -> bool:
    """Compare values of different Python types (int/float, JSON strings, tuples)."""
    tg, tc = type(g), type(c)
    if tg in _NUMBERS and tc in _NUMBERS:
        if rules.integer_paths and path_key(path) in rules.integer_paths:
            out.append(Mismatch(path, "type", g, c))
            return False
        if g == c:
            return True
        out.append(Mismatch(path, "value", g, c))
        return False
    if tg is tuple or tc is tuple:  # Python callers may pass tuples; JSON has only arrays
        return _compare(
            list(g) if tg is tuple else g, list(c) if tc is tuple else c, path, rules, out
        )
    if tc is str and tg in (dict, list):
        decoded = _decode_json(c, tg)
        if decoded is not _ABSENT:
            _compare(g, decoded, path, rules, out)
            return False
    elif tg is str and tc in (dict, list):
        decoded = _decode_json(g, tc)
        if decoded is not _ABSENT:
            _compare(decoded, c, path, rules, out)
            return False
    out.append(Mismatch(path, "type", g, c))
    return False


def _compare_dicts(g: dict, c: dict, path: str, rules: MatchRules, out: list[Mismatch]) -> bool:
    """Compare two objects key by key; keys set on one side only are missing/extra."""
    exact = True
    for key, gv in g.items():
        child = f"{path}.{key}" if path else key
        cv = c.get(key, _ABSENT)
        if cv is _ABSENT:
            exact = False
            _one_side_only(child, gv, "missing", rules, out)
        elif not (type(gv) is type(cv) and type(gv) in _FLAT and gv == cv):
            exact = _compare(gv, cv, child, rules, out) and exact
    for key, cv in c.items():
        if key not in g:
            exact = False
            _one_side_only(f"{path}.{key}" if path else key, cv, "extra", rules, out)
    return exact


def _compare_lists(g: list, c: list, path: str, rules: MatchRules, out: list[Mismatch]) -> bool:
    """Compare two arrays in order, or as multisets where the rules say order is meaningless."""
    if rules.unordered_paths and path_key(path) in rules.unordered_paths:
        return _compare_multisets(g, c, path, rules, out)
    if len(g) != len(c):
        out.append(Mismatch(path, "length", g, c))
        return False
    exact = True
    for i, gv in enumerate(g):
        cv = c[i]
        if not (type(gv) is type(cv) and type(gv) in _FLAT and gv == cv):
            exact = _compare(gv, cv, f"{path}[{i}]", rules, out) and exact
    return exact


def _compare_multisets(g: list, c: list, path: str, rules: MatchRules, out: list[Mismatch]) -> bool:
    """Compare two arrays ignoring order: unmatched golden items missing, candidate items extra.

    Matching each golden item to the first equal unused candidate item is optimal here because
    "equal" is an equivalence relation (normalised forms compared), so no smarter pairing can
    match more items.
    """
    scratch: list[Mismatch] = []
    if len(g) == len(c) and _compare_lists_in_order(g, c, path, rules, scratch) and not scratch:
        return True
    unused = list(range(len(c)))
    missing: list[int] = []
    for i, gv in enumerate(g):
        child = f"{path}[{i}]"
        for pos, j in enumerate(unused):
            if _equal(gv, c[j], child, rules):
                del unused[pos]
                break
        else:
            missing.append(i)
    out.extend(Mismatch(f"{path}[{i}]", "missing", g[i], None) for i in missing)
    out.extend(Mismatch(f"{path}[{j}]", "extra", None, c[j]) for j in unused)
    return False


def _compare_lists_in_order(
    g: list, c: list, path: str, rules: MatchRules, out: list[Mismatch]
) -> bool:
    """Element-wise comparison of two equally long arrays (exact verdict returned)."""
    exact = True
    for i, gv in enumerate(g):
        exact = _compare(gv, c[i], f"{path}[{i}]", rules, out) and exact
    return exact


def _list_listed(cv: list, options: tuple[Any, ...]) -> bool:
    """True when an option is the same list of scalars as ``cv``, item types included."""
    for option in options:
        if (
            type(option) is list
            and option == cv
            and _FLAT.issuperset(map(type, cv))
            and list(map(type, option)) == list(map(type, cv))
        ):
            return True
    return False


def _free(
    key: str,
    gv: Any,
    cv: Any,
    rules: MatchRules,
    mismatches: list[Mismatch],
    free_text: list[tuple[str, Any, Any]],
) -> bool:
    """A prose parameter: handed to the judge when both sides set it; True if identical."""
    if gv is _ABSENT or cv is _ABSENT:
        if gv is _ABSENT and cv is _ABSENT:
            return True
        value, kind = (cv, "extra") if gv is _ABSENT else (gv, "missing")
        _one_side_only(key, value, kind, rules, mismatches)
        return False
    free_text.append((key, gv, cv))
    return type(gv) is type(cv) and gv == cv


# ---------------------------------------------------------------------------------------------
# One parameter against its acceptable values


def _first_option(options: tuple[Any, ...]) -> Any:
    """The first acceptable value (``_ABSENT`` when leaving the parameter out is the only one)."""
    first = options[0] if options else _ABSENT
    return _ABSENT if first is OMIT or first is _ABSENT else _plain(first)


def _check_option_list(
    options: tuple[Any, ...], cv: Any, path: str, rules: MatchRules, out: list[Mismatch]
) -> bool:
    """Check candidate value ``cv`` (or ``_ABSENT``) against acceptable ``options``.

    Appends the closest option's mismatches when none fits; returns True when ``cv`` matches an
    option exactly (or is absent where leaving it out is acceptable).
    """
    if cv is _ABSENT:
        return _check_omitted(options, path, rules, out)
    if not options or options[0] is OMIT:  # only leaving it out was acceptable (OMIT is last)
        _one_side_only(path, cv, "extra", rules, out)
        return False
    if type(cv) in _FLAT and not (type(cv) is str and _has_container(options)):
        return _check_scalar(options, cv, path, rules, out)
    best: list[Mismatch] | None = None
    equal_found = False
    for option in options:
        if option is OMIT:
            continue
        if type(option) is type(cv) and type(cv) in _FLAT and option == cv:
            return True
        scratch: list[Mismatch] = []
        exact = _compare_option(option, cv, path, rules, scratch)
        if not scratch:
            if exact:
                return True
            equal_found = True
        elif best is None or len(scratch) < len(best):
            best = scratch
    if equal_found or _stands_for_omission(options, path, cv, rules):
        return False
    if best is not None:
        out.extend(best)
    return False


def _stands_for_omission(options: tuple[Any, ...], path: str, cv: Any, rules: MatchRules) -> bool:
    """True when the key allows leaving the parameter out and ``cv`` is the same call as that
    (null, or the default, for a parameter the schema does not require)."""
    return bool(options) and options[-1] is OMIT and _absent_is_fine(path, cv, rules)


_CONTAINERS = frozenset((dict, list, Fields, Items))


def _has_container(options: tuple[Any, ...]) -> bool:
    """True when an option is an object or array (a string might then be JSON for it)."""
    return not _CONTAINERS.isdisjoint(map(type, options))


def _check_scalar(
    options: tuple[Any, ...], cv: Any, path: str, rules: MatchRules, out: list[Mismatch]
) -> bool:
    """:func:`_check_option_list` for a scalar candidate: one pass, one mismatch at most.

    The candidate string is normalised once, and no mismatch is built for options that fail
    unless none fits; then the mismatch names the first option of a comparable type (a
    ``value`` difference) or else the first option (a ``type`` difference).
    """
    tc = type(cv)
    normal = None
    equal_found = False
    comparable = first = _ABSENT
    integer = bool(rules.integer_paths) and path_key(path) in rules.integer_paths
    for option in options:
        if option is OMIT:
            continue
        to = type(option)
        if first is _ABSENT:
            first = option
        if to is tc:
            if option == cv:
                return True
            if tc is str and not rules.exact_strings:
                if normal is None:
                    normal = normalise_string(cv)
                if normalise_string(option) == normal:
                    equal_found = True
        elif to in _NUMBERS and tc in _NUMBERS:
            if integer:
                continue
            if option == cv:
                return True
        else:
            continue
        if comparable is _ABSENT:
            comparable = option
    # options holds a value (else only leaving the parameter out was acceptable)
    if equal_found or (options[-1] is OMIT and _absent_is_fine(path, cv, rules)):
        return False
    if comparable is not _ABSENT:
        out.append(Mismatch(path, "value", comparable, cv))
    else:
        out.append(Mismatch(path, "type", _plain(first), cv))
    return False


def _check_omitted(
    options: tuple[Any, ...], path: str, rules: MatchRules, out: list[Mismatch]
) -> bool:
    """A parameter the candidate left out: right when the key allows it, or when an acceptable
    value stands for leaving it out (see :func:`_absent_is_fine`); True when allowed outright."""
    required = path_key(path) in rules.required
    if not required:
        if options[-1] is OMIT:
            return True
        for option in options:
            if _absent_is_fine(path, option, rules):
                return False
    out.append(Mismatch(path, "missing", _describe(options), None, required))
    return False


def _compare_option(
    option: Any, cv: Any, path: str, rules: MatchRules, out: list[Mismatch]
) -> bool:
    """Compare ``cv`` with one acceptable value, which may be checked part by part."""
    container = _CONTAINER_OF.get(type(option))
    if container is None:
        return _compare(option, cv, path, rules, out)
    if type(cv) is str:
        decoded = _decode_json(cv, container)
        if decoded is not _ABSENT:
            # Matched part by part for the mismatches it shows, but JSON sent as a string is
            # never the exact call.
            _compare_option(option, decoded, path, rules, out)
            return False
    if type(cv) is not container:
        out.append(Mismatch(path, "type", _plain(option), cv))
        return False
    if container is dict:
        return _compare_fields(option, cv, path, rules, out)
    return _compare_items(option, cv, path, rules, out)


def _compare_fields(
    option: Fields, cv: dict[str, Any], path: str, rules: MatchRules, out: list[Mismatch]
) -> bool:
    """An object checked against the acceptable values of each field."""
    exact = True
    for name, options in option.keys.items():
        child = f"{path}.{name}" if path else name
        exact = _check_option_list(options, cv.get(name, _ABSENT), child, rules, out) and exact
    for name, value in cv.items():
        if name not in option.keys:
            exact = False
            _one_side_only(f"{path}.{name}" if path else name, value, "extra", rules, out)
    return exact


def _compare_items(
    option: Items, cv: list[Any], path: str, rules: MatchRules, out: list[Mismatch]
) -> bool:
    """An array checked item by item against the acceptable values of each item."""
    if len(option.keys) != len(cv):
        out.append(Mismatch(path, "length", _plain(option), cv))
        return False
    exact = True
    for i, options in enumerate(option.keys):
        exact = _check_option_list(options, cv[i], f"{path}[{i}]", rules, out) and exact
    return exact
