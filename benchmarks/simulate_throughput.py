"""``abt simulate run`` against a local agent with a fixed latency per turn: how close the run
comes to the floor that the agent's latency sets.

With ``--conversations N`` of ``--turns T`` turns each, ``--concurrency C`` and a latency of
``L`` seconds a turn, no runner can finish before ceil(N / C) * T * L seconds (each
conversation's turns go one after another). The figure is that floor divided by the run's wall
time (the library call: planning, sessions, every record and session appended, run.json), so 1
means the runner adds nothing to what the agent takes. Each round uses a fresh run directory.

    python benchmarks/simulate_throughput.py [--conversations 200] [--turns 3] [--latency 0.1]
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.simulate.agent_server import AgentServer, create_notes_db  # noqa: E402
from tests.simulate.conftest import SSE_ANSWER, flows_file, scripted, target_file  # noqa: E402

from agent_backtest.api.simulate import simulate_run  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=200)
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        db = create_notes_db(work / "notes.db", ["one", "two"])
        flows = [
            scripted(f"c{n}", *[f"turn {t} of {n}" for t in range(arguments.turns)])
            for n in range(arguments.conversations)
        ]
        path = flows_file(work / "flows.jsonl", flows)
        with AgentServer(work / "agent.log", db, delay=arguments.latency) as agent:
            target = target_file(work / "t.toml", agent.base_url, SSE_ANSWER)
            floor = (
                math.ceil(arguments.conversations / arguments.concurrency)
                * arguments.turns
                * arguments.latency
            )
            ratios = []
            for round_ in range(arguments.rounds):
                started = time.perf_counter()
                done = simulate_run(
                    path,
                    target=target,
                    out=work / f"run{round_}",
                    concurrency=arguments.concurrency,
                    skip_judge=True,
                )
                wall = time.perf_counter() - started
                assert done.manifest.counts.conversations == arguments.conversations
                ratios.append(floor / wall)
                print(f"round {round_ + 1}: {wall:.2f} s (floor {floor:.2f} s): {floor / wall:.2f}")
    print(f"median: {statistics.median(ratios):.2f} of the floor the agent's latency sets")


if __name__ == "__main__":
    main()
