"""``--max-cost``: a replay that would cost more is refused, and a run that reaches it stops.

Before any call, the plan's estimate (:mod:`.cost_estimate`) must fit the budget, and every
model it calls must have a price (an unpriced model could spend anything). While the run goes,
each answer is priced as it lands, on top of what earlier starts of the run spent; when the
total reaches the budget no new call is sent, the calls in flight end and are recorded, and the
run is ``interrupted`` with the reason ``budget``, to be finished by a resume.
"""

from __future__ import annotations

from decimal import Decimal

from agent_backtest.errors import UserError
from agent_backtest.providers.prices import PriceTable, usd
from agent_backtest.replaying.cost_estimate import CostEstimate
from agent_backtest.runs import RunDirectory, read_results
from agent_backtest.runs.manifest import RunManifest
from agent_backtest.runs.records import ResultRecord
from agent_backtest.runs.spending import SpendTally, roles_spend, total_usd

PARAMETER = "max_cost"


def check_estimate(estimate: CostEstimate, max_cost: float) -> None:
    """The planned replay fits ``max_cost`` USD; else a user error, before anything is written."""
    unpriced = estimate.unpriced()
    if unpriced:
        raise UserError(
            f"cannot hold a budget on calls with no price: {', '.join(unpriced)}; give their "
            'prices in abt.toml ([prices."provider/model"] input = …, output = … USD per '
            "million tokens) or leave out --max-cost",
            PARAMETER,
        )
    total = estimate.total()
    if total > Decimal(str(max_cost)):
        raise UserError(
            f"the replay is estimated at ${usd(total):.4f}, over the budget of ${max_cost:.4f}; "
            "nothing was written or sent (select fewer units with --limit, lower -k, or raise "
            "--max-cost)",
            PARAMETER,
        )


class Budget:
    """A run's spending limit, with what it has spent so far over every start."""

    def __init__(
        self, limit: float, directory: RunDirectory, manifest: RunManifest, prices: PriceTable
    ) -> None:
        self.limit = Decimal(str(limit))
        self.tally = SpendTally(prices, manifest.config.batch is not None)
        for record in read_results(directory.results_path):  # none yet: no file, no records
            self.tally.add_result(record)
        # the judges of earlier scorings: the candidate is counted from its answers above
        self.others = total_usd(roles_spend(manifest, prices, skip=("candidate",)))

    @property
    def spent(self) -> Decimal:
        """What the run has spent, every role and every start together."""
        return self.tally.usd + self.others

    @property
    def reached(self) -> bool:
        """The spend is at the limit or over it."""
        return self.spent >= self.limit

    def add(self, record: ResultRecord) -> bool:
        """Price one answer as it lands; True once the budget is reached."""
        self.tally.add_result(record)
        return self.reached
