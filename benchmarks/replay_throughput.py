"""Replay end to end against a bare asyncio + httpx loop, on a local server with a fixed latency.

The figure is the ratio of two wall times over the same payloads sent to the same server (a
fresh process of it for each run): a bare loop's, from its first request to its last answer (no
start-up, no reading, no cache, no records), and ``abt replay``'s from process start to exit
(start-up, reading the units, the response cache, every result written, the progress bar on a
terminal and the scoring pass included). A ratio of 1 means abt costs nothing over the bare
loop. Each round runs the hand-written floor below, the bare loop and abt in turn, and prints
each one's share of the limit (concurrency ÷ latency) and abt's ratio; then their medians. Then
the replay process's peak RSS, and the time of a rerun of 10,000 units answered wholly from the
response cache.

The server is the tests' own (``tests/fake_openai.py``), the same for all three clients: a
thread per connection, each request parsed and answered from its content after the latency.
Its sockets send without Nagle's algorithm: an answer's headers and body are two writes, and
with Nagle the body waited for the client's delayed ACK of the headers, 40 ms on every answer
(0.6 s of a 16-wave run, for every client alike, the floor's 0.93 of the limit against 0.97
without). What is left of its own cost, about 1 ms of CPU per request on the cores the client
uses too, is a few milliseconds late on the last answers of a burst.

Then the CPU each call costs, against a server that answers at once (``--cpu-rounds``): the
process's user + system CPU over the calls, divided by the calls, for a hand-written asyncio
HTTP/1.1 client (the floor: one keep-alive connection per worker, nothing but the bytes), the bare
httpx loop, abt's call path in this process (``ModelClient.generate`` on each unit: payload,
request hash, send, answer parsed to a response) and the whole ``abt replay`` process (start-up
taken out: the CPU of a run of every unit less that of a run of one, over the calls between).
Beside them, where a call's CPU goes, each stage measured alone in this process: reading and
checking one unit from the units file (a replay reads each unit twice: planning, then sending),
the payload and its hash (``ModelClient.prepare``), the HTTP POST of a ready payload
(``JsonEndpoint.post``: the body dumped, written, the answer read and parsed), and the engine
(``run_jobs``: the call path plus the result record written, calls.log, counters).
CPU time is far less sensitive to the machine's other load than wall time; the load average is
printed beside it.

    python benchmarks/replay_throughput.py [--units 1000] [--latency 1.0] [--concurrency 64]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx
import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agent_backtest.providers import CallCounters, CallPolicy, ModelClient  # noqa: E402
from agent_backtest.providers.config import ProviderSettings  # noqa: E402
from agent_backtest.providers.http import JsonEndpoint  # noqa: E402
from agent_backtest.providers.openai import OpenAIProvider  # noqa: E402
from agent_backtest.providers.refs import parse_model_ref  # noqa: E402
from agent_backtest.replaying.engine import run_jobs  # noqa: E402
from agent_backtest.replaying.jobs import Job  # noqa: E402
from agent_backtest.runs import ResultWriter  # noqa: E402
from agent_backtest.runs.call_log import CallLog  # noqa: E402
from agent_backtest.trace import LLMRequest  # noqa: E402
from agent_backtest.trace.openai_wire import chat_payload  # noqa: E402
from agent_backtest.units import read_units_file  # noqa: E402
from child_process import installed_env, run_measured  # noqa: E402

TAU = ROOT / "examples" / "tau_airline"
ENV = installed_env(OPENAI_API_KEY="benchmark-key")


def start_server(latency: float) -> tuple[subprocess.Popen[str], str]:
    """The fake server in its own process, so it does not share the client's interpreter."""
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.fake_openai", "--latency", str(latency)],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    return process, process.stdout.readline().strip()


def stop_server(server: subprocess.Popen[str]) -> dict:
    """Stop the server; its count of requests and seconds from first arrival to last answer."""
    assert server.stdin is not None and server.stdout is not None
    server.stdin.close()
    figures = json.loads(server.stdout.readline())
    server.wait()
    return figures


def tau_units_file(work: Path) -> Path:
    """The shipped τ-bench trajectories as a units file in ``work`` (made once)."""
    base = work / "tau-units.jsonl"
    if not base.exists():
        subprocess.run(
            [
                sys.executable,
                "-m",
                "agent_backtest.cli",
                "units",
                str(TAU / "gpt-4o-airline-tasks-00-24.json"),
                "--tools",
                str(TAU / "tools.json"),
                "--recorded-model",
                "gpt-4o",
                "-o",
                str(base),
            ],
            check=True,
            stdout=subprocess.DEVNULL,
            env=ENV,
        )
    return base


def make_units(work: Path, count: int) -> Path:
    """``count`` distinct units: the τ-bench units, repeated with a marker to make each unique."""
    lines = tau_units_file(work).read_text().splitlines()
    out = work / f"units-{count}.jsonl"
    with out.open("w") as handle:
        for index in range(count):
            unit = json.loads(lines[index % len(lines)])
            unit["unit_id"] = f"u-bench-{index:06d}"
            unit["request"]["messages"][0]["content"] += f"\n(copy {index})"
            handle.write(json.dumps(unit) + "\n")
    return out


def request_payloads(units: Path) -> list[dict]:
    """Each unit's request as the chat completions payload a client posts to the server."""
    return [chat_payload(unit.request, "bench", 0)[0] for unit in read_units_file(units)]


def run_replay(
    units: Path, url: str, out: Path, concurrency: int, cache: Path | None
) -> tuple[float, int]:
    """Seconds from start to exit and peak RSS (KiB) of one ``abt replay`` process, on a
    terminal as a person runs it."""
    command = [
        str(Path(sys.executable).parent / "abt"),
        "replay",
        str(units),
        "--model",
        "openai/bench",
        "--base-url",
        url,
        "--out",
        str(out),
        "--overwrite",
        "--concurrency",
        str(concurrency),
        "--timeout",
        "60",
    ]
    command += ["--cache-dir", str(cache)] if cache else ["--no-cache"]
    return run_measured(command, ENV, terminal=True)


async def bare_loop(payloads: list[dict], url: str, concurrency: int) -> float:
    """Seconds for a plain asyncio + httpx loop to send every payload (no cache, no records)."""
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    gate = asyncio.Semaphore(concurrency)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=60) as client:

        async def send(payload: dict) -> None:
            async with gate:
                response = await client.post("/chat/completions", json=payload)
                response.json()

        started = time.perf_counter()
        await asyncio.gather(*(send(p) for p in payloads))
        return time.perf_counter() - started


def measure_round(
    work: Path, units: Path, payloads: list[dict], args: argparse.Namespace, round_: int
) -> tuple[float, float, float, int]:
    """(floor seconds, bare loop seconds, abt seconds, abt peak RSS KiB), each on a fresh
    server."""
    server, url = start_server(args.latency)
    try:
        started = time.perf_counter()
        asyncio.run(floor_loop(payloads, url, args.concurrency))
        floor = time.perf_counter() - started
    finally:
        stop_server(server)
    server, url = start_server(args.latency)
    try:
        bare = asyncio.run(bare_loop(payloads, url, args.concurrency))
    finally:
        stop_server(server)
    server, url = start_server(args.latency)
    try:
        cache = work / f"cache-{round_}"  # empty: every answer is a call, and is stored
        seconds, rss = run_replay(units, url, work / "run", args.concurrency, cache)
    finally:
        busy = stop_server(server)
    if busy["requests"] != len(payloads):
        raise SystemExit(f"abt sent {busy['requests']} requests for {len(payloads)} units")
    return floor, bare, seconds, rss


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--units", type=int, default=1000)
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3, help="0: only the cache rerun")
    parser.add_argument("--cached-units", type=int, default=10_000)
    parser.add_argument("--cpu-rounds", type=int, default=3, help="0: no per-call CPU")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="abt-replay-bench-"))
    limit = args.concurrency / args.latency
    units = make_units(work, args.units)
    payloads = request_payloads(units)
    size = sum(len(json.dumps(p)) for p in payloads) / len(payloads) / 1000
    print(
        f"{args.units} units, mean payload {size:.1f} KB, concurrency {args.concurrency}, "
        f"latency {args.latency:g} s: limit {limit:.1f} requests/s, "
        f"{args.units / limit:.1f} s at the limit"
    )
    if args.cpu_rounds:
        compare_cpu_per_call(work, units, payloads, args)
    if args.rounds:
        compare_with_bare_loop(work, units, payloads, args)
    if args.cached_units:
        rerun_from_cache(work, args)


def compare_with_bare_loop(
    work: Path, units: Path, payloads: list[dict], args: argparse.Namespace
) -> None:
    """Print each round's wall times as fractions of the limit and abt's ratio to the bare
    loop, then their medians and abt's peak RSS."""
    limit = args.concurrency / args.latency
    ratios, shares, floors, peak = [], [], [], 0
    for round_ in range(args.rounds):
        floor, bare, seconds, rss = measure_round(work, units, payloads, args, round_)
        ratios.append(bare / seconds)
        shares.append(args.units / seconds / limit)
        floors.append(args.units / floor / limit)
        peak = max(peak, rss)
        print(
            f"  floor {floor:6.2f} s ({floors[-1]:.3f} of the limit) · bare loop {bare:6.2f} s "
            f"({args.units / bare / limit:.3f}) · abt replay {seconds:6.2f} s start to exit "
            f"({shares[-1]:.3f}) · ratio to the bare loop {bare / seconds:.3f}"
        )
    print(
        f"abt replay end to end: {statistics.median(shares):.3f} of the limit "
        f"({min(shares):.3f}–{max(shares):.3f}; the floor {statistics.median(floors):.3f}), "
        f"÷ bare loop median {statistics.median(ratios):.3f} "
        f"({min(ratios):.3f}–{max(ratios):.3f}); peak RSS {peak / 1024:.0f} MB; load average "
        f"{os.getloadavg()[0]:.1f}"
    )


def cpu_seconds(who: int = resource.RUSAGE_SELF) -> float:
    """User + system CPU seconds so far, of this process or of its waited-for children."""
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def on_quick_server(measure: Callable[[str], float]) -> float:
    """``measure(url)`` against a fresh server that answers at once."""
    server, url = start_server(0.0)
    try:
        return measure(url)
    finally:
        stop_server(server)


async def floor_loop(payloads: list[dict], url: str, concurrency: int) -> None:
    """The least a Python client can do: ``concurrency`` workers, each with one keep-alive
    HTTP/1.1 connection written and read by hand (Content-Length answers only, as the server
    sends), each answer parsed."""
    host, port = url.removeprefix("http://").split("/")[0].split(":")
    path = "/" + url.removeprefix("http://").split("/", 1)[1] + "/chat/completions"
    head = f"POST {path} HTTP/1.1\r\nhost: {host}:{port}\r\ncontent-type: application/json\r\n"
    queue = iter(payloads)

    async def worker() -> None:
        reader, writer = await asyncio.open_connection(host, int(port))
        for payload in queue:
            body = orjson.dumps(payload)
            writer.write(f"{head}content-length: {len(body)}\r\n\r\n".encode() + body)
            header = await reader.readuntil(b"\r\n\r\n")
            length = int(header.lower().split(b"content-length:")[1].split(b"\r\n")[0])
            orjson.loads(await reader.readexactly(length))
        writer.close()

    await asyncio.gather(*(worker() for _ in range(concurrency)))


def bench_client(
    url: str, concurrency: int, counters: CallCounters | None = None
) -> tuple[OpenAIProvider, ModelClient]:
    """The OpenAI provider at ``url`` and a client of it that never retries."""
    settings = ProviderSettings(type="openai", base_url=url)
    provider = OpenAIProvider("openai", settings, "benchmark-key", concurrency)
    return provider, ModelClient(provider, CallPolicy(timeout=60, max_retries=0), counters=counters)


async def abt_call_path(requests: list[LLMRequest], url: str, concurrency: int) -> None:
    """abt's own call path, in this process: ``ModelClient.generate`` for every request
    (payload, request hash, send, the answer read and checked into a response), no cache, no
    records."""
    provider, client = bench_client(url, concurrency)
    queue = iter(requests)

    async def worker() -> None:
        for request in queue:
            outcome = await client.generate(request, "bench", 0)
            if outcome.error is not None:
                raise SystemExit(f"abt's call path failed: {outcome.error.detail}")

    try:
        await asyncio.gather(*(worker() for _ in range(concurrency)))
    finally:
        await provider.aclose()


async def abt_post(payloads: list[dict], url: str, concurrency: int) -> None:
    """abt's HTTP POST alone, in this process: ``JsonEndpoint.post`` of every ready payload
    (the body dumped, written, the answer read within its cap and parsed as JSON)."""
    endpoint = JsonEndpoint(url, {}, concurrency)
    headers = {"content-type": "application/json", "authorization": "Bearer benchmark-key"}
    queue = iter(payloads)

    async def worker() -> None:
        for payload in queue:
            await endpoint.post("/chat/completions", payload, headers, 60, ("benchmark-key",))

    try:
        await asyncio.gather(*(worker() for _ in range(concurrency)))
    finally:
        await endpoint.aclose()


async def abt_engine(jobs: list[Job], url: str, concurrency: int, work: Path) -> None:
    """abt's replay engine, in this process, on jobs already read: ``run_jobs`` with the call
    path, each result record written, calls.log and the counters, as a replay runs them."""
    work = Path(tempfile.mkdtemp(dir=work))  # a fresh run's files each time
    calls = CallLog(work / "calls.log", "candidate")
    provider, client = bench_client(url, concurrency, CallCounters(on_call=calls.append))
    writer = ResultWriter(work / "results.jsonl")
    clients = {parse_model_ref("openai/bench"): client}
    try:
        await run_jobs(jobs, clients, writer, concurrency, asyncio.Event())
    finally:
        writer.close()
        calls.close()
        await provider.aclose()


def cpu_of(work: Callable[[], object]) -> float:
    """CPU seconds this process spends on ``work()``."""
    started = cpu_seconds()
    work()
    return cpu_seconds() - started


def cpu_of_loop(loop: Awaitable[object]) -> float:
    """CPU seconds this process spends running ``loop`` to the end."""
    started = cpu_seconds()
    asyncio.run(loop)
    return cpu_seconds() - started


def cpu_of_replay(units: Path, url: str, work: Path, concurrency: int) -> float:
    """CPU seconds of one ``abt replay`` process (and the few lines that start it) on ``units``."""
    started = cpu_seconds(resource.RUSAGE_CHILDREN)
    run_replay(units, url, work / "cpu-run", concurrency, None)
    return cpu_seconds(resource.RUSAGE_CHILDREN) - started


def compare_cpu_per_call(
    work: Path, units: Path, payloads: list[dict], args: argparse.Namespace
) -> None:
    """Per-call CPU (ms) of the floor, the bare httpx loop, abt's call path and ``abt replay``,
    interleaved over ``--cpu-rounds``; medians with min–max, and the load average."""
    one = work / "units-one.jsonl"
    one.write_text(units.read_text().split("\n", 1)[0] + "\n")
    calls, width = len(payloads), args.concurrency
    model = parse_model_ref("openai/bench")
    jobs = [Job(unit, 0, 0, model) for unit in read_units_file(units)]
    requests = [job.unit.request for job in jobs]
    _, preparing = bench_client("http://127.0.0.1:9/v1", width)  # prepares, never sends
    figures: dict[str, list[float]] = {}
    peers: dict[str, Callable[[], float]] = {
        "asyncio HTTP/1.1 floor": lambda: on_quick_server(
            lambda url: cpu_of_loop(floor_loop(payloads, url, width))
        ),
        "bare httpx loop": lambda: on_quick_server(
            lambda url: cpu_of_loop(bare_loop(payloads, url, width))
        ),
        "stage: one read of a unit": lambda: cpu_of(lambda: sum(1 for _ in read_units_file(units))),
        "stage: payload + sha": lambda: cpu_of(
            lambda: [preparing.prepare(request, "bench", 0) for request in requests]
        ),
        "stage: HTTP POST": lambda: on_quick_server(
            lambda url: cpu_of_loop(abt_post(payloads, url, width))
        ),
        "abt call path (in process)": lambda: on_quick_server(
            lambda url: cpu_of_loop(abt_call_path(requests, url, width))
        ),
        "abt engine (in process)": lambda: on_quick_server(
            lambda url: cpu_of_loop(abt_engine(jobs, url, width, work))
        ),
        "abt replay process": lambda: (
            on_quick_server(lambda url: cpu_of_replay(units, url, work, width))
            - on_quick_server(lambda url: cpu_of_replay(one, url, work, width))
        ),
    }
    loads = []
    for _ in range(args.cpu_rounds):
        for name, measure in peers.items():
            loads.append(os.getloadavg()[0])
            divisor = calls - 1 if name == "abt replay process" else calls
            figures.setdefault(name, []).append(measure() / divisor * 1000)
    print(f"per-call CPU at zero latency, {calls} calls, median (min–max) over {args.cpu_rounds}:")
    for name, values in figures.items():
        print(
            f"  {name:28} {statistics.median(values):6.3f} ms ({min(values):.3f}–{max(values):.3f})"
        )
    print(f"  load average (1 min) during: {min(loads):.1f}–{max(loads):.1f}")


def rerun_from_cache(work: Path, args: argparse.Namespace) -> None:
    """Fill the cache with ``--cached-units`` answers, then time a rerun that it answers."""
    server, url = start_server(0.0)
    try:
        cached = make_units(work, args.cached_units)
        cache = work / "cache-full"
        fill, _ = run_replay(cached, url, work / "fill", args.concurrency, cache)
        rerun, rss = run_replay(cached, url, work / "rerun", args.concurrency, cache)
    finally:
        busy = stop_server(server)
    print(
        f"full-cache rerun of {args.cached_units} units: {rerun:.1f} s, "
        f"{busy['requests'] - args.cached_units} calls sent (filling the cache took "
        f"{fill:.1f} s); peak RSS {rss / 1024:.0f} MB"
    )


if __name__ == "__main__":
    main()
