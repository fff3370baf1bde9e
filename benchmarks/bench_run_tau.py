"""``abt bench run`` on τ-bench airline tasks with the embedded model: wall time and peak RSS.

The run is the done-when of the bench runner: a few airline cases × rollouts, the embedded
model as the agent, a scripted user (each case's instruction, then the stop marker) or the
embedded model as the user too, one episode at a time. It prints the wall time from process
start to exit (model load, rollouts, grading), the peak RSS, and the run's own figures.

    python benchmarks/bench_run_tau.py [--cases 3] [--rollouts 2] [--user scripted|local/smollm2]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from child_process import run_measured  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=3)
    parser.add_argument("--rollouts", type=int, default=2)
    parser.add_argument("--user", default="scripted")
    parser.add_argument("--agent", default="local/smollm2")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "run"
        command = [
            sys.executable, "-m", "agent_backtest.cli", "bench", "run", "tau_airline",
            "--agent", args.agent, "--user", args.user, "--out", str(out), "--no-cache",
            "--limit", str(args.cases), "--rollouts", str(args.rollouts), "--concurrency", "1",
        ]  # fmt: skip
        seconds, peak_kib = run_measured(command)
        manifest = json.loads((out / "run.json").read_text())
        episodes = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
        grades = [json.loads(line) for line in (out / "grades.jsonl").read_text().splitlines()]
    print(
        f"{len(episodes)} episodes ({args.cases} cases × {args.rollouts}) in {seconds:.1f} s "
        f"wall, peak RSS {peak_kib / 1024:.0f} MiB, status {manifest['status']}"
    )
    agent = manifest["counts"].get("agent", {})
    print(
        f"agent calls {agent.get('calls')} · model load {agent.get('model_load_seconds')} s · "
        f"ended by {sorted(e['ended_by'] for e in episodes)} · "
        f"rewards {[g['reward'] for g in grades]}"
    )


if __name__ == "__main__":
    main()
