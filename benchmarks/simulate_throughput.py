"""``abt simulate run`` against a local agent with a fixed latency per turn, next to a bare
asyncio + httpx loop sending the same requests to the same server.

With ``--conversations N`` of ``--turns T`` turns each, ``--concurrency C`` and a latency of
``L`` seconds a turn, no runner can finish before ceil(N / C) * T * L seconds (each
conversation's turns go one after another). Each round prints the bare loop's wall time (a
session, T streamed turns read as server-sent events, a teardown, per conversation) and the
run's (the library call: planning, sessions, every record and session appended, run.json),
and the figure is their ratio: 1 means the runner costs nothing over the bare loop. The agent
server runs in a process of its own.

    python benchmarks/simulate_throughput.py [--conversations 200] [--turns 3] [--latency 0.1]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
from httpx_sse import aconnect_sse  # noqa: E402
from tests.simulate.agent_server import create_notes_db  # noqa: E402
from tests.simulate.conftest import SSE_ANSWER, flows_file, scripted, target_file  # noqa: E402

from agent_backtest.api.simulate import simulate_run  # noqa: E402


async def bare_loop(base_url: str, conversations: int, turns: int, concurrency: int) -> float:
    """Wall time of the same conversations sent by a plain client."""
    gate = asyncio.Semaphore(concurrency)
    async with httpx.AsyncClient(base_url=base_url, timeout=60) as client:

        async def one(n: int) -> None:
            async with gate:
                session = (await client.post("/sessions")).json()["id"]
                for t in range(turns):
                    body = {"session": session, "message": f"turn {t} of {n}"}
                    async with aconnect_sse(client, "POST", "/stream", json=body) as source:
                        async for _ in source.aiter_sse():
                            pass
                await client.delete(f"/sessions/{session}")

        started = time.perf_counter()
        await asyncio.gather(*(one(n) for n in range(conversations)))
        return time.perf_counter() - started


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
        server = subprocess.Popen(
            [sys.executable, "-m", "tests.simulate.agent_server", "--log", str(work / "log"),
             "--db", str(db), "--delay", str(arguments.latency)],
            cwd=ROOT, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert server.stdout is not None
        base_url = f"http://127.0.0.1:{server.stdout.readline().strip()}"
        try:
            target = target_file(work / "t.toml", base_url, SSE_ANSWER)
            floor = (
                math.ceil(arguments.conversations / arguments.concurrency)
                * arguments.turns
                * arguments.latency
            )
            ratios = []
            for round_ in range(arguments.rounds):
                bare = asyncio.run(
                    bare_loop(
                        base_url,
                        arguments.conversations,
                        arguments.turns,
                        arguments.concurrency,
                    )
                )
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
                ratios.append(bare / wall)
                print(
                    f"round {round_ + 1}: bare loop {bare:.2f} s, abt {wall:.2f} s (floor "
                    f"{floor:.2f} s): {bare / wall:.2f}"
                )
        finally:
            server.terminate()
            server.wait()
    print(f"median: {statistics.median(ratios):.2f} of the bare loop's throughput")


if __name__ == "__main__":
    main()
