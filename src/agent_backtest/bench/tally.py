"""What a bench run came to, in a few figures: episodes, errors by kind, mean reward, pass^1.

Episodes that ended in an engineering error, or that no grader could grade, have no reward:
they are counted apart and left out of the mean and of pass^1, never taken as zeros. The mean
reward's interval is clustered by case (rollouts of one case are not independent draws), and
pass^1 comes from :func:`agent_backtest.reporting.passk.over_cases`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from agent_backtest.bench.models import EpisodeRecord, GradeRecord
from agent_backtest.bench.reading import passed
from agent_backtest.reporting.passk import over_cases
from agent_backtest.statistics import Estimate, clustered_mean


@dataclass(frozen=True)
class Tally:
    """The run's figures."""

    episodes: int
    errors: dict[str, int]
    graded: int
    ungraded: int
    """Episodes with no engineering error whose graders could not grade them."""
    mean_reward: Estimate
    pass_1: Estimate


def tally(records: Sequence[EpisodeRecord], grades: Sequence[GradeRecord]) -> Tally:
    """The figures of a run's episodes and grades."""
    errors = Counter(record.error.kind for record in records if record.error is not None)
    rewarded = [grade for grade in grades if grade.reward is not None]
    counts: dict[str, tuple[int, int]] = {}
    for grade in rewarded:
        successes, rollouts = counts.get(grade.case_id, (0, 0))
        counts[grade.case_id] = (successes + bool(passed(grade.reward)), rollouts + 1)
    rewards = [grade.reward for grade in rewarded if grade.reward is not None]
    return Tally(
        episodes=len(records),
        errors=dict(sorted(errors.items())),
        graded=len(rewarded),
        ungraded=sum(g.reward is None and "error" not in g.reasons for g in grades),
        mean_reward=clustered_mean(rewards, [grade.case_id for grade in rewarded]),
        pass_1=over_cases(counts, 1),
    )
