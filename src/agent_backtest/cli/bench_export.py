"""``abt bench export``: a bench run's eligible episodes as SFT examples and RL prompt groups."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from agent_backtest import api
from agent_backtest.cli.bench_report import AllowPartialOption, BenchRunArgument
from agent_backtest.cli.options import OUTPUT, SELECTION, option
from agent_backtest.cli.terminal import SafeConsole, one_line

if TYPE_CHECKING:
    from agent_backtest.api.bench_exports import Written


SftFile = option(
    Path | None,
    "--sft",
    OUTPUT,
    "Write eligible episodes as OpenAI fine-tuning chat JSONL ({messages, tools}).",
    metavar="FILE",
)
RlFile = option(
    Path | None,
    "--rl",
    OUTPUT,
    "Write one line per prompt group: members, rewards, advantages (reward − the group's mean).",
    metavar="FILE",
)
MinReward = option(
    float,
    "--min-reward",
    SELECTION,
    "SFT: leave out episodes whose reward is below F.",
    min=0.0,
    max=1.0,
    metavar="F",
)


def export(
    run: BenchRunArgument,
    sft: SftFile = None,
    rl: RlFile = None,
    min_reward: MinReward = 1.0,
    allow_partial: AllowPartialOption = False,
) -> None:
    """Write a bench run's eligible episodes as training data: SFT chat JSONL, RL prompt groups."""
    outcome = api.bench_export(
        run, sft=sft, rl=rl, min_reward=min_reward, allow_partial=allow_partial
    )
    console = SafeConsole(highlight=False, soft_wrap=True)
    for what, written in (("SFT examples", outcome.sft), ("RL prompt groups", outcome.rl)):
        if written is not None:
            for line in written_lines(what, written, len(outcome.eligibility)):
                console.print(line, markup=False)


def written_lines(what: str, written: Written, episodes: int) -> list[str]:
    """What one export file holds, and how many episodes each reason left out."""
    left_out = sum(written.excluded.values())
    lines = [
        one_line(
            f"wrote {written.rows} {what} to {written.path} (source and eligibility in "
            f"{written.meta})"
        )
    ]
    if left_out:
        lines.append(f"  of {episodes} episodes, left out by reason (one may have several):")
        lines += [f"    {reason}: {n}" for reason, n in sorted(written.excluded.items())]
    if written.excluded_groups:
        lines.append(
            f"  prompt groups left out, no member eligible: {len(written.excluded_groups)}"
        )
    return lines
