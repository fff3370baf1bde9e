"""Peak memory of replay, score and report as the run grows: it should not grow with the units.

For each size (distinct τ-bench units, each a copy made unique in its last message, so copies
share their system prompt and earlier turns as a real agent's steps do), three processes run one
after another on the same run directory, and each one's peak RSS is read: ``abt replay --model
mock/golden`` (reading, planning, the calls, every result written and scored as it lands),
``abt score`` (scoring the whole run again from its files) and ``abt report`` (results.csv and
report.html). A streaming design holds a flat ceiling; a design that keeps every unit grows by
the size of a unit (tens of kilobytes) per unit.

    python benchmarks/memory_flat.py [--sizes 1000 10000 30000]

Peak RSS on the reference machine (2 cores), MB:

    units  | replay | score | report
     1,000 |     81 |    78 |     46
    10,000 |     98 |    82 |     52
    30,000 |    100 |    88 |     61

What still grows is a few hundred bytes a unit: where each score and result starts in its file
(about a hundred bytes a record each, for ``abt report``'s join and ``abt score``'s results), the
page's index of distinct messages, and ``mock/golden``'s table of production's answers (their
JSON) in replay. Up to 10,000 units the scorer's bounded memos fill up as well.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from child_process import installed_env, run_measured  # noqa: E402
from replay_throughput import tau_units_file  # noqa: E402

ABT = str(Path(sys.executable).parent / "abt")
ENV = installed_env(OPENAI_API_KEY="benchmark-key")


def make_units(work: Path, size: int) -> Path:
    """``size`` distinct units whose last message carries a copy marker."""
    lines = tau_units_file(work).read_text().splitlines()
    out = work / f"units-last-{size}.jsonl"
    with out.open("w") as handle:
        for index in range(size):
            unit = json.loads(lines[index % len(lines)])
            unit["unit_id"] = f"u-memory-{index:06d}"
            last = unit["request"]["messages"][-1]
            if isinstance(last.get("content"), str):
                last["content"] += f" (copy {index})"
            else:
                unit["request"]["messages"].append({"role": "user", "content": f"copy {index}"})
            handle.write(json.dumps(unit) + "\n")
    return out


def measure(work: Path, size: int) -> dict[str, tuple[float, int]]:
    """Seconds and peak RSS (KiB) of replay, score and report on ``size`` units."""
    units = make_units(work, size)
    run = work / f"run-{size}"
    commands = {
        "replay": [ABT, "replay", str(units), "--model", "mock/golden", "--no-cache",
                   "--concurrency", "64", "--out", str(run), "--overwrite"],
        "score": [ABT, "score", str(run)],
        "report": [ABT, "report", str(run)],
    }  # fmt: skip
    return {name: run_measured(command, ENV) for name, command in commands.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 30000])
    args = parser.parse_args()
    print("units | replay MB (s) | score MB (s) | report MB (s)")
    with tempfile.TemporaryDirectory(prefix="abt-memory-") as tmp:
        for size in args.sizes:
            figures = measure(Path(tmp), size)
            cells = [f"{rss / 1024:.0f} ({seconds:.1f})" for seconds, rss in figures.values()]
            print(f"{size:>5} | " + " | ".join(cells), flush=True)


if __name__ == "__main__":
    main()
