"""Writing ``summary.json`` and ``report.html`` of a large simulate run, and the page's size.

Builds ``--flows N`` flows over ten families (two flows a seed), each with a conversation of
``--turns T`` turns of two tool calls whose results are ``--result-chars`` long, and a verdict
(a fifth fail, a tenth uncertain), then times :func:`write_report` over several rounds. The
page holds every conversation in full, so its size grows with N · T · result chars.

    python benchmarks/simulate_report.py [--flows 2000] [--turns 3] [--result-chars 2000]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from agent_backtest.simulate.models import (
    ConversationRecord,
    Flow,
    ScriptedTurn,
    ToolActivity,
    TurnRecord,
    Verdict,
)
from agent_backtest.simulate.report import write_report


def records(
    flows: int, turns: int, result_chars: int
) -> tuple[list[Flow], dict[str, ConversationRecord], list[Verdict]]:
    """The flows, conversations and verdicts of a run of that size."""
    made, conversations, verdicts = [], {}, []
    for n in range(flows):
        flow = Flow(
            id=f"flow-{n}",
            family=f"family-{n % 10}",
            seed_id=f"seed-{n // 2}",
            turns=[ScriptedTurn(user=f"message {t} of flow {n}") for t in range(turns)],
        )
        made.append(flow)
        calls = [
            ToolActivity(
                name=f"tool_{c}", arguments={"n": n}, result="x" * result_chars, result_length=9999
            )
            for c in range(2)
        ]
        conversations[flow.id] = ConversationRecord(
            flow_id=flow.id,
            family=flow.family,
            target="bench",
            turns=[
                TurnRecord(
                    index=t + 1, user=s.user, tool_calls=calls, final_text="done", turn_ms=800
                )
                for t, s in enumerate(flow.turns or [])
            ],
            isolated=False,
            started_at="2026-01-01T00:00:00Z",
            seconds=2.5,
        )
        kind = "fail" if n % 5 == 0 else "uncertain" if n % 10 == 1 else "pass"
        verdicts.append(
            Verdict(
                flow_id=flow.id,
                verdict=kind,
                owner="model" if kind == "fail" else None,
                failure_category="wrong_tool" if kind == "fail" else None,
                failed_turns=[1] if kind == "fail" else [],
                evidence="Turn 1 called the wrong tool." if kind == "fail" else None,
                decided_by="judge" if kind != "uncertain" else "none",
                reason="judge_invalid" if kind == "uncertain" else None,
            )
        )
    return made, conversations, verdicts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flows", type=int, default=2000)
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--result-chars", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    flows, conversations, verdicts = records(options.flows, options.turns, options.result_chars)
    with tempfile.TemporaryDirectory() as folder:
        run = Path(folder)
        times = []
        for _ in range(options.rounds):
            start = time.perf_counter()
            written = write_report(run, flows, conversations, verdicts)
            times.append(time.perf_counter() - start)
        size = written.page_path.stat().st_size
    print(
        f"{options.flows} flows × {options.turns} turns: summary.json and report.html in "
        f"{statistics.median(times):.2f} s (median of {options.rounds}), page {size / 1e6:.1f} MB"
    )


if __name__ == "__main__":
    main()
