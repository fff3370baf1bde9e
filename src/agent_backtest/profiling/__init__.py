"""Profiling agent loops: where the calls and the time go, from recorded traces.

Sessions are read one at a time into per-group figures (calls, times, tokens and cost, failures,
annotated runs), every figure saying whether it is available; groups can be compared side by side.
"""

from agent_backtest.profiling.cases import (
    CaseManifest,
    Cases,
    RunAnnotation,
    case_fingerprint,
    load_annotations,
    load_manifest,
    sessions_by_id,
)
from agent_backtest.profiling.distribution import Distribution, Tally, nearest_rank
from agent_backtest.profiling.groups import GroupBy, Variant, parse_variants
from agent_backtest.profiling.parallel import overlap
from agent_backtest.profiling.profiler import GroupProfile, Profiler
from agent_backtest.profiling.timing import transitions
from agent_backtest.profiling.tokens import PriceTable, load_prices

__all__ = [
    "CaseManifest",
    "Cases",
    "Distribution",
    "GroupBy",
    "GroupProfile",
    "PriceTable",
    "Profiler",
    "RunAnnotation",
    "Tally",
    "Variant",
    "case_fingerprint",
    "load_annotations",
    "load_manifest",
    "load_prices",
    "nearest_rank",
    "overlap",
    "parse_variants",
    "sessions_by_id",
    "transitions",
]
