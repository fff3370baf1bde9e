"""The speed targets side by side with their peers, measured in one interleaved run.

Each round takes every figure once, in turn, so a change in the machine's load moves all of
them alike; the table gives each figure's median over the rounds with its range, the target,
and the peer measured in the same rounds (the same work done by the simplest thing that does
it). The machine's load average is printed before each round and at the end: on a shared
machine a figure means little without it. CPU seconds are the child processes' own (user and
system, as ``wait4`` reports them), which waiting for a core does not inflate; wall seconds are
what a user waits.

Figures:

* ingest: ``abt ingest`` of synthetic OTLP JSON Lines (``ingest_throughput.py``'s), MB/s of
  CPU and of wall time; peer: an ``orjson.loads`` loop over the same lines, in this process;
* cached rerun: ``abt replay`` of ``--cached-units`` units whose answers are all in the response
  cache (filled once, before the rounds), wall seconds, and the calls the server saw;
* matcher: BFCL's ``ast_checker`` time over one pass of the pairs divided by the matcher's
  (answer keys, and production-style goldens; ``score_speed.py``'s passes), on the project's
  pairs and on the fresh ones of BFCL's live categories;
* per-call CPU: the CPU a replay spends per call at zero latency, ``--no-score`` and
  ``--no-cache``, taken as the difference between ``--calls`` and a tenth of them (start-up and
  fixed costs cancel out); peers: a bare asyncio + httpx loop and a raw asyncio HTTP/1.1 client,
  each a fresh process, their sending loops measured the same way;
* replay at the wire: ``abt replay`` of ``--units`` units at ``--concurrency`` against a server
  answering after ``--latency`` seconds, as a fraction of the limit (concurrency ÷ latency
  requests a second), from process start to exit; peers: the bare loop and the raw asyncio
  floor, each from its first request (the server is the tests' own, a fresh process of it for
  each client, as ``replay_throughput.py`` describes);
* ``--help``: the help of every group and command (the app's command tree walked), wall
  seconds from process start to exit, and the slowest in wall and in CPU seconds;
* bench memory: peak RSS of ``abt bench run tau_airline`` at ``--episodes`` (the agent a local
  server answering at once, the user scripted), as a ratio of the larger run to the smaller.

    python benchmarks/speed_table.py [--rounds 3] [--skip bench replay ...]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import cli_startup  # noqa: E402
import ingest_throughput  # noqa: E402
import replay_throughput  # noqa: E402
from child_process import installed_env, run_measured, time_command  # noqa: E402

ENV = installed_env(OPENAI_API_KEY="benchmark-key")
ABT = [sys.executable, "-m", "agent_backtest.cli"]


@dataclass
class Figure:
    """One row of the table: the values of its rounds, its target and how to read it."""

    name: str
    unit: str
    target: str
    values: list[float] = field(default_factory=list)

    def cells(self) -> str:
        """Median and range, formatted."""
        if not self.values:
            return f"{'not measured':>30}"
        low, mid, high = min(self.values), statistics.median(self.values), max(self.values)
        return f"{mid:10.3f} ({low:.3f}–{high:.3f}) {self.unit:<10}"


class Table:
    """Figures in the order they were first measured."""

    def __init__(self) -> None:
        self.figures: dict[str, Figure] = {}

    def add(self, name: str, value: float, unit: str, target: str = "") -> None:
        """One round's value of a figure, printed as it comes (a long run stopped early has
        said what it measured)."""
        figure = self.figures.setdefault(name, Figure(name, unit, target))
        figure.values.append(value)
        print(f"  {name.strip()}: {value:.3f} {unit}", flush=True)

    def print(self) -> None:
        """The table, with each figure's target."""
        print(f"\n{'figure':<48} {'median (min–max)':>33}  target")
        for figure in self.figures.values():
            print(f"{figure.name:<48} {figure.cells()} {figure.target}")


def load() -> str:
    """The load averages over 1, 5 and 15 minutes."""
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


# --- ingest -----------------------------------------------------------------------------------


def ingest_round(table: Table, otlp: Path, work: Path) -> None:
    """abt ingest, then an orjson loop over the same lines."""
    megabytes = otlp.stat().st_size / 1e6
    wall, cpu = time_command([*ABT, "ingest", str(otlp), "-o", str(work / "sessions.jsonl")], ENV)
    table.add("ingest, CPU", megabytes / cpu, "MB/s", "≥ 50")
    table.add("ingest, wall", megabytes / wall, "MB/s", "≥ 50")
    started = time.process_time()
    with otlp.open("rb") as handle:
        for line in handle:
            orjson.loads(line)
    table.add("  peer: orjson.loads loop, CPU", megabytes / (time.process_time() - started), "MB/s")


# --- cached rerun -----------------------------------------------------------------------------


def replay_command(units: Path, url: str, out: Path, concurrency: int, *extra: str) -> list[str]:
    """``abt replay`` of ``units`` against the OpenAI-compatible server at ``url``."""
    return [
        *ABT, "replay", str(units), "--model", "openai/bench", "--base-url", url,
        "--out", str(out), "--overwrite", "--concurrency", str(concurrency), "--timeout", "60",
        *extra,
    ]  # fmt: skip


@dataclass
class CachedRerun:
    """A server, a units file and a response cache holding every answer to it."""

    server: subprocess.Popen[str]
    url: str
    units: Path
    cache: Path

    @classmethod
    def fill(cls, work: Path, count: int) -> CachedRerun:
        """Start the server and fill the cache with one replay of ``count`` units."""
        server, url = replay_throughput.start_server(0.0)
        units = replay_throughput.make_units(work, count)
        cache = work / "cache-full"
        fill = replay_command(units, url, work / "fill", 64, "--cache-dir", str(cache))
        time_command(fill, ENV)
        return cls(server, url, units, cache)

    def round(self, table: Table, work: Path) -> None:
        """One rerun, answered wholly from the cache."""
        count = len(self.units.read_bytes().splitlines())
        command = replay_command(self.units, self.url, work / "rerun", 64, "--cache-dir")
        wall, cpu = time_command([*command, str(self.cache)], ENV)
        table.add(f"cached rerun of {count:,} units, wall", wall, "s", "≤ 2")
        table.add(f"cached rerun of {count:,} units, CPU", cpu, "s")

    def stop(self, table: Table, count: int) -> None:
        """Stop the server; the calls beyond the filling run's are the reruns' calls."""
        calls = replay_throughput.stop_server(self.server)["requests"] - count
        table.add("cached reruns: calls sent", calls, "calls", "0")


# --- the matcher against BFCL -----------------------------------------------------------------


def matcher_passes() -> dict[str, dict[str, Callable[[], None]]] | None:
    """Per pair set (the project's, and the fresh one of BFCL's categories it was not tuned
    on), one pass of BFCL's checker and of the matcher (answer keys, goldens); None when
    bfcl-eval is not installed."""
    from tests.scoring.bfcl_cases import load_checker

    import score_speed

    checker = load_checker()
    if checker is None:
        return None
    sets = {}
    for label, pairs in score_speed.pair_sets().items():
        passes = sets[label] = {
            "bfcl": score_speed.bfcl_pass(checker, pairs),
            "key": score_speed.key_pass(pairs),
            "golden": score_speed.golden_pass(pairs),
        }
        for run in passes.values():  # warm-up: imports and the interpreter's caches
            run()
    return sets


def matcher_round(table: Table, sets: dict[str, dict[str, Callable[[], None]]]) -> None:
    """BFCL's time over the matcher's on each pair set, each pass back to back."""
    import score_speed

    target = "≥ 1.2"
    for label, passes in sets.items():
        seconds = {name: score_speed.timed(run) for name, run in passes.items()}
        for name, reference in (("key", "answer keys"), ("golden", "goldens")):
            table.add(
                f"matcher ÷ BFCL speed, {label} pairs, {reference}",
                seconds["bfcl"] / seconds[name],
                "×",
                target,
            )


# --- per-call CPU at zero latency -------------------------------------------------------------


def per_call_round(table: Table, work: Path, units: Path, calls: int, concurrency: int) -> None:
    """CPU per call at zero latency, as the difference between ``calls`` calls and a tenth of
    them (so start-up and fixed costs cancel out): abt replay's whole process, each peer's
    sending loop (its payloads made before the loop starts)."""
    few = max(1, calls // 10)
    server, url = replay_throughput.start_server(0.0)
    try:
        replay = [head(work, units, n) for n in (few, calls)]
        out = work / "calls"
        flags = ("--no-cache", "--no-score")
        cpu_few, cpu_all = (
            time_command(replay_command(path, url, out, concurrency, *flags), ENV)[1]
            for path in replay
        )
        per_call = (cpu_all - cpu_few) / (calls - few) * 1000
        table.add("abt replay, CPU per call at 0 latency", per_call, "ms", "≤ 0.6")
        for kind, name in (("httpx", "bare asyncio + httpx loop"), ("raw", "raw asyncio floor")):
            few_cpu, all_cpu = (
                float(
                    subprocess.run(
                        peer_command(kind, url, path, concurrency), capture_output=True, check=True
                    ).stdout
                )
                for path in replay
            )
            per_call = (all_cpu - few_cpu) / (calls - few) * 1000
            table.add(f"  peer: {name}, CPU per call", per_call, "ms")
    finally:
        replay_throughput.stop_server(server)


def head(work: Path, units: Path, count: int) -> Path:
    """The first ``count`` units of ``units`` (written once)."""
    path = work / f"head-{count}.jsonl"
    if not path.exists():
        with units.open("rb") as source, path.open("wb") as out:
            for _, line in zip(range(count), source, strict=False):
                out.write(line)
    return path


def peer_command(kind: str, url: str, units: Path, concurrency: int) -> list[str]:
    """This script, run as one of the peer clients."""
    return [sys.executable, __file__, "peer", kind, url, str(units), str(concurrency)]


async def httpx_loop(url: str, bodies: list[bytes], concurrency: int) -> None:
    """Post every body with httpx, ``concurrency`` at once, and parse each answer."""
    import httpx

    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    gate = asyncio.Semaphore(concurrency)
    headers = {"content-type": "application/json", "authorization": "Bearer benchmark-key"}
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=60) as client:

        async def send(body: bytes) -> None:
            async with gate:
                response = await client.post("/chat/completions", content=body, headers=headers)
                orjson.loads(response.content)

        await asyncio.gather(*(send(body) for body in bodies))


async def raw_loop(url: str, bodies: list[bytes], concurrency: int) -> None:
    """Post every body over ``concurrency`` kept-alive connections written by hand: the floor
    for a Python client (no pool, no header objects, answers read by their length)."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    path = f"{parts.path}/chat/completions".encode()
    pending = iter(bodies)

    async def connection() -> None:
        reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
        for body in pending:
            writer.write(
                b"POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"
                b"Authorization: Bearer benchmark-key\r\nContent-Length: %d\r\n\r\n"
                % (path, parts.netloc.encode(), len(body))
            )
            writer.write(body)
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(
                int(line.split(b":", 1)[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            )
            orjson.loads(await reader.readexactly(length))
        writer.close()

    await asyncio.gather(*(connection() for _ in range(concurrency)))


def run_peer(kind: str, url: str, units: str, concurrency: str) -> None:
    """The peer client ``kind`` posting every unit of ``units``; prints the CPU seconds its
    sending loop took."""
    bodies = [orjson.dumps(payload) for payload in replay_throughput.request_payloads(Path(units))]
    loop = httpx_loop if kind == "httpx" else raw_loop
    started = time.process_time()
    asyncio.run(loop(url, bodies, int(concurrency)))
    print(time.process_time() - started)


# --- replay at the wire's pace ----------------------------------------------------------------


def wire_round(
    table: Table,
    work: Path,
    units: Path,
    payloads: list[dict],
    args: argparse.Namespace,
    round_: int,
) -> None:
    """abt replay, the bare loop and the floor at ``--latency`` on ``units`` (whose requests
    are ``payloads``), as fractions of the limit."""
    floor, bare, seconds, _ = replay_throughput.measure_round(work, units, payloads, args, round_)
    at_limit = args.units * args.latency / args.concurrency
    table.add(f"abt replay at {args.latency:g} s latency ÷ limit", at_limit / seconds, "", "≥ 0.95")
    table.add("  peer: bare asyncio + httpx loop ÷ limit", at_limit / bare, "")
    table.add("  peer: raw asyncio floor ÷ limit", at_limit / floor, "")


# --- start-up ---------------------------------------------------------------------------------


def help_round(table: Table, lines: list[str]) -> None:
    """Each command line of ``lines`` once (every command's --help): its wall time, then the
    slowest of them in wall and in CPU time (which a busy machine inflates less)."""
    base = cli_startup.abt_command()
    walls, cpus = [], []
    for line in lines:
        wall, cpu = cli_startup.time_once([*base, *line.split()])
        table.add(f"abt {line}", wall, "s", "≤ 0.15")
        walls.append(wall)
        cpus.append(cpu)
    table.add(f"slowest of {len(lines)} --help", max(walls), "s", "≤ 0.15")
    table.add(f"slowest of {len(lines)} --help, CPU", max(cpus), "s")


# --- bench memory -----------------------------------------------------------------------------


def bench_round(table: Table, work: Path, episodes: list[int], round_: int) -> None:
    """Peak RSS of abt bench run at each count of episodes (50 cases, rollouts to match)."""
    server, url = replay_throughput.start_server(0.0)
    try:
        config = work / "abt.toml"
        config.write_text(f'[providers.openai]\ntype = "openai"\nbase_url = "{url}"\n')
        peaks = {}
        for count in episodes:
            cases = min(count, 50)
            command = [
                *ABT, "bench", "run", "tau_airline", "--agent", "openai/bench", "--user",
                "scripted", "--config", str(config), "--limit", str(cases), "--rollouts",
                str(count // cases), "--no-cache", "--concurrency", "8",
                "--out", str(work / f"bench-{count}-{round_}"),
            ]  # fmt: skip
            peaks[count] = run_measured(command, ENV, quiet=True)[1] / 1024
            table.add(f"bench run, {count} episodes, peak RSS", peaks[count], "MB")
        low, high = min(episodes), max(episodes)
        table.add(f"bench peak RSS {high} ÷ {low} episodes", peaks[high] / peaks[low], "×", "≤ 1.1")
    finally:
        replay_throughput.stop_server(server)


# --- the run ----------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--ingest-mb", type=int, default=100)
    parser.add_argument("--cached-units", type=int, default=10_000)
    parser.add_argument("--calls", type=int, default=2000, help="calls for the per-call CPU")
    parser.add_argument("--units", type=int, default=1000, help="units at --latency")
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--episodes", type=int, nargs=2, default=[50, 400])
    parser.add_argument("--skip", nargs="*", default=[], choices=FIGURES)
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="abt-speed-table-"))
    work.mkdir(parents=True, exist_ok=True)
    wanted = [name for name in FIGURES if name not in args.skip]
    # the package's modules compiled once, as an install leaves them, before anything is timed
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "src")], check=True)
    print(f"load average at the start: {load()}; work in {work}", flush=True)
    table = Table()
    otlp = work / f"otlp-{args.ingest_mb}mb.jsonl"
    if "ingest" in wanted and not otlp.exists():
        ingest_throughput.write_input(otlp, args.ingest_mb * 1_000_000)
    rerun = CachedRerun.fill(work, args.cached_units) if "rerun" in wanted else None
    passes = matcher_passes() if "matcher" in wanted else None
    if "matcher" in wanted and passes is None:
        print("bfcl-eval is not installed (pip install --no-deps bfcl-eval): no matcher rows")
    units = replay_throughput.make_units(work, args.calls) if "calls" in wanted else None
    wire_units = replay_throughput.make_units(work, args.units) if "replay" in wanted else None
    wire_payloads = replay_throughput.request_payloads(wire_units) if wire_units else []
    help_lines = cli_startup.command_lines() if "help" in wanted else []
    for line in help_lines:  # a first run of each writes its compiled modules
        cli_startup.time_once([*cli_startup.abt_command(), *line.split()])
    try:
        for round_ in range(args.rounds):
            print(f"round {round_ + 1} of {args.rounds}: load average {load()}", flush=True)
            if "ingest" in wanted:
                ingest_round(table, otlp, work)
            if rerun is not None:
                rerun.round(table, work)
            if passes is not None:
                matcher_round(table, passes)
            if units is not None:
                per_call_round(table, work, units, args.calls, args.concurrency)
            if wire_units is not None:
                wire_round(table, work, wire_units, wire_payloads, args, round_)
            if "help" in wanted:
                help_round(table, help_lines)
            if "bench" in wanted:
                bench_round(table, work, args.episodes, round_)
    finally:
        if rerun is not None:
            rerun.stop(table, args.cached_units)
    table.print()
    print(f"\nload average at the end: {load()} ({os.cpu_count()} cores)")


FIGURES = ["ingest", "rerun", "matcher", "calls", "replay", "help", "bench"]


if __name__ == "__main__":
    if sys.argv[1:2] == ["peer"]:
        run_peer(*sys.argv[2:6])
    else:
        main()
