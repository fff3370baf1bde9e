"""What a replay will cost, estimated from its units before any call is made.

The candidate is asked each unit ``k`` times, less the repeats the response cache already answers
(counted apart: they are not sent, so they cost nothing). A unit's call is sized by the token counts
production's own call reported (the same request, so the best guess there is), else by the
request's and the answer's characters at four characters a token, and such units are counted as
estimated. The judge grades every text answer once per repeat (and per judge repeat); its prompt
holds its instructions, the tail of the conversation and both answers, so its size is always an
estimate from characters. Free-text tool arguments the judge may also grade, and the fallback
judge (asked only on an invalid verdict), are not in the estimate.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal

from agent_backtest.providers import ModelRef
from agent_backtest.providers.prices import PriceTable, Tokens, usd
from agent_backtest.trace import LLMRequest
from agent_backtest.units import Unit

CHARS_PER_TOKEN = 4
# The judge's prompt around the answers: its instructions (about 3,100 characters), and at most
# the agent's instructions and the conversation's tail (2,000 + 8,000) and each answer (2,000).
JUDGE_INSTRUCTION_CHARS = 3_100
JUDGE_CONTEXT_CHARS = 10_000
JUDGE_ANSWER_CHARS = 2_000
JUDGE_VERDICT_TOKENS = 150


@dataclass
class RoleEstimate:
    """The estimated cost of one role's calls."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    estimated_calls: int = 0
    """Calls sized from characters, not from token counts production reported."""
    usd: Decimal = Decimal(0)
    unpriced: Counter[str] = field(default_factory=Counter)
    """Calls of models with no price, by model (not in ``usd``)."""
    cached: int = 0
    """Calls the response cache already answers: not sent, so not in the figures above."""

    @property
    def priced(self) -> bool:
        """Some of the role's calls have a price."""
        return self.calls > sum(self.unpriced.values())

    def add(
        self, prices: PriceTable, model: str, tokens: Tokens, times: int, sized: bool, batch: bool
    ) -> None:
        """``times`` calls of ``model`` of the size ``tokens`` (``sized`` from characters)."""
        self.calls += times
        self.input_tokens += tokens.input * times
        self.output_tokens += tokens.output * times
        self.estimated_calls += times if sized else 0
        cost = prices.cost(model, tokens, batch)
        if cost is None:
            self.unpriced[model] += times
        else:
            self.usd += cost * times

    def times(self, repeats: int) -> RoleEstimate:
        """This estimate for every call asked ``repeats`` times."""
        return RoleEstimate(
            calls=self.calls * repeats,
            input_tokens=self.input_tokens * repeats,
            output_tokens=self.output_tokens * repeats,
            estimated_calls=self.estimated_calls * repeats,
            usd=self.usd * repeats,
            unpriced=Counter({model: n * repeats for model, n in self.unpriced.items()}),
        )

    def text(self) -> str:
        """``$0.0123 for 40 calls, 12 sized from characters · 51,000 input and 900 output
        tokens``, with what is unpriced."""
        cached = f" · {self.cached:,} answered from the cache" if self.cached else ""
        if not self.calls:
            return f"no calls{cached}"
        parts = [f"${usd(self.usd):.4f}"] if self.priced else []
        if self.unpriced:
            parts.append(f"unpriced ({', '.join(sorted(self.unpriced))})")
        sized = f", {self.estimated_calls:,} sized from characters" if self.estimated_calls else ""
        tokens = f"{self.input_tokens:,} input and {self.output_tokens:,} output tokens"
        return f"{' + '.join(parts)} for {self.calls:,} calls{sized} · {tokens}{cached}"


class CostEstimate:
    """The estimated cost of a replay's candidate and judge calls, built unit by unit."""

    def __init__(
        self,
        prices: PriceTable,
        k: int,
        judge: str | None = None,
        batch: bool = False,
        judge_repeats: int = 1,
    ) -> None:
        self.prices, self.k, self.judge, self.batch = prices, k, judge, batch
        self.judge_repeats = judge_repeats
        """Times the judge is asked per answer."""
        self.candidate = RoleEstimate()
        self._judge = RoleEstimate()

    def add(
        self, unit: Unit, model: ModelRef, patched: LLMRequest | None = None, cached: int = 0
    ) -> None:
        """One selected unit, to be sent to ``model`` (as ``patched``, when a patch changed
        its request: then its input is sized from characters), of whose ``k`` repeats the
        response cache answers ``cached``. Each answer is judged, cached or not."""
        request = patched or unit.request
        chars: list[int] = []  # the request's characters, counted only when needed

        def request_chars() -> int:
            if not chars:
                chars.append(len(request.model_dump_json()))
            return chars[0]

        self.candidate.cached += cached
        if cached < self.k:
            self._add_candidate(unit, model, patched is not None, request_chars, self.k - cached)
        self._add_judge(unit, request_chars)

    def _add_candidate(
        self,
        unit: Unit,
        model: ModelRef,
        patched: bool,
        request_chars: Callable[[], int],
        times: int,
    ) -> None:
        """``times`` calls of ``unit`` to ``model`` (``patched``: its request changed)."""
        recorded = unit.golden.usage
        if recorded is not None and recorded.input_tokens and recorded.output_tokens is not None:
            size_in = _tokens(request_chars()) if patched else recorded.input_tokens
            tokens = Tokens(input=size_in, output=recorded.output_tokens)
            sized = patched
        else:
            answer_chars = len(unit.golden.message.model_dump_json())
            tokens = Tokens(input=_tokens(request_chars()), output=_tokens(answer_chars))
            sized = True
        self.candidate.add(self.prices, str(model), tokens, times, sized, self.batch)

    def _add_judge(self, unit: Unit, request_chars: Callable[[], int]) -> None:
        """The judge's grading of each repeat's answer to ``unit`` (text answers only)."""
        if self.judge is None or unit.golden.message.tool_calls:
            return
        answer = min(len(unit.golden.message.text()), JUDGE_ANSWER_CHARS)
        context = min(request_chars(), JUDGE_CONTEXT_CHARS)
        judged = Tokens(
            input=_tokens(JUDGE_INSTRUCTION_CHARS + context + 2 * answer),
            output=JUDGE_VERDICT_TOKENS,
        )
        self._judge.add(self.prices, self.judge, judged, self.k, True, False)

    def roles(self) -> dict[str, RoleEstimate]:
        """The estimate of each role the run will call."""
        estimates = {"candidate": self.candidate}
        if self.judge is not None:
            estimates["judge"] = self._judge.times(self.judge_repeats)
        return estimates

    def total(self) -> Decimal:
        """The priced part of the estimate, every role together."""
        return sum((role.usd for role in self.roles().values()), Decimal(0))

    def unpriced(self) -> list[str]:
        """The models of the estimate with no price."""
        return sorted({model for role in self.roles().values() for model in role.unpriced})


def _tokens(chars: int) -> int:
    return -(-chars // CHARS_PER_TOKEN)
