"""The structured argument matcher: one hand-written example per rule."""

from __future__ import annotations

import copy

from hypothesis import given, settings
from hypothesis import strategies as st

from agent_backtest.scoring.arguments import (
    ArgumentsKey,
    MatchRules,
    Mismatch,
    Unparseable,
    compile_key,
    golden_key,
    is_prose,
    match_arguments,
    path_key,
    rules_for,
)
from agent_backtest.scoring.normalise import normalise_string
from agent_backtest.trace.models import ToolDef
from agent_backtest.units.agent_config import AgentConfig
from agent_backtest.units.answer_key import ArgumentKey

PLAIN = MatchRules()

BOOK = ToolDef(
    name="book_reservation",
    parameters={
        "type": "object",
        "properties": {
            "user_id": {"type": "string"},
            "passengers": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string"},
                        "dob": {"type": "string"},
                        "tags": {"type": "array", "uniqueItems": True, "items": {"type": "string"}},
                    },
                    "required": ["name", "dob"],
                },
            },
            "flights": {"type": "array", "items": {"type": "string"}},
            "seats": {"type": "integer"},
            "cabin": {"type": "string", "default": "economy"},
            "insurance": {"type": "boolean", "default": False},
            "note": {"type": "string"},
        },
        "required": ["user_id", "passengers", "seats"],
    },
)
AGENT = AgentConfig(
    unordered_args={"book_reservation": ["flights"]},
    arg_defaults={"book_reservation": {"insurance": "no"}},
    free_text_args={"book_reservation": ["note"]},
)


def book_rules(**overrides: object) -> MatchRules:
    """The booking tool's rules under the test agent config."""
    return rules_for(BOOK, AGENT, **overrides)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# Rules from schema and config


def test_rules_read_schema_and_config() -> None:
    """Required, defaults, integers and unordered lists come from the schema and the config."""
    rules = book_rules()
    assert rules.required >= {"user_id", "passengers", "seats", "passengers[].name"}
    assert rules.defaults["cabin"] == "economy"
    assert rules.defaults["insurance"] == "no"  # the config wins over the schema
    assert rules.integer_paths == {"seats"}
    assert rules.unordered_paths == {"flights", "passengers[].tags"}
    assert rules.free_text == {"note"}


def test_rules_from_nullable_and_combined_schemas() -> None:
    """Type lists and anyOf are read too: ["integer", "null"] is still an integer."""
    tool = ToolDef(
        name="t",
        parameters={
            "type": "object",
            "properties": {
                "n": {"type": ["integer", "null"], "description": "count"},
                "x": {"type": ["integer", "number"]},
                "ids": {"anyOf": [{"type": "array", "uniqueItems": True}, {"type": "null"}]},
            },
        },
    )
    rules = rules_for(tool, AgentConfig())
    assert rules.integer_paths == {"n"}
    assert rules.unordered_paths == {"ids"}


def test_rules_read_leaf_schemas_with_more_than_a_type() -> None:
    """A parameter of one named type is read whatever else its schema holds: an enum or a
    default beside an integer, a combinator or uniqueItems beside a description."""
    tool = ToolDef(
        name="t",
        parameters={
            "type": "dict",
            "properties": {
                "level": {"type": "integer", "description": "how deep", "enum": [1, 2]},
                "code": {"type": "string", "description": "c", "anyOf": [{"type": "integer"}]},
                "tags": {"type": "string", "description": "t", "uniqueItems": True},
                "size": {"type": "integer", "default": 3},
            },
        },
    )
    rules = rules_for(tool, AgentConfig())
    assert rules.integer_paths == {"level", "code", "size"}
    assert rules.unordered_paths == {"tags"}
    assert rules.defaults == {"size": 3}


def test_rules_without_a_tool_definition_still_use_the_config() -> None:
    """A tool missing from the request's tools keeps its config settings (by name)."""
    rules = rules_for(None, AGENT, name="book_reservation")
    assert rules.unordered_paths == {"flights"}
    assert rules.free_text == {"note"}
    assert rules_for(None, AGENT).unordered_paths == frozenset()


def test_path_key_drops_indexes() -> None:
    """Schema paths name every item of a list alike."""
    assert path_key("passengers[3].tags[0]") == "passengers[].tags[]"
    assert MatchRules(unordered_paths=frozenset({"a[0].b"})).unordered_paths == {"a[].b"}


# ---------------------------------------------------------------------------------------------
# Values


def test_objects_compare_key_by_key_in_any_order() -> None:
    """Key order carries no meaning; identical values are exact."""
    result = match_arguments(
        {"a": 1, "b": {"x": "y", "z": [1]}}, {"b": {"z": [1], "x": "y"}, "a": 1}, PLAIN
    )
    assert result.exact and result.equal and result.score == 1.0
    assert result.mismatches == []


def test_mismatch_names_the_nested_path() -> None:
    """A difference deep inside says where: list index and key."""
    golden = {
        "passengers": [{"name": "Ann", "dob": "1990-01-01"}, {"name": "Bob", "dob": "1985-02-03"}]
    }
    candidate = {
        "passengers": [{"name": "Ann", "dob": "1990-01-02"}, {"name": "Bob", "dob": "1985-02-03"}]
    }
    result = match_arguments(golden, candidate, PLAIN)
    assert not result.equal
    assert result.mismatches == [Mismatch("passengers[0].dob", "value", "1990-01-01", "1990-01-02")]


def test_numbers_compare_by_value() -> None:
    """An int equals the same float, and that is still exact (JSON has one number type)."""
    result = match_arguments({"amount": 1, "rate": 2.5}, {"amount": 1.0, "rate": 2.5}, PLAIN)
    assert result.exact and result.equal
    assert not match_arguments({"amount": 1}, {"amount": 1.5}, PLAIN).equal


def test_integer_schema_makes_int_and_float_differ() -> None:
    """Where the schema declares integer, the tool would receive a float: a type difference."""
    golden = {"user_id": "u1", "passengers": [], "seats": 2}
    result = match_arguments(golden, {**golden, "seats": 2.0}, book_rules())
    assert result.mismatches == [Mismatch("seats", "type", 2, 2.0)]


def test_bool_is_never_a_number() -> None:
    """True is not 1 and False is not 0, whatever Python's == says."""
    result = match_arguments({"flag": True, "count": 0}, {"flag": 1, "count": False}, PLAIN)
    assert [(m.path, m.kind) for m in result.mismatches] == [("flag", "type"), ("count", "type")]


def test_strings_normalised_case_spaces_punctuation() -> None:
    """Case, spaces and BFCL's ignorable punctuation do not count."""
    result = match_arguments(
        {"city": "New York, NY", "date": "April 1, 2024"},
        {"city": "  new york ny ", "date": "april-1 2024"},
        PLAIN,
    )
    assert result.equal and not result.exact


def test_other_punctuation_still_counts() -> None:
    """Characters outside BFCL's set (here "!" and ":") are part of the value."""
    assert not match_arguments({"code": "AB12"}, {"code": "AB12!"}, PLAIN).equal
    assert not match_arguments({"t": "1030"}, {"t": "10:30"}, PLAIN).equal


def test_tab_and_newline_count_as_in_bfcl() -> None:
    """Only the space is ignorable whitespace: a tab or newline around a value is a difference."""
    for padded in ("\tParis", "Paris\n", "\tParis\n", "Pa\nris"):
        result = match_arguments({"city": "Paris"}, {"city": padded}, PLAIN)
        assert result.mismatches == [Mismatch("city", "value", "Paris", padded)], padded
    assert match_arguments({"city": "Paris"}, {"city": " Paris "}, PLAIN).equal


def test_exact_mode_compares_strings_as_is() -> None:
    """With exact_strings a case difference is a value mismatch."""
    result = match_arguments({"city": "Paris"}, {"city": "paris"}, MatchRules(exact_strings=True))
    assert result.mismatches == [Mismatch("city", "value", "Paris", "paris")]


def test_normalise_string_set() -> None:
    """The normalised form: lower case, " ,./-_*^" removed, quotes folded, tabs kept."""
    assert normalise_string(" A-b_c.d/e,f*g^h i ") == "abcdefghi"
    assert normalise_string("\tA b\n") == "\tab\n"
    assert normalise_string("it's") == normalise_string('it"s')


def test_type_mismatch() -> None:
    """A string where the golden has a number is a type mismatch (no coercion of "5")."""
    result = match_arguments({"n": 5}, {"n": "5"}, PLAIN)
    assert result.mismatches == [Mismatch("n", "type", 5, "5")]


# ---------------------------------------------------------------------------------------------
# Lists


def test_lists_are_ordered_by_default() -> None:
    """Swapped items are mismatches at each index."""
    result = match_arguments({"ids": ["a", "b"]}, {"ids": ["b", "a"]}, PLAIN)
    assert [m.path for m in result.mismatches] == ["ids[0]", "ids[1]"]


def test_list_length_difference() -> None:
    """Lists of different lengths (ordered) differ as a whole: kind length."""
    result = match_arguments({"ids": ["a", "b"]}, {"ids": ["a"]}, PLAIN)
    assert result.mismatches == [Mismatch("ids", "length", ["a", "b"], ["a"])]


def test_unordered_config_list_is_a_multiset() -> None:
    """Config unordered_args: order is ignored but multiplicity is not."""
    base = {"user_id": "u", "passengers": [], "seats": 1}
    rules = book_rules()
    swapped = match_arguments(
        {**base, "flights": ["HAT1", "HAT2"]}, {**base, "flights": ["hat2", "HAT1"]}, rules
    )
    assert swapped.equal and not swapped.exact
    short = match_arguments(
        {**base, "flights": ["HAT1", "HAT1", "HAT2"]},
        {**base, "flights": ["HAT2", "HAT1", "HAT3"]},
        rules,
    )
    assert short.mismatches == [
        Mismatch("flights[1]", "missing", "HAT1", None),
        Mismatch("flights[2]", "extra", None, "HAT3"),
    ]


def test_unique_items_schema_list_is_unordered_at_nested_path() -> None:
    """uniqueItems deep in the schema makes that nested list unordered."""
    golden = {"passengers": [{"name": "A", "dob": "x", "tags": ["vip", "wheelchair"]}]}
    candidate = {"passengers": [{"name": "A", "dob": "x", "tags": ["wheelchair", "vip"]}]}
    assert match_arguments(golden, candidate, book_rules()).equal
    assert not match_arguments(golden, candidate, PLAIN).equal


# ---------------------------------------------------------------------------------------------
# Omitted parameters: defaults, null, required


def test_default_set_by_candidate_equals_omitted() -> None:
    """The golden omits cabin; the candidate sets the schema default: equal, not exact."""
    base = {"user_id": "u", "passengers": [], "seats": 1}
    result = match_arguments(base, {**base, "cabin": "economy"}, book_rules())
    assert result.equal and not result.exact and result.score == 1.0


def test_default_set_by_golden_equals_omitted() -> None:
    """The reverse: the golden states the config default, the candidate leaves it out."""
    base = {"user_id": "u", "passengers": [], "seats": 1}
    assert match_arguments({**base, "insurance": "no"}, base, book_rules()).equal


def test_non_default_value_is_extra() -> None:
    """A value other than the default, where the golden omitted the parameter, is extra."""
    base = {"user_id": "u", "passengers": [], "seats": 1}
    result = match_arguments(base, {**base, "cabin": "business"}, book_rules())
    assert result.mismatches == [Mismatch("cabin", "extra", None, "business")]
    assert result.score == 3 / 4


def test_null_optional_equals_omitted() -> None:
    """Strict-mode agents send null for optional parameters: the same as leaving them out."""
    base = {"user_id": "u", "passengers": [], "seats": 1}
    assert match_arguments(base, {**base, "cabin": None}, book_rules()).equal
    result = match_arguments(
        {"passengers": [], "seats": 1},
        {"passengers": [], "seats": 1, "user_id": None},
        book_rules(),
    )
    assert result.mismatches == [Mismatch("user_id", "extra", None, None, required=True)]


def test_missing_and_extra_required_are_named() -> None:
    """A missing required parameter says so; an unknown extra one is extra, not required."""
    result = match_arguments(
        {"user_id": "u", "passengers": [], "seats": 1},
        {"passengers": [], "seats": 1, "coupon": "X"},
        book_rules(),
    )
    assert result.mismatches == [
        Mismatch("user_id", "missing", "u", None, required=True),
        Mismatch("coupon", "extra", None, "X", required=False),
    ]
    assert result.score == 2 / 4  # user_id and coupon of {user_id, passengers, seats, coupon}


def test_missing_nested_required_is_named() -> None:
    """Required inside list items is checked at the item's path."""
    result = match_arguments(
        {"passengers": [{"name": "A", "dob": "x"}]}, {"passengers": [{"name": "A"}]}, book_rules()
    )
    assert result.mismatches == [Mismatch("passengers[0].dob", "missing", "x", None, True)]


# ---------------------------------------------------------------------------------------------
# Free text, JSON strings, unparseable, scores


def test_free_text_is_handed_to_the_judge() -> None:
    """A configured prose parameter is not compared: it is listed for the judge."""
    base = {"user_id": "u", "passengers": [], "seats": 1}
    result = match_arguments(
        {**base, "note": "Customer wants a window seat."},
        {**base, "note": "Window seat requested by the customer."},
        book_rules(),
    )
    assert result.equal and not result.exact and result.score == 1.0
    assert result.free_text == [
        ("note", "Customer wants a window seat.", "Window seat requested by the customer.")
    ]


def test_identical_free_text_is_still_handed_over() -> None:
    """The judge sees every prose pair, identical ones included (exact then holds)."""
    base = {"user_id": "u", "passengers": [], "seats": 1, "note": "Aisle seat, please."}
    result = match_arguments(base, dict(base), book_rules())
    assert result.exact and result.free_text == [
        ("note", "Aisle seat, please.", "Aisle seat, please.")
    ]


def test_free_text_left_out_is_missing() -> None:
    """A prose parameter only one side set cannot be judged: it is missing (not scored)."""
    base = {"user_id": "u", "passengers": [], "seats": 1}
    result = match_arguments({**base, "note": "Aisle seat, please."}, base, book_rules())
    assert result.mismatches == [Mismatch("note", "missing", "Aisle seat, please.", None)]
    assert result.score == 1.0 and result.free_text == []


def test_detected_prose_is_handed_to_the_judge() -> None:
    """Without config, a golden value that reads as prose goes to the judge too."""
    golden = {"summary": "The user wants to cancel the flight because of illness."}
    candidate = {"summary": "User asks to cancel; they are ill."}
    detected = match_arguments(golden, candidate, rules_for(None, AgentConfig(), name="t"))
    assert detected.equal and detected.free_text == [
        ("summary", golden["summary"], candidate["summary"])
    ]
    assert not match_arguments(golden, candidate, PLAIN).equal


def test_is_prose_rule() -> None:
    """Five or more mostly plain words, not code, JSON or a URL."""
    assert is_prose("Please rebook me on the next flight to Boston.")
    for value in (
        "New York, NY",
        "SFO",
        "2024-05-01",
        "SELECT * FROM users WHERE id = 5",
        '{"a": 1, "b": 2, "c": 3, "d": 4}',
        "see https://example.com for the details",
        "x1 y2 z3 w4 v5 u6",
        42,
        None,
    ):
        assert not is_prose(value), value


def test_json_string_of_an_object_counts_as_the_object() -> None:
    """A double-encoded nested argument equals the object it encodes (not exact)."""
    golden = {"passengers": [{"name": "Ann", "dob": "1990-01-01"}]}
    candidate = {"passengers": '[{"dob": "1990-01-01", "name": "ann"}]'}
    result = match_arguments(golden, candidate, PLAIN)
    assert result.equal and not result.exact
    whole = match_arguments({"a": 1}, '{"a": 1}', PLAIN)
    assert whole.equal and not whole.exact


def test_json_string_that_is_not_json_is_a_type_mismatch() -> None:
    """A string that does not decode to the expected container stays a string."""
    result = match_arguments({"ids": ["a"]}, {"ids": "[a"}, PLAIN)
    assert result.mismatches == [Mismatch("ids", "type", ["a"], "[a")]


def test_unparseable_arguments_are_a_mismatch_not_a_crash() -> None:
    """Broken JSON on either side: one unparseable mismatch with the raw text."""
    broken = Unparseable('{"a": 1', "invalid JSON")
    result = match_arguments({"a": 1}, broken, PLAIN)
    assert result.mismatches == [Mismatch("", "unparseable", {"a": 1}, '{"a": 1')]
    assert not result.equal and result.score == 0.0
    assert match_arguments(broken, Unparseable('{"a": 1'), PLAIN).exact


def test_score_is_share_of_equal_top_level_params() -> None:
    """Two of three parameters equal: 2/3; no parameters on either side: 1.0."""
    assert match_arguments({"a": 1, "b": 2, "c": 3}, {"a": 1, "b": 2, "c": 4}, PLAIN).score == 2 / 3
    empty = match_arguments({}, {}, PLAIN)
    assert empty.exact and empty.score == 1.0


def test_non_object_arguments_compare_whole() -> None:
    """Arguments that are not objects are one value at path ""."""
    assert match_arguments([1, 2], [1, 2], PLAIN).score == 1.0
    result = match_arguments("x", 3, PLAIN)
    assert result.mismatches == [Mismatch("", "type", "x", 3)] and result.score == 0.0


# ---------------------------------------------------------------------------------------------
# Answer keys: several acceptable values, parameters that may be left out


def key(**arguments: ArgumentKey) -> ArgumentsKey:
    """A compiled answer key of one call."""
    return compile_key(arguments)


def one_of(*values: object, optional: bool = False) -> ArgumentKey:
    """An argument's key: any of ``values``, maybe left out."""
    return ArgumentKey(values=list(values), optional=optional)


def test_answer_key_accepts_any_listed_value() -> None:
    """Each parameter may take any acceptable value, normalised; an optional one may be absent."""
    reference = key(city=one_of("New York City", "NYC"), year=one_of(2000, optional=True))
    assert match_arguments(reference, {"city": "nyc", "year": 2000}, PLAIN).equal
    assert match_arguments(reference, {"city": "New York City"}, PLAIN).exact
    assert not match_arguments(reference, {"city": "NYC", "year": 2001}, PLAIN).equal


def test_answer_key_names_the_missing_and_wrong() -> None:
    """A missing parameter lists what was acceptable; a wrong one names the closest option."""
    reference = key(city=one_of("New York City", "NYC"), unit=one_of("celsius", "C"))
    result = match_arguments(reference, {"city": "Boston"}, PLAIN)
    assert result.mismatches == [
        Mismatch("city", "value", "New York City", "Boston"),
        Mismatch("unit", "missing", ["celsius", "C"], None),
    ]


def test_empty_string_is_a_value_not_an_omission_marker() -> None:
    """Unlike BFCL's data, "" in a key is an acceptable value; leaving out is ``optional``."""
    reference = key(note=one_of(""))
    assert match_arguments(reference, {"note": ""}, PLAIN).exact
    assert not match_arguments(reference, {}, PLAIN).equal
    only_absent = key(note=ArgumentKey(optional=True))
    assert match_arguments(only_absent, {}, PLAIN).exact
    assert match_arguments(only_absent, {"note": "x"}, PLAIN).mismatches == [
        Mismatch("note", "extra", None, "x")
    ]


def test_required_parameter_is_never_excused() -> None:
    """One rule for keys and production's calls: a parameter the schema requires must be sent,
    even when the key marks it optional or the reference's value is the default."""
    rules = MatchRules(required=frozenset({"city"}), defaults={"city": "Paris"})
    result = match_arguments(key(city=one_of("Paris", optional=True)), {}, rules)
    assert result.mismatches == [Mismatch("city", "missing", "Paris", None, required=True)]
    golden = match_arguments({"city": "Paris"}, {}, rules)
    assert golden.mismatches == [Mismatch("city", "missing", "Paris", None, required=True)]
    assert match_arguments({}, {"city": "Paris"}, rules).mismatches == [
        Mismatch("city", "extra", None, "Paris", required=True)
    ]
    only_absent = match_arguments(key(city=ArgumentKey(optional=True)), {}, rules)
    assert only_absent.mismatches == [Mismatch("city", "missing", [], None, required=True)]
    optional = MatchRules(defaults={"city": "Paris"})
    assert match_arguments({"city": "Paris"}, {}, optional).equal
    assert match_arguments(key(city=one_of("Paris")), {}, optional).equal


def test_answer_key_omitted_default_counts() -> None:
    """Omitting a parameter whose default is an acceptable value is equal (BFCL: refused)."""
    rules = MatchRules(defaults={"unit": "celsius"})
    assert match_arguments(key(unit=one_of("celsius")), {}, rules).equal


def test_answer_key_fields_and_items() -> None:
    """An object checked field by field, an array item by item, each with its own values."""
    reference = key(
        conditions=ArgumentKey(
            items=[
                ArgumentKey(fields={"field": one_of("age"), "op": one_of(">")}),
                ArgumentKey(fields={"field": one_of("job"), "op": one_of("=", "==")}),
            ]
        ),
        window=ArgumentKey(fields={"start": one_of("09:00"), "end": one_of("17:00", "5pm")}),
    )
    candidate = {
        "conditions": [{"field": "age", "op": ">"}, {"field": "Job", "op": "=="}],
        "window": {"start": "09:00", "end": "5PM"},
    }
    assert match_arguments(reference, candidate, PLAIN).equal
    candidate["conditions"][1]["op"] = "<"
    result = match_arguments(reference, candidate, PLAIN)
    assert result.mismatches == [Mismatch("conditions[1].op", "value", "=", "<")]
    short = match_arguments(reference, {**candidate, "conditions": []}, PLAIN)
    assert short.mismatches[0] == Mismatch(
        "conditions",
        "length",
        [{"field": "age", "op": ">"}, {"field": "job", "op": ["=", "=="]}],
        [],
    )


def test_answer_key_int_float_and_integer_schema() -> None:
    """An int is accepted for a float answer; a float is refused where integer is declared."""
    assert match_arguments(key(x=one_of(5.0)), {"x": 5}, PLAIN).equal
    rules = MatchRules(integer_paths=frozenset({"n"}))
    assert match_arguments(key(n=one_of(5)), {"n": 5.0}, rules).mismatches == [
        Mismatch("n", "type", 5, 5.0)
    ]


def test_answer_key_extra_parameter() -> None:
    """A parameter the key does not list is extra."""
    result = match_arguments(key(a=one_of(1)), {"a": 1, "b": 2}, PLAIN)
    assert result.mismatches == [Mismatch("b", "extra", None, 2)]
    assert result.score == 1 / 2


def test_answer_key_against_broken_or_non_object_arguments() -> None:
    """Unparseable or non-object arguments are one mismatch naming what was acceptable."""
    reference = key(a=one_of(1, 2))
    broken = match_arguments(reference, Unparseable('{"a": '), PLAIN)
    assert broken.mismatches == [Mismatch("", "unparseable", {"a": [1, 2]}, '{"a": ')]
    assert match_arguments(reference, [1], PLAIN).mismatches == [
        Mismatch("", "type", {"a": [1, 2]}, [1])
    ]
    assert match_arguments(reference, '{"a": 2}', PLAIN).equal


def test_golden_is_the_key_with_one_value_each() -> None:
    """Production's arguments score exactly as their one-value key does."""
    golden = {"user_id": "u", "passengers": [{"name": "A", "dob": "x"}], "seats": 1}
    for candidate in (
        dict(golden),
        {**golden, "seats": 2},
        {"user_id": "U ", "passengers": [{"name": "a"}], "cabin": "economy"},
    ):
        as_recorded = match_arguments(golden, candidate, book_rules())
        as_key = match_arguments(golden_key(golden), candidate, book_rules())
        assert as_recorded == as_key


# ---------------------------------------------------------------------------------------------
# Properties over arbitrary JSON

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-5, 5)
    | st.floats(-5, 5, allow_nan=False)
    | st.text(alphabet="aB ,.-!x", max_size=6),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(alphabet="abc", min_size=1, max_size=2), inner, max_size=4)
    ),
    max_leaves=12,
)
ARGS = st.dictionaries(st.text(alphabet="pqrs", min_size=1, max_size=2), JSON, max_size=5)
RULES = st.sampled_from(
    [
        PLAIN,
        MatchRules(exact_strings=True),
        MatchRules(
            unordered_paths=frozenset({"p", "q"}),
            defaults={"r": 1},
            required=frozenset({"s"}),
            integer_paths=frozenset({"p"}),
            free_text=frozenset({"q"}),
        ),
    ]
)


@settings(max_examples=300, deadline=None)
@given(ARGS, RULES)
def test_identical_arguments_are_exact(arguments: dict, rules: MatchRules) -> None:
    """Any arguments against a copy of themselves: exact, equal, score 1, nothing to report."""
    result = match_arguments(arguments, copy.deepcopy(arguments), rules)
    assert result.exact and result.equal and result.score == 1.0
    assert result.mismatches == []


@settings(max_examples=300, deadline=None)
@given(ARGS, ARGS, RULES)
def test_any_pair_gives_a_consistent_verdict(
    golden: dict, candidate: dict, rules: MatchRules
) -> None:
    """Never raises; exact implies equal; equal means no mismatch; scores stay in [0, 1]."""
    result = match_arguments(golden, candidate, rules)
    assert result.equal == (not result.mismatches)
    assert not result.exact or result.equal
    assert 0.0 <= result.score <= 1.0
    assert all(m.kind in {"value", "type", "missing", "extra", "length"} for m in result.mismatches)
    if result.equal and not rules.free_text:
        assert result.score == 1.0
