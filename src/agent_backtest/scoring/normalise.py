"""String normalisation and prose detection used by the argument matcher.

Two argument strings are "equal" when they differ only in letter case or the characters the
Berkeley Function Calling Leaderboard's checker ignores: the space and ``, . / - _ * ^``, with
single and double quotes counted as the same character. So ``"April 1, 2024"``,
``"april 1 2024"`` and ``"April 1,2024"`` are one value, while ``"5!"`` and ``"5"`` are not, nor
``"Paris"`` and ``"Paris\n"``: characters outside that set still count, other whitespace (tab,
newline) included, as in BFCL. A tool that looks a value up would not find ``"Paris\n"``.
"""

from __future__ import annotations

import re
from typing import Any

# Characters removed before comparing (BFCL's set), and the single quote folded into the double
# one, so that "it's" and 'it"s' compare alike as in BFCL.
_DROPPED = " ,./-_*^"
_TABLE = str.maketrans({**dict.fromkeys(_DROPPED), "'": '"'})


# Argument strings repeat (the same golden value against every candidate call and repeat), so
# their comparison forms are kept; the memo is emptied when full rather than tracking recency.
_MEMO: dict[str, str] = {}
_MEMO_SIZE = 65536
_MEMO_MAX_LENGTH = 256  # long strings (prose, documents) are rarely repeated verbatim


def normalise_string(value: str) -> str:
    """The comparison form of a string: lower-cased, spaces and ignorable punctuation removed."""
    normal = _MEMO.get(value)
    if normal is None:
        normal = value.lower().translate(_TABLE)
        if len(value) <= _MEMO_MAX_LENGTH:
            if len(_MEMO) >= _MEMO_SIZE:
                _MEMO.clear()
            _MEMO[value] = normal
    return normal


# A "word" of prose: letters (any script), optionally with an apostrophe inside and punctuation
# after, e.g. "flight's," or "day." — not digits, paths, identifiers or code.
_WORD = re.compile(r"^[^\W\d_]+(?:['’][^\W\d_]+)?[.,;:!?)\"']*$")
_PROSE_MIN_WORDS = 5
_PROSE_WORD_SHARE = 0.6


# Kept like the comparison forms above: each golden string meets every candidate call.
_PROSE_MEMO: dict[str, bool] = {}


def is_prose(value: Any) -> bool:
    """True for a golden string that reads as natural-language prose, to be judged by meaning.

    The rule: a string of at least five whitespace-separated tokens, at least 60% of which are
    plain words (letters, an optional inner apostrophe, trailing punctuation), that does not look
    like JSON, a URL or a multi-line block of code. "Please rebook me on the next flight" is
    prose; "New York, NY", "SFO", "2024-05-01", "SELECT * FROM users WHERE id = 5" and
    "https://example.com/a b c d e" are not.
    """
    if not isinstance(value, str):
        return False
    known = _PROSE_MEMO.get(value)
    if known is None:
        known = _reads_as_prose(value)
        if len(value) <= _MEMO_MAX_LENGTH:
            if len(_PROSE_MEMO) >= _MEMO_SIZE:
                _PROSE_MEMO.clear()
            _PROSE_MEMO[value] = known
    return known


def _reads_as_prose(value: str) -> bool:
    """:func:`is_prose` of a string, computed."""
    text = value.strip()
    if not text or text[0] in "{[" or "://" in text:
        return False
    tokens = text.split()
    if len(tokens) < _PROSE_MIN_WORDS:
        return False
    words = sum(1 for token in tokens if _WORD.match(token))
    if words < _PROSE_WORD_SHARE * len(tokens):
        return False
    # Code and queries are mostly words too; reject text dominated by code punctuation.
    code_marks = sum(text.count(mark) for mark in "=(){};<>*")
    return code_marks * 10 < len(tokens)
