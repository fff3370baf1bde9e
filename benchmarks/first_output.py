"""Seconds from start to the first line each job prints, read through a pipe as a CI log reads it.

Each job runs on shipped data as a fresh process (its output a pipe, where no progress bar is
drawn), N times; the table gives the minimum, median and maximum seconds to its first line, to
its first status line (what it is doing), and to its exit, with the machine's load average:

- replay: the shipped cassette's 2 units on the embedded model (``local/smollm2``, loaded by the
  run);
- simulate: one scripted conversation through the keyword model of ``examples/keyword_model``
  served over HTTP as the agent;
- bench: two τ-bench airline cases with the keyword model as the agent and a scripted user;
- profile: the 100 shipped τ-bench airline trajectories.

    python benchmarks/first_output.py [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
STATUS = re.compile(r"^(replay|simulate|bench): ")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def jobs(work: Path, model_url: str) -> dict[str, list[str]]:
    """Each job's command line (after ``abt``), on shipped data."""
    (work / "flows.yaml").write_text(
        "- {id: one, family: chat, turns: [{user: 'what is reservation ABC123?'}]}\n",
        encoding="utf-8",
    )
    (work / "target.toml").write_text(
        f'name = "keyword"\ntype = "http"\nbase_url = "{model_url}"\n[turn]\n'
        'path = "/chat/completions"\n'
        'body = { model = "rules", messages = [{ role = "user", content = "${message}" }] }\n'
        '[answer]\nformat = "json"\ntext = "choices.0.message.content"\n',
        encoding="utf-8",
    )
    (work / "abt.toml").write_text(
        f'[providers.keyword]\ntype = "openai"\nbase_url = "{model_url}"\napi_key_env = ""\n',
        encoding="utf-8",
    )
    examples = REPO / "examples"
    return {
        "replay": ["replay", str(examples / "traces" / "cassette-openai-tool-calls.yaml"),
                   "--model", "local/smollm2", "--no-cache", "--out", "{out}"],
        "simulate": ["simulate", "run", "flows.yaml", "--target", "target.toml", "--out",
                     "{out}", "--skip-judge"],
        "bench": ["bench", "run", "tau_airline", "--agent", "keyword/rules", "--user",
                  "scripted", "--limit", "2", "--no-cache", "--out", "{out}"],
        "profile": ["profile", str(examples / "tau_airline" / "gpt-4o-airline-tasks-00-24.json")],
    }  # fmt: skip


def time_job(args: list[str], cwd: Path) -> tuple[float, float, float]:
    """Seconds to the first line, to the first status line (else the first line), to exit."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "200"}
    env.pop("FORCE_COLOR", None)  # rich would draw its bars into the pipe, as on a terminal
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "agent_backtest.cli", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert process.stdout is not None
    first = status = None
    for line in process.stdout:
        now = time.perf_counter() - started
        first = first if first is not None else now
        if status is None and STATUS.match(line):
            status = now
    if process.wait() != 0:
        raise SystemExit(f"failed ({process.returncode}): abt {' '.join(args)}")
    ended = time.perf_counter() - started
    assert first is not None
    return first, status if status is not None else first, ended


def figures(values: list[float]) -> str:
    return f"{min(values):6.2f} {statistics.median(values):6.2f} {max(values):6.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    options = parser.parse_args()
    port = free_port()
    model = subprocess.Popen(
        [sys.executable, "-m", "examples.keyword_model", "--port", str(port)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert model.stdout is not None
        ready = model.stdout.readline()  # printed once its port is bound: "... serving on URL"
        if not ready:
            raise SystemExit("the keyword model did not start (see its error above)")
        print(ready, end="")
        with tempfile.TemporaryDirectory() as folder:
            work = Path(folder)
            lines = jobs(work, ready.split()[-1])
            print(f"load average before: {os.getloadavg()[0]:.2f}")
            print(f"{'job':<9} {'first line (min med max)':>24} {'first status':>22} "
                  f"{'exit':>22}")  # fmt: skip
            for name, args in lines.items():
                runs = [
                    time_job([a.replace("{out}", str(work / f"{name}-{i}")) for a in args], work)
                    for i in range(options.runs)
                ]
                first, status, ended = ([run[i] for run in runs] for i in range(3))
                print(f"{name:<9} {figures(first):>24} {figures(status):>22} {figures(ended):>22}")
            print(f"load average after: {os.getloadavg()[0]:.2f}")
    finally:
        model.terminate()
        model.wait()


if __name__ == "__main__":
    main()
