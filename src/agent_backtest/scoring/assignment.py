"""Optimal one-to-one assignment of golden calls to candidate calls (maximum total weight).

Parallel calls are a set: the order a model lists them in means nothing, so each golden call is
paired with the candidate call that maximises the total score over all pairs. Greedy pairing
(each golden call takes its best remaining candidate) can lose: a golden call may grab the one
candidate another golden call needed. Most answers are settled by a quick pairing proven optimal
by an upper bound; the rest are solved exactly, small ones by trying every pairing and larger
ones by scipy's Hungarian-algorithm solver.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import permutations

# Up to this many calls on the smaller side, and this many on the larger, trying every pairing
# (at most 6!/(6-4)! = 360 of them) is faster than the call overhead of scipy.
_BRUTE_SMALL = 4
_BRUTE_LARGE = 6


Weigh = Callable[[int, int, bool], float]
"""``weigh(i, j, bound)``: the weight of pair (i, j), or with ``bound`` an upper bound on it
that may be cheaper to find, and must be exact when the weight is the largest there is."""


def lazy_best_assignment(
    n_rows: int, n_cols: int, weigh: Weigh, top: float
) -> list[tuple[int, int]]:
    """Like :func:`best_assignment`, computing as few weights as it can.

    ``weigh`` (see :data:`Weigh`) is asked at most once per pair for a weight and once for a
    bound; ``top`` is the largest weight any pair can have, and a bound that reaches it is taken
    as the weight. A quick pairing is tried first (see :func:`_quick_pairing`) and kept when its
    total reaches an upper bound on every pairing's total, which proves it optimal; that settles
    the usual answers (right calls in any order, one call wrong or renamed, one too many or too
    few) with about one weight per call. Otherwise the full matrix is solved exactly.
    """
    flip = n_rows > n_cols
    cells = (
        _Cells(n_cols, n_rows, _transposed(weigh), top)
        if flip
        else _Cells(n_rows, n_cols, weigh, top)
    )
    chosen = _quick_pairing(cells)
    if chosen is None:
        get, cols = cells.get, cells.cols
        matrix = [[get(r, c) for c in range(cols)] for r in range(cells.rows)]
        chosen = best_assignment(matrix)
    return sorted((c, r) for r, c in chosen) if flip else sorted(chosen)


def _transposed(weigh: Weigh) -> Weigh:
    """``weigh`` with rows and columns trading places."""
    return lambda r, c, bound: weigh(c, r, bound)


class _Cells:
    """What is known of the weights of a ``rows`` × ``cols`` matrix (``rows <= cols``), asked
    for as needed and kept by cell ``r * cols + c``."""

    __slots__ = ("bounds", "cols", "known", "rows", "top", "weigh")

    def __init__(self, rows: int, cols: int, weigh: Weigh, top: float) -> None:
        """Nothing asked for yet."""
        self.rows, self.cols, self.weigh, self.top = rows, cols, weigh, top
        self.known: list[float | None] = [None] * (rows * cols)
        """Weights known exactly (a bound at the top is exact)."""
        self.bounds: list[float | None] = [None] * (rows * cols)
        """Upper bounds below the top, of cells not weighed yet."""

    def get(self, r: int, c: int) -> float:
        """The weight of cell (r, c)."""
        cell = r * self.cols + c
        value = self.known[cell]
        if value is None:
            value = self.known[cell] = self.weigh(r, c, False)
        return value

    def first_top(self, r: int, follows: int, used: set[int]) -> int:
        """The first unused column of row ``r`` with a top weight (``follows``, ``r``, then the
        rest in order), or -1.

        The rows of most answers find one at once: ``follows`` and ``r`` are tried first, then
        the others, each column once.
        """
        cols, top, ceiling = self.cols, self.top, self.ceiling
        if follows < cols and follows not in used and ceiling(r, follows) >= top:
            return follows
        if r != follows and r not in used and ceiling(r, r) >= top:  # r < cols: rows <= cols
            return r
        for c in range(cols):
            if c != follows and c != r and c not in used and ceiling(r, c) >= top:
                return c
        return -1

    def ceiling(self, r: int, c: int) -> float:
        """An upper bound on the weight of cell (r, c), exact at the top."""
        cell = r * self.cols + c
        value = self.known[cell]
        if value is None:
            value = self.bounds[cell]
            if value is None:
                value = self.weigh(r, c, True)
                if value >= self.top:
                    self.known[cell] = value
                else:
                    self.bounds[cell] = value
        return value


# Totals are sums of the same floats in different orders: compare them with this slack, far
# below the smallest difference between two real totals.
SLACK = 1e-9


def _quick_pairing(cells: _Cells) -> list[tuple[int, int]] | None:
    """A pairing proven optimal by a bound, or None.

    ``scoring.calls._quick_pairing`` makes the same choices for the usual answer of parallel
    calls without this module's layers (about 12% of the matcher's time on the project's
    pairs): a change to the rules here is made there too, and ``test_parallel_calls_path``
    holds the two equal.

    First each row takes the first unused column with a top weight, trying first the column
    after the previous row's (where a dropped or added call shifts the rest), then its own
    position. Rows left over then weigh their unused columns and take the best. The total is
    compared with two upper bounds: the sum of the row maxima, and the sum of the ``rows``
    largest column maxima (a column holding a known top needs no scan). Each maximum is taken
    over upper bounds of the weights, and a bound is given up on as soon as it cannot prove the
    total.
    """
    rows, cols, top, ceiling = cells.rows, cells.cols, cells.top, cells.ceiling
    first_top = cells.first_top
    chosen: list[tuple[int, int]] = []  # rows at the top first, in order; then the rest
    used: set[int] = set()
    left_over: list[int] = []
    follows = 0
    for r in range(rows):
        c = first_top(r, follows, used)
        if c >= 0:
            chosen.append((r, c))
            used.add(c)
            follows = c + 1
        else:
            left_over.append(r)
            follows += 1
    if not left_over:  # every row at the largest weight: nothing can do better
        return chosen
    get = cells.get
    for r in left_over:
        best_c, best_w = -1, -1.0
        for c in range(cols):
            if c not in used:
                w = get(r, c)
                if w > best_w:
                    best_c, best_w = c, w
        chosen.append((r, best_c))
        used.add(best_c)
    total = sum([get(r, c) for r, c in chosen])
    if within_row_bound(total, top * (rows - len(left_over)), left_over, cols, ceiling):
        return chosen
    top_cols = {cell % cols for cell, w in enumerate(cells.known) if w is not None and w >= top}
    col_max = [
        top if c in top_cols else max(ceiling(r, c) for r in range(rows)) for c in range(cols)
    ]
    col_bound = sum(sorted(col_max, reverse=True)[:rows])
    return chosen if total >= col_bound - SLACK else None


def within_row_bound(
    total: float,
    bound: float,
    rows: list[int],
    cols: int,
    ceiling: Callable[[int, int], float],
) -> bool:
    """True when ``total`` reaches ``bound`` plus the maxima of ``rows``; the maxima are
    summed from each row's ceilings and given up on as soon as the sum passes ``total``."""
    for r in rows:
        row_max = 0.0
        for c in range(cols):
            row_max = max(row_max, ceiling(r, c))
            if bound + row_max > total + SLACK:
                return False
        bound += row_max
    return True


def best_assignment(weights: Sequence[Sequence[float]]) -> list[tuple[int, int]]:
    """Pairs (row, column) maximising the summed weight; min(rows, columns) pairs.

    ``weights[i][j]`` is the value of pairing golden ``i`` with candidate ``j`` (never negative).
    Among equally good pairings the one closest to list order wins, so the result is stable.
    """
    rows = len(weights)
    cols = len(weights[0]) if rows else 0
    if rows == 0 or cols == 0:
        return []
    if rows == cols and _diagonal_is_best(weights):
        return [(i, i) for i in range(rows)]
    if min(rows, cols) <= _BRUTE_SMALL and max(rows, cols) <= _BRUTE_LARGE:
        return _brute_force(weights, rows, cols)
    return _hungarian(weights)


def _diagonal_is_best(weights: Sequence[Sequence[float]]) -> bool:
    """True when each row's own column is that row's maximum: no pairing can beat list order."""
    return all(row[i] >= max(row) for i, row in enumerate(weights))


def _brute_force(weights: Sequence[Sequence[float]], rows: int, cols: int) -> list[tuple[int, int]]:
    """Try every pairing of the smaller side into the larger; keep the first best."""
    if rows <= cols:
        best, best_total = None, -1.0
        for chosen in permutations(range(cols), rows):
            total = sum(weights[i][j] for i, j in enumerate(chosen))
            if total > best_total:
                best, best_total = chosen, total
        return [(i, j) for i, j in enumerate(best or ())]
    best, best_total = None, -1.0
    for chosen in permutations(range(rows), cols):
        total = sum(weights[i][j] for j, i in enumerate(chosen))
        if total > best_total:
            best, best_total = chosen, total
    return sorted((i, j) for j, i in enumerate(best or ()))


def _hungarian(weights: Sequence[Sequence[float]]) -> list[tuple[int, int]]:
    """Maximum-weight assignment by scipy (imported here: only large answers need it)."""
    import numpy as np
    from scipy.optimize import linear_sum_assignment

    row_ind, col_ind = linear_sum_assignment(np.asarray(weights, dtype=float), maximize=True)
    return [(int(i), int(j)) for i, j in zip(row_ind, col_ind, strict=True)]
