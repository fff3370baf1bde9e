"""``profile()``: where agent loops spend their calls and time, per group, from their traces."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from agent_backtest.api.options import PathLike, ReadingOptions
from agent_backtest.api.units import read_sessions
from agent_backtest.errors import UserError
from agent_backtest.formats import InputSummary
from agent_backtest.profiling import (
    Profiler,
    load_annotations,
    load_manifest,
    load_prices,
    parse_variants,
    sessions_by_id,
)
from agent_backtest.profiling.cases import RunAnnotation
from agent_backtest.runs.documents import document_bytes, write_document
from agent_backtest.runs.profile import (
    Availability,
    CostFigure,
    DistributionFigure,
    GroupBy,
    InputRead,
    Profile,
    ProfileGroup,
    TallyFigure,
    Times,
)

# The profile and the figures it is made of, for a caller that reads or shows them.
__all__ = [
    "Availability",
    "CostFigure",
    "DistributionFigure",
    "Profile",
    "ProfileGroup",
    "TallyFigure",
    "Times",
    "profile",
    "profile_document",
    "write_profile",
]


def profile(
    inputs: PathLike | Sequence[PathLike],
    *,
    group_by: GroupBy | None = None,
    variants: Sequence[str] = (),
    annotations: Sequence[PathLike] = (),
    case_manifest: PathLike | None = None,
    prices: PathLike | None = None,
    reading: ReadingOptions | None = None,
) -> Profile:
    """Profile the agent loops of ``inputs``: calls, times, gaps, tokens, failures and retries
    per group, each figure with what share of the sessions it covers.

    ``variants`` are ``NAME=SELECTOR`` (the first is the baseline); ``annotations`` need the
    ``case_manifest`` they name. ``group_by`` defaults to variant with variants or annotations,
    else agent.
    """
    parsed = parse_variants(list(variants))
    chosen = group_by or ("variant" if parsed or annotations else "agent")
    if parsed and chosen != "variant":
        raise UserError(f"variants need --group-by variant, not {chosen}", "variants")
    if chosen == "variant" and not parsed and not annotations:
        raise UserError(
            "variant needs --variant NAME=SELECTOR or --annotations (whose runs name their "
            "variant)",
            "group_by",
        )
    profiler = Profiler(
        chosen,
        parsed,
        _annotations([Path(p) for p in annotations], _path(case_manifest)),
        load_prices(Path(prices)) if prices is not None else None,
    )
    stream = read_sessions(inputs, reading)
    for session in stream:
        summary = stream.summaries[-1]
        profiler.add(session, summary.file, summary.format)
    return profiler.result([_input(s) for s in stream.summaries])


def profile_document(result: Profile) -> bytes:
    """The profile as its JSON file holds it: indented, keys sorted, a final newline."""
    return document_bytes(result)


def write_profile(result: Profile, path: PathLike) -> None:
    """Write the profile's JSON document to ``path`` (atomically, readable by its owner only);
    a path that cannot be written is the ``output`` parameter's error."""
    try:
        write_document(Path(path), result)
    except OSError as exc:
        raise UserError(
            f"cannot write {path}: {exc.strerror}; name another file", "output"
        ) from None


def _path(value: PathLike | None) -> Path | None:
    return Path(value) if value is not None else None


def _annotations(paths: list[Path], manifest: Path | None) -> dict[str, RunAnnotation]:
    """Each annotated session's run annotation, from every annotation file."""
    if not paths:
        if manifest:
            load_manifest(manifest)  # validate it even when nothing refers to it
        return {}
    if manifest is None:
        raise UserError("needs --case-manifest FILE: the cases the annotations name", "annotations")
    cases = load_manifest(manifest)
    return sessions_by_id(
        [(path, annotation) for path in paths for annotation in load_annotations(path, cases)]
    )


def _input(summary: InputSummary) -> InputRead:
    """What was read from one input."""
    return InputRead(
        file=summary.file,
        format=summary.format,
        sessions=summary.sessions,
        duplicate_sessions=summary.duplicate_sessions,
        steps=dict(sorted(summary.steps.items())),
        skips=dict(sorted(summary.skips.counts.items())),
    )
