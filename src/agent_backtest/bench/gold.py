"""The only reader of a benchmark's gold, called by grading once every rollout has ended.

Planning a run only checks that the gold file exists (:func:`check_gold_file`); nothing on the
agent's side imports this module's reader, so no gold can reach a request, a trace or a log.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import orjson
from pydantic import ValidationError

from agent_backtest.bench.models import Gold
from agent_backtest.errors import InputError
from agent_backtest.input_files import checked_regular_file, read_bytes

SHOWN_MISSING = 10


def check_gold_file(path: Path) -> None:
    """The gold file is there and is a regular file; it is not opened."""
    try:
        present = path.exists()
    except OSError as exc:  # a name too long, a loop of links
        raise InputError(path, None, f"cannot read the gold file: {exc.strerror}") from None
    if present:
        checked_regular_file(path, "gold file")
    else:
        raise InputError(
            path,
            None,
            "missing: the benchmark's gold file (the manifest's gold) must exist before a run "
            "starts, though it is read only after the rollouts",
        )


def read_gold(path: Path, case_ids: Iterable[str]) -> dict[str, Gold]:
    """The gold of each of ``case_ids``; a bad line is named by its number, and cases without
    a gold line are an error naming the first ten."""
    wanted = list(dict.fromkeys(case_ids))
    data = read_bytes(path, "gold")
    golds: dict[str, Gold] = {}
    lines: dict[str, int] = {}
    for number, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        gold = _gold(path, number, line)
        if gold.case_id in lines:
            raise InputError(
                path,
                f"line {number}",
                f"case {gold.case_id!r} is on line {lines[gold.case_id]} too",
            )
        lines[gold.case_id] = number
        golds[gold.case_id] = gold
    missing = [case_id for case_id in wanted if case_id not in golds]
    if missing:
        shown = ", ".join(missing[:SHOWN_MISSING])
        more = f" and {len(missing) - SHOWN_MISSING} more" if len(missing) > SHOWN_MISSING else ""
        raise InputError(path, None, f"no gold for {len(missing)} case(s): {shown}{more}")
    return {case_id: golds[case_id] for case_id in wanted}


def _gold(path: Path, number: int, line: bytes) -> Gold:
    """One gold line; what is wrong with it names the field, never its value."""
    where = f"line {number}"
    try:
        return Gold.model_validate(orjson.loads(line))
    except orjson.JSONDecodeError:
        raise InputError(path, where, "not JSON") from None
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        field = ".".join(str(part) for part in error["loc"]) or "$"
        raise InputError(path, where, f"not a gold line: {field}: {error['msg']}") from None
