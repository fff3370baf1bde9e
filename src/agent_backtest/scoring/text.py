"""Deterministic text comparison: the same text, and a similarity for answers no judge decided.

The similarity is reported as ``text_similarity`` beside agreement, never as a verdict and never
averaged into it: token overlap says little about whether two answers mean the same.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

_WORD = re.compile(r"\w+", re.UNICODE)


def normalise_text(text: str) -> str:
    """Case-folded, accents kept, whitespace collapsed: what 'the same text' means for strict."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def token_f1(golden: str, candidate: str) -> float:
    """F1 of word-token overlap (a multiset), 1.0 when both are empty."""
    a = Counter(_WORD.findall(normalise_text(golden)))
    b = Counter(_WORD.findall(normalise_text(candidate)))
    if not a and not b:
        return 1.0
    common = sum((a & b).values())
    if common == 0:
        return 0.0
    precision, recall = common / sum(b.values()), common / sum(a.values())
    return 2 * precision * recall / (precision + recall)
