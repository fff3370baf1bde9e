"""``bench_export()``: a bench run's eligible episodes as training data (SFT and RL)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from agent_backtest.bench.export import ExportOutcome, Written, export_training
from agent_backtest.errors import UserError

if TYPE_CHECKING:
    from agent_backtest.api.options import PathLike

__all__ = ["ExportOutcome", "Written", "bench_export"]


def bench_export(
    run: PathLike,
    *,
    sft: PathLike | None = None,
    rl: PathLike | None = None,
    min_reward: float = 1.0,
    allow_partial: bool = False,
) -> ExportOutcome:
    """Write the eligible episodes of the bench run ``run`` as OpenAI fine-tuning chat JSONL to
    ``sft`` and/or as RL prompt groups (members, rewards, advantages) to ``rl``, each beside a
    ``.meta.json`` that names the source run and every episode's eligibility.

    SFT leaves out episodes whose reward is below ``min_reward`` (0 to 1). At least one output
    is needed; both are checked before either is written, and a run still going is refused
    unless ``allow_partial``.
    """
    if not 0.0 <= min_reward <= 1.0:
        raise UserError(f"must be between 0 and 1, got {min_reward:g}", "min_reward")
    return export_training(
        Path(run),
        sft=Path(sft) if sft is not None else None,
        rl=Path(rl) if rl is not None else None,
        min_reward=min_reward,
        allow_partial=allow_partial,
    )
