"""Side-by-side comparison of groups: every numeric figure of each group against a baseline.

Figures are addressed by JSON pointer into a group as ``profile.json`` holds it
(``/calls/tool/by_tool/get_weather``), so every figure is compared, including any added later. A
count absent from one group (a tool it never called) is a true zero there; any other figure
absent or ``None`` on either side has no difference (``None``), never a difference computed
against zero.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from agent_backtest.runs.profile import FigureChange, ProfileGroup, VariantComparison

DECIMALS = 6
Leaf = tuple[float | int | None, bool]
"""A figure's value and whether it is an entry of a count map (absent means zero)."""


def pointer(parts: Sequence[str]) -> str:
    """The JSON pointer (RFC 6901) of a path."""
    return "".join("/" + part.replace("~", "~0").replace("/", "~1") for part in parts)


def leaves(figures: Mapping[str, Any], path: tuple[str, ...] = ()) -> Iterator[tuple[str, Leaf]]:
    """Every numeric (or null) figure of a nested dict, with its pointer."""
    counts = _is_count_map(figures)
    for key in sorted(figures):
        value = figures[key]
        if isinstance(value, Mapping):
            yield from leaves(value, (*path, key))
        elif value is None or (isinstance(value, int | float) and not isinstance(value, bool)):
            yield pointer((*path, key)), (value, counts)


def _is_count_map(figures: Mapping[str, Any]) -> bool:
    """True for a map of counts by name (where an absent name means zero)."""
    # Figure dicts carry "available"; a plain map of integers is a count by name.
    return (
        "available" not in figures
        and bool(figures)
        and all(isinstance(v, int) and not isinstance(v, bool) for v in figures.values())
    )


def compare(baseline: ProfileGroup, other: ProfileGroup) -> dict[str, FigureChange]:
    """Each figure of either group: baseline value, other value, difference (other − baseline)."""
    before = dict(leaves(baseline.model_dump(mode="json")))
    after = dict(leaves(other.model_dump(mode="json")))
    found = {}
    for key in sorted(before.keys() | after.keys()):
        old, new = _value(before.get(key), after.get(key)), _value(after.get(key), before.get(key))
        if old is None and new is None:
            continue
        found[key] = FigureChange(baseline=old, value=new, difference=_difference(old, new))
    return found


def _value(leaf: Leaf | None, counterpart: Leaf | None) -> float | int | None:
    """A figure's value; an absent count is zero, any other absent figure None."""
    if leaf is not None:
        return leaf[0]
    return 0 if counterpart is not None and counterpart[1] else None


def _difference(old: float | int | None, new: float | int | None) -> float | int | None:
    """other − baseline, or None when either is unknown."""
    if old is None or new is None:
        return None
    difference = new - old
    return difference if isinstance(difference, int) else round(difference, DECIMALS)


def comparison(groups: Mapping[str, ProfileGroup], order: Sequence[str]) -> VariantComparison:
    """Every group after the first in ``order`` compared with the first (the baseline)."""
    present = [name for name in order if name in groups]
    if len(present) < 2:
        return VariantComparison(
            baseline=present[0] if present else None,
            order=present,
            variants={},
            note="fewer than two groups hold sessions: nothing to compare",
        )
    baseline = present[0]
    return VariantComparison(
        baseline=baseline,
        order=present,
        variants={name: compare(groups[baseline], groups[name]) for name in present[1:]},
    )
