"""What-if patches: edit ops applied to each unit's request before it is sent, and coverage."""

from agent_backtest.patch.coverage import CoverageReport, PatchCoverage, request_diff
from agent_backtest.patch.ops import Patch, PatchedRequest, load_patch

__all__ = [
    "CoverageReport",
    "Patch",
    "PatchCoverage",
    "PatchedRequest",
    "load_patch",
    "request_diff",
]
