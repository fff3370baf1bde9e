"""Signs that a candidate's answer speaks to the judge instead of the user.

An answer that carries a verdict-shaped object, asks to be scored or tells the reader to ignore its
instructions is trying to decide its own grade. The judge is not told about it and its verdict is
parsed so that a quoted object cannot stand in for its own (:mod:`.verdict`); the score record
and the report name the signs found, so a person can look.
"""

from __future__ import annotations

import re

from agent_backtest.scoring.verdict import json_objects

_SIGNS: dict[str, re.Pattern[str]] = {
    "ignore_instructions": re.compile(
        r"\b(ignore|disregard|forget)\b.{0,30}\b(previous|prior|above|earlier|all|your)\b"
        r".{0,20}\b(instructions?|prompts?|rules|guidelines)\b",
        re.IGNORECASE | re.DOTALL,
    ),
    "asks_for_a_score": re.compile(
        r"\b(score|grade|rate|rating)\b\W{0,3}(this|it|me|the answer|the response)?\W{0,3}"
        r"(as|of|with|=|:|is)?\W{0,3}(1(\.0+)?|one|full marks|10/10|100%)"
        r"(?!\d|\.\d|\s*[-–:]\s*\d)",  # not 1.5, nor a match result such as 1-0
        re.IGNORECASE,
    ),
    "addresses_the_judge": re.compile(
        r"\b(dear|attention|note to (the)?|to the)\s+(judge|grader|evaluator|reviewer)\b"
        r"|\byou are (the|an?) (judge|grader|evaluator)\b",
        re.IGNORECASE,
    ),
}


def injection_signs(text: str) -> list[str]:
    """The names of the signs found in ``text``, in a fixed order; empty for an ordinary answer."""
    if not text:
        return []
    found = []
    if "{" in text and any("score" in obj for obj in json_objects(text)):
        found.append("verdict_object")
    found += [name for name, pattern in _SIGNS.items() if pattern.search(text)]
    return found
