"""Reading a judge's verdict out of whatever text it answered with."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_backtest.scoring.verdict import (
    JudgeResult,
    Unscored,
    Verdict,
    agreement,
    extract_json_object,
    parse_verdict,
)


def test_fenced_json_is_found() -> None:
    text = 'Here is my verdict:\n```json\n{"reason": "same", "score": 1}\n```\nThanks.'
    assert extract_json_object(text) == {"reason": "same", "score": 1}


def test_prose_around_json_and_a_stray_brace_before_it() -> None:
    text = 'Both say {roughly} the same. {"score": 0.66, "reason": "drops the date"} Done.'
    assert extract_json_object(text) == {"score": 0.66, "reason": "drops the date"}


def test_two_concatenated_objects_give_the_first() -> None:
    text = '{"score": 0, "reason": "first"}{"score": 1, "reason": "second"}'
    assert extract_json_object(text) == {"score": 0, "reason": "first"}


def test_braces_and_quotes_inside_strings_are_text() -> None:
    text = r'{"reason": "the candidate wrote {\"a\": 1} and }{", "score": 0.33} {"x": 1}'
    assert extract_json_object(text) == {
        "reason": 'the candidate wrote {"a": 1} and }{',
        "score": 0.33,
    }


def test_arrays_and_scalars_are_not_objects_and_nothing_gives_none() -> None:
    assert extract_json_object('[1, 2] "x" 3') is None
    assert extract_json_object("") is None
    assert extract_json_object('{"unterminated": ') is None
    assert extract_json_object('[{"inner": true}]') == {"inner": True}


@pytest.mark.parametrize(
    ("raw", "score"), [(1, 1.0), ("0.66", 0.66), (0.67, 0.66), (0.34, 0.33), (0, 0.0), (1.0, 1.0)]
)
def test_scores_on_the_scale_are_read_and_snapped(raw: object, score: float) -> None:
    verdict, problem = parse_verdict(json.dumps({"score": raw, "reason": " ok "}))
    assert problem is None and verdict is not None
    assert verdict.score == score and verdict.reason == "ok"


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ('{"score": 0.5, "reason": "half"}', "score: must be one of 1, 0.66, 0.33, 0 (got 0.5)"),
        ('{"score": true, "reason": "yes"}', "score: must be a number, not true/false"),
        ('{"score": "high", "reason": "yes"}', "score: must be a number, got 'high'"),
        ('{"score": 1, "reason": "   "}', "reason: must not be empty"),
        ('{"score": 1}', "reason: Field required"),
        ("I think they match.", "no JSON object was found in the answer"),
        ("", "the answer was empty"),
    ],
)
def test_invalid_verdicts_say_what_was_wrong(answer: str, expected: str) -> None:
    verdict, problem = parse_verdict(answer)
    assert verdict is None and problem == expected


def test_agreement_is_the_share_of_equal_pairs() -> None:
    assert agreement([1.0]) is None
    assert agreement([1.0, 1.0, 1.0]) == 1.0
    assert agreement([1.0, 1.0, 0.0]) == pytest.approx(1 / 3, abs=1e-6)
    assert agreement([1.0, 0.66]) == 0.0


def test_result_without_verdicts_is_unscored_not_zero() -> None:
    lost = Unscored(reason="timeout", judge="mock/j", error_kind="timeout")
    result = JudgeResult.of([], [lost])
    assert result.score is None and result.unscored == lost and result.failures == []


def test_result_mean_leaves_failed_repeats_out() -> None:
    def verdict(score: float) -> Verdict:
        return Verdict(
            score=score,
            reason="r",
            judge="mock/j",
            prompt="p@v1",
            prompt_sha256="sha256:x",
            attempts=1,
            fallback_used=False,
            cache_hit=False,
        )

    lost = Unscored(reason="timeout", judge="mock/j", error_kind="timeout")
    result = JudgeResult.of([verdict(1.0), verdict(0.33)], [lost])
    assert result.score == pytest.approx(0.665) and result.agreement == 0.0
    assert result.unscored is None and result.failures == [lost]


@given(st.text())
def test_never_raises_on_arbitrary_text(text: str) -> None:
    found = extract_json_object(text)
    assert found is None or isinstance(found, dict)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)


@given(
    prose_before=st.text(),
    prose_after=st.text(),
    obj=st.dictionaries(st.text(), JSON_VALUES, min_size=1, max_size=4),
)
def test_finds_an_object_embedded_in_prose(prose_before: str, prose_after: str, obj: dict) -> None:
    # Prose without braces cannot start an object of its own, so the embedded one is the first.
    before = prose_before.replace("{", "(")
    text = f"{before}{json.dumps(obj)}{prose_after}"
    assert extract_json_object(text) == obj
