"""BFCL agreement cases: the leaderboard's own data and AST checker, and seeded mutations of it.

The data and checker come from the installed ``bfcl-eval`` package (``pip install --no-deps
bfcl-eval``); nothing of BFCL is copied here. Its checker module imports the model registry
(``bfcl_eval.constants.model_config``), which imports every provider SDK; the checker needs only
``MODEL_CONFIG_MAPPING[model].underscore_to_dot``, so a stub module stands in for the registry.
"""

from __future__ import annotations

import copy
import importlib
import itertools
import json
import os
import random
import sys
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agent_backtest.bench.bfcl.keys import answer_keys
from agent_backtest.scoring.calls import match_calls
from agent_backtest.trace.models import ToolCall, ToolDef
from agent_backtest.units.agent_config import AgentConfig
from agent_backtest.units.answer_key import CallKey

CATEGORIES = ("simple_python", "multiple", "parallel", "parallel_multiple")
MODEL = "abt-reference"  # the stub registry's only model: keeps function names as they are
SEED = 20240601
AGENT = AgentConfig()


MISSING = "bfcl_eval is not importable: install it with `pip install --no-deps bfcl-eval`"


def require_checker(checker: Any) -> None:
    """Skip without bfcl-eval on a developer machine; under CI its absence is a failure."""
    if checker is None:
        if os.environ.get("CI"):
            pytest.fail(MISSING + " (CI must install it)")
        pytest.skip(MISSING)


def load_checker() -> Any:
    """BFCL's ``ast_checker`` module, importable without the provider SDKs; None if missing."""
    try:
        importlib.import_module("bfcl_eval")
    except ImportError:
        return None
    if "bfcl_eval.constants.model_config" not in sys.modules:
        stub = types.ModuleType("bfcl_eval.constants.model_config")
        stub.MODEL_CONFIG_MAPPING = {MODEL: types.SimpleNamespace(underscore_to_dot=False)}
        sys.modules["bfcl_eval.constants.model_config"] = stub
    return importlib.import_module("bfcl_eval.eval_checker.ast_eval.ast_checker")


def python_language() -> Any:
    """BFCL's ``Language.PYTHON`` (the only language of these categories)."""
    return importlib.import_module("bfcl_eval.constants.enums").Language.PYTHON


@dataclass
class Entry:
    """One BFCL question: its functions and the acceptable answers."""

    category: str
    id: str
    functions: list[dict[str, Any]]
    ground_truth: list[dict[str, dict[str, list[Any]]]]


@dataclass
class Pair:
    """A (prediction, possible answer) pair, ready for both checkers.

    ``golden`` is the question's correct prediction as tool calls (what a unit's golden answer
    holds) and ``key`` BFCL's possible answer as our answer key.
    """

    entry: Entry
    mutation: str
    prediction: list[dict[str, dict[str, Any]]]
    calls: list[ToolCall]
    golden: list[ToolCall]
    key: list[CallKey]
    tools: dict[str, ToolDef]


def answer_key(entry: Entry) -> list[CallKey]:
    """BFCL's possible answer as an answer key, meaning what BFCL's checker makes of it."""
    return answer_keys(entry.functions, entry.ground_truth)


def tools_of(entry: Entry) -> dict[str, ToolDef]:
    """The question's functions as tool definitions."""
    return {
        f["name"]: ToolDef(
            name=f["name"], description=f.get("description"), parameters=f["parameters"]
        )
        for f in entry.functions
    }


def as_calls(prediction: list[dict[str, dict[str, Any]]]) -> list[ToolCall]:
    """A BFCL prediction (``[{name: arguments}]``) as tool calls."""
    return [
        ToolCall(name=name, arguments=args) for call in prediction for name, args in call.items()
    ]


def load_entries(categories: tuple[str, ...] = CATEGORIES) -> list[Entry]:
    """Every question of ``categories`` (the four Python AST ones unless told), from the
    installed package."""
    data = Path(importlib.import_module("bfcl_eval").__file__).parent / "data"
    entries = []
    for category in categories:
        questions = _read_jsonl(data / f"BFCL_v4_{category}.json")
        answers = {
            row["id"]: row
            for row in _read_jsonl(data / "possible_answer" / f"BFCL_v4_{category}.json")
        }
        for question in questions:
            answer = answers[question["id"]]
            entries.append(
                Entry(category, question["id"], question["function"], answer["ground_truth"])
            )
    return entries


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Rows of a JSON-lines file."""
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


# ---------------------------------------------------------------------------------------------
# Predictions


def build_pairs(entries: list[Entry], seed: int = SEED) -> list[Pair]:
    """The correct prediction and every applicable mutation of it, for every entry."""
    rng = random.Random(seed)
    pairs = []
    for entry in entries:
        tools = tools_of(entry)
        key = answer_key(entry)
        base = _correct_prediction(entry, rng)
        golden = as_calls(base)
        for mutation, make in MUTATIONS.items():
            for prediction in make(base, entry, rng):
                calls = as_calls(prediction)
                pairs.append(Pair(entry, mutation, prediction, calls, golden, key, tools))
    return pairs


def _correct_prediction(entry: Entry, rng: random.Random) -> list[dict]:
    """The first acceptable value of every parameter the function declares (BFCL's checker
    refuses any other, even one its possible answer lists)."""
    prediction = []
    for call in entry.ground_truth:
        name, params = next(iter(call.items()))
        declared = _schema_of(entry, name)
        args = _concrete_params(params, rng, pick_first=True)
        prediction.append({name: {key: value for key, value in args.items() if key in declared}})
    return prediction


def _concrete_params(params: dict[str, Any], rng: random.Random, pick_first: bool) -> dict:
    """One concrete argument object from a possible-answers mapping."""
    out = {}
    for key, options in params.items():
        options = options if isinstance(options, list) else [options]
        choices = [o for o in options if o != ""] if pick_first else list(options)
        if not choices:
            continue
        choice = choices[0] if pick_first else rng.choice(choices)
        if choice == "" and isinstance(choice, str):
            continue
        out[key] = _concrete_value(choice, rng, pick_first)
    return out


def _concrete_value(option: Any, rng: random.Random, pick_first: bool) -> Any:
    """A concrete value from one acceptable value (objects in it hold possible answers)."""
    if isinstance(option, dict):
        return _concrete_params(option, rng, pick_first)
    if isinstance(option, list) and any(isinstance(item, dict) for item in option):
        return [_concrete_value(item, rng, pick_first) for item in option]
    return copy.deepcopy(option)


Maker = Callable[[list[dict], Entry, random.Random], Iterator[list[dict]]]


def _one_call(mutate: Callable[[dict, dict, random.Random], bool]) -> Maker:
    """A mutation applied to the arguments of one randomly chosen call (skipped if it can't)."""

    def make(base: list[dict], entry: Entry, rng: random.Random) -> Iterator[list[dict]]:
        prediction = copy.deepcopy(base)
        index = rng.randrange(len(prediction))
        name, args = next(iter(prediction[index].items()))
        schema = _schema_of(entry, name)
        if mutate(args, schema, rng):
            yield prediction

    return make


def _schema_of(entry: Entry, name: str) -> dict[str, Any]:
    """The parameter schemas (properties) of function ``name``."""
    for function in entry.functions:
        if function["name"] == name:
            return function["parameters"].get("properties", {})
    return {}


def _correct(base: list[dict], entry: Entry, rng: random.Random) -> Iterator[list[dict]]:
    """The first acceptable value of every parameter."""
    yield copy.deepcopy(base)


def _alternative(base: list[dict], entry: Entry, rng: random.Random) -> Iterator[list[dict]]:
    """A random acceptable value per parameter, omission included where allowed."""
    yield [
        {name: _concrete_params(params, rng, pick_first=False)}
        for call in entry.ground_truth
        for name, params in call.items()
    ]


def _wrong_value(args: dict, schema: dict, rng: random.Random) -> bool:
    """Change one parameter's value, keeping its type."""
    if not args:
        return False
    key = rng.choice(sorted(args))
    args[key] = _changed(args[key], rng)
    return True


def _changed(value: Any, rng: random.Random) -> Any:
    """A different value of the same type."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + rng.choice((1, -1, 10))
    if isinstance(value, float):
        return value + rng.choice((0.5, 1.0, -2.25))
    if isinstance(value, str):
        return value + rng.choice(("x", "2", " and more"))
    if isinstance(value, list):
        if value and rng.random() < 0.5:
            return [_changed(value[0], rng), *value[1:]]
        return [*value[:-1]] if value else ["x"]
    if isinstance(value, dict):
        if value:
            key = rng.choice(sorted(value))
            return {**value, key: _changed(value[key], rng)}
        return {"x": 1}
    return "x"


def _wrong_type(args: dict, schema: dict, rng: random.Random) -> bool:
    """Give one parameter a value of another JSON type."""
    if not args:
        return False
    key = rng.choice(sorted(args))
    value = args[key]
    if isinstance(value, bool):
        args[key] = rng.choice((int(value), str(value).lower()))
    elif isinstance(value, int | float):
        args[key] = rng.choice((str(value), [value]))
    elif isinstance(value, str):
        args[key] = rng.choice((len(value), [value], True))
    elif isinstance(value, list):
        args[key] = value[0] if value else 0
    elif isinstance(value, dict):
        args[key] = list(value.values())
    else:
        args[key] = 0
    return True


def _missing_param(args: dict, schema: dict, rng: random.Random) -> bool:
    """Leave out one parameter."""
    if not args:
        return False
    del args[rng.choice(sorted(args))]
    return True


_TYPED_VALUES = {
    "string": "extra",
    "integer": 7,
    "float": 2.5,
    "boolean": True,
    "array": [1],
    "tuple": [1],
    "dict": {"k": "v"},
    "any": "extra",
}


def _extra_param(args: dict, schema: dict, rng: random.Random) -> bool:
    """Add a parameter: an unused one of the schema, or one the schema does not have."""
    unused = sorted(set(schema) - set(args))
    if unused and rng.random() < 0.7:
        key = rng.choice(unused)
        args[key] = _TYPED_VALUES.get(schema[key].get("type"), "extra")
    else:
        args["unexpected_argument"] = rng.choice(("yes", 1, 2.0))
    return True


def _int_float(args: dict, schema: dict, rng: random.Random) -> bool:
    """Swap an int for a float or back, at top level or inside a list."""
    spots = [(args, key) for key, value in args.items() if _is_number(value)]
    spots += [
        (value, i)
        for value in args.values()
        if isinstance(value, list)
        for i, item in enumerate(value)
        if _is_number(item)
    ]
    if not spots:
        return False
    holder, key = rng.choice(spots)
    value = holder[key]
    holder[key] = float(value) if isinstance(value, int) else int(value)
    return True


def _is_number(value: Any) -> bool:
    """An int or float that is not a bool."""
    return isinstance(value, int | float) and not isinstance(value, bool)


_IGNORED = (" ", ",", ".", "/", "-", "_", "*", "^")
_COUNTED = ("!", "?", "#", ":", ";", "(", "+")


def _string_case(args: dict, schema: dict, rng: random.Random) -> bool:
    """Change one string's case and surrounding whitespace."""
    keys = sorted(key for key, value in args.items() if isinstance(value, str))
    if not keys:
        return False
    key = rng.choice(keys)
    changed = rng.choice((str.upper, str.lower, str.title, str.swapcase))(args[key])
    args[key] = rng.choice(("", " ")) + changed + rng.choice(("", " "))
    return True


def _string_whitespace(args: dict, schema: dict, rng: random.Random) -> bool:
    """Pad one string with a tab or newline (not ignorable), or with spaces (ignorable)."""
    keys = sorted(key for key, value in args.items() if isinstance(value, str))
    if not keys:
        return False
    key = rng.choice(keys)
    before, after = rng.choice((("\t", "\n"), ("\t", ""), ("", "\n"), ("\n", " "), (" ", " ")))
    args[key] = before + args[key] + after
    return True


def _string_punctuation(args: dict, schema: dict, rng: random.Random) -> bool:
    """Insert punctuation into one string: one BFCL ignores, or one it does not."""
    keys = sorted(key for key, value in args.items() if isinstance(value, str))
    if not keys:
        return False
    key = rng.choice(keys)
    value = args[key]
    mark = rng.choice(_IGNORED if rng.random() < 0.6 else _COUNTED)
    at = rng.randrange(len(value) + 1)
    args[key] = value[:at] + mark + value[at:]
    return True


def _reordered(base: list[dict], entry: Entry, rng: random.Random) -> Iterator[list[dict]]:
    """The same calls in other orders (every order for up to four calls)."""
    if len(base) < 2:
        return
    orders = list(itertools.permutations(range(len(base))))[1:]
    if len(orders) > 6:
        orders = rng.sample(orders, 6)
    for order in orders:
        yield [copy.deepcopy(base[i]) for i in order]


def _call_count(base: list[dict], entry: Entry, rng: random.Random) -> Iterator[list[dict]]:
    """One call dropped, and one call repeated."""
    if len(base) > 1:
        dropped = copy.deepcopy(base)
        del dropped[rng.randrange(len(dropped))]
        yield dropped
    yield [*copy.deepcopy(base), copy.deepcopy(rng.choice(base))]


def _wrong_function(base: list[dict], entry: Entry, rng: random.Random) -> Iterator[list[dict]]:
    """One call names another function of the question (or an unknown one)."""
    prediction = copy.deepcopy(base)
    index = rng.randrange(len(prediction))
    name, args = next(iter(prediction[index].items()))
    others = sorted({f["name"] for f in entry.functions} - {name})
    prediction[index] = {rng.choice(others) if others else name + "_v2": args}
    yield prediction


def _reordered_mutated(base: list[dict], entry: Entry, rng: random.Random) -> Iterator[list[dict]]:
    """Calls in reverse order with one wrong value: order must not hide the error."""
    if len(base) < 2:
        return
    prediction = copy.deepcopy(base[::-1])
    name, args = next(iter(prediction[0].items()))
    if _wrong_value(args, _schema_of(entry, name), rng):
        yield prediction


MUTATIONS: dict[str, Maker] = {
    "correct": _correct,
    "alternative": _alternative,
    "wrong_value": _one_call(_wrong_value),
    "wrong_type": _one_call(_wrong_type),
    "missing_param": _one_call(_missing_param),
    "extra_param": _one_call(_extra_param),
    "int_float": _one_call(_int_float),
    "string_case": _one_call(_string_case),
    "string_punctuation": _one_call(_string_punctuation),
    "string_whitespace": _one_call(_string_whitespace),
    "reordered": _reordered,
    "reordered_wrong_value": _reordered_mutated,
    "call_count": _call_count,
    "wrong_function": _wrong_function,
}


# ---------------------------------------------------------------------------------------------
# Verdicts


def bfcl_valid(checker: Any, pair: Pair) -> bool:
    """BFCL's verdict on the pair."""
    result = checker.ast_checker(
        pair.entry.functions,
        pair.prediction,
        pair.entry.ground_truth,
        python_language(),
        pair.entry.category,
        MODEL,
    )
    return bool(result["valid"])


def ours_equal(pair: Pair) -> bool:
    """Our verdict on the pair: the calls equal the answer key."""
    return match_calls(pair.golden, pair.calls, pair.tools, AGENT, answer_key=pair.key).equal


# ---------------------------------------------------------------------------------------------
# Deliberate differences: each explains a disagreement by showing that BFCL's own checker agrees
# with us once the one thing we decided differently is taken out of the pair.


def _bfcl_raw(
    checker: Any, entry: Entry, functions: list, prediction: list, ground_truth: list
) -> bool:
    """BFCL's verdict on a modified copy of an entry."""
    result = checker.ast_checker(
        functions, prediction, ground_truth, python_language(), entry.category, MODEL
    )
    return bool(result["valid"])


def greedy_parallel(checker: Any, pair: Pair) -> bool:
    """BFCL pairs parallel calls greedily: some one-to-one pairing passes its per-call check."""
    gt, prediction = pair.entry.ground_truth, pair.prediction
    if len(gt) < 2 or len(gt) != len(prediction) or len(gt) > 6:
        return False
    language = python_language()

    def fits(answer: dict, call: dict) -> bool:
        name = next(iter(answer))
        description = checker.find_description(pair.entry.functions, name)
        return bool(
            checker.simple_function_checker(description, call, answer, language, MODEL)["valid"]
        )

    return any(
        all(fits(gt[i], prediction[j]) for i, j in enumerate(order))
        for order in itertools.permutations(range(len(prediction)))
    )


def int_in_float_array(checker: Any, pair: Pair) -> bool:
    """BFCL refuses an int inside an array of floats (while it accepts an int for a float)."""
    prediction = copy.deepcopy(pair.prediction)
    changed = False
    for call in prediction:
        name, args = next(iter(call.items()))
        schema = _schema_of(pair.entry, name)
        for key, value in args.items():
            items = schema.get(key, {}).get("items", {})
            if isinstance(value, list) and items.get("type") == "float":
                floats = [float(v) if type(v) is int else v for v in value]
                changed = changed or floats != value or any(type(v) is int for v in value)
                args[key] = floats
    return changed and _bfcl_raw(
        checker, pair.entry, pair.entry.functions, prediction, pair.entry.ground_truth
    )


def variable_string_exact(checker: Any, pair: Pair) -> bool:
    """BFCL compares a string given for a non-string parameter (a "variable") exactly."""
    prediction = copy.deepcopy(pair.prediction)
    changed = False
    for call, answer in zip(prediction, pair.entry.ground_truth, strict=False):
        name, args = next(iter(call.items()))
        options = next(iter(answer.values()))
        schema = _schema_of(pair.entry, name)
        for key, value in args.items():
            if not isinstance(value, str) or schema.get(key, {}).get("type") == "string":
                continue
            for option in options.get(key, []):
                if (
                    isinstance(option, str)
                    and option != value
                    and option.strip().lower() == value.strip().lower()
                ):
                    args[key] = option
                    changed = True
    return changed and _bfcl_raw(
        checker, pair.entry, pair.entry.functions, prediction, pair.entry.ground_truth
    )


def omitted_default(checker: Any, pair: Pair) -> bool:
    """BFCL refuses leaving out a parameter whose listed value is its schema default; it accepts
    once the possible answer also lists omission for that parameter."""
    ground_truth = copy.deepcopy(pair.entry.ground_truth)
    changed = False
    for call, answer in zip(pair.prediction, ground_truth, strict=False):
        name, args = next(iter(call.items()))
        options = next(iter(answer.values()))
        schema = _schema_of(pair.entry, name)
        for key, values in options.items():
            default = schema.get(key, {}).get("default", _NO_DEFAULT)
            if key not in args and "" not in values and default in values:
                values.append("")
                changed = True
    return changed and _bfcl_raw(
        checker, pair.entry, pair.entry.functions, pair.prediction, ground_truth
    )


_NO_DEFAULT = object()


def empty_list_as_omission(checker: Any, pair: Pair) -> bool:
    """BFCL accepts an empty list where its answer allows leaving a list parameter out (its
    list check turns the omission marker "" into []); it refuses once the marker is gone."""
    ground_truth = copy.deepcopy(pair.entry.ground_truth)
    changed = False
    for call in pair.prediction:
        name, args = next(iter(call.items()))
        for answer in ground_truth:
            options = answer.get(name, {})
            for key, value in args.items():
                if value == [] and "" in options.get(key, []):
                    options[key] = [o for o in options[key] if o != ""]
                    changed = True
    return changed and not _bfcl_raw(
        checker, pair.entry, pair.entry.functions, pair.prediction, ground_truth
    )


DIFFERENCES: dict[str, Callable[[Any, Pair], bool]] = {
    "greedy_parallel": greedy_parallel,
    "int_in_float_array": int_in_float_array,
    "variable_string_exact": variable_string_exact,
    "omitted_default": omitted_default,
}

# Differences where BFCL accepts what we refuse.
REFUSALS: dict[str, Callable[[Any, Pair], bool]] = {
    "empty_list_as_omission": empty_list_as_omission,
}


def explain(checker: Any, pair: Pair, ours: bool) -> str | None:
    """The deliberate difference behind a disagreement, or None if none explains it."""
    for name, test in (DIFFERENCES if ours else REFUSALS).items():
        if test(checker, pair):
            return name
    return None


# ---------------------------------------------------------------------------------------------
# Probes: pairs built to show decisions the mutation set does not exercise


def probe_pairs(entries: list[Entry]) -> dict[str, list[Pair]]:
    """Correct predictions changed in one deliberate way each, by kind.

    * ``json_string``: an array or object argument sent as a JSON string;
    * ``explicit_default``: an optional parameter the answer leaves out (or may leave out) set
      to its schema default;
    * ``null_optional``: an optional parameter the answer leaves out sent as null.
    """
    rng = random.Random(SEED)
    probes: dict[str, list[Pair]] = {"json_string": [], "explicit_default": [], "null_optional": []}
    for entry in entries:
        tools = tools_of(entry)
        key = answer_key(entry)
        base = _correct_prediction(entry, rng)
        golden = as_calls(base)
        for kind, prediction in _probes_of(entry, base):
            probes[kind].append(
                Pair(entry, kind, prediction, as_calls(prediction), golden, key, tools)
            )
    return probes


def _probes_of(entry: Entry, base: list[dict]) -> Iterator[tuple[str, list[dict]]]:
    """The probes one entry allows (first call only, first fitting parameter)."""
    name, args = next(iter(base[0].items()))
    answer = next(iter(entry.ground_truth[0].values()))
    function = next(f for f in entry.functions if f["name"] == name)
    schema = function["parameters"].get("properties", {})
    required = set(function["parameters"].get("required", []))
    for key, value in args.items():
        if isinstance(value, list | dict) and value:
            prediction = copy.deepcopy(base)
            prediction[0][name][key] = json.dumps(value)
            yield "json_string", prediction
            break
    for key, spec in schema.items():
        omitted = key not in args and key not in required
        if omitted and "default" in spec and spec["default"] not in answer.get(key, []):
            prediction = copy.deepcopy(base)
            prediction[0][name][key] = spec["default"]
            yield "explicit_default", prediction
            break
    for key in schema:
        if key not in args and key not in required:
            prediction = copy.deepcopy(base)
            prediction[0][name][key] = None
            yield "null_optional", prediction
            break
