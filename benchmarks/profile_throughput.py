"""Profile speed and memory on synthetic canonical sessions, at two sizes (steps in total).

Writes sessions JSONL (what ``abt ingest -o`` writes): each session has two turns of ten steps,
LLM calls and tool calls with times, token usage, statuses, now and then a failure, a retry with
the same arguments, two tool calls running in parallel, and a tool call with no end time. Runs
``abt profile FILE -o OUT`` in a child process and reports steps per second and the child's own
peak RSS; comparing the two sizes shows what memory grows with.

    python benchmarks/profile_throughput.py --steps 100000 1000000
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

from child_process import run_measured

STEPS_PER_TURN = 10
TURNS = 2
START = datetime(2025, 1, 1, tzinfo=UTC)
TOOLS = ("search_flights", "get_booking", "update_booking", "calculate")


def moment(ms: int) -> str:
    """An ISO 8601 UTC time ``ms`` milliseconds after START."""
    return (START + timedelta(milliseconds=ms)).isoformat().replace("+00:00", "Z")


def llm_step(step_id: str, at: int, model: str, calls: list[str]) -> dict:
    """An LLM call of 400–900 ms asking for the named tools."""
    tool_calls = [
        {"id": f"{step_id}-{i}", "name": name, "arguments": {"q": i}}
        for i, name in enumerate(calls)
    ] or None
    message = {"role": "assistant", "content": None if calls else "Done.", "tool_calls": tool_calls}
    return {
        "id": step_id,
        "kind": "llm",
        "name": "agent",
        "started_at": moment(at),
        "ended_at": moment(at + 400 + at % 500),
        "status": "ok",
        "llm": {
            "request": {"model": model, "messages": []},
            "response": {
                "message": message,
                "model": model,
                "usage": {"input_tokens": 900 + at % 300, "output_tokens": 40 + at % 20},
            },
        },
    }


def tool_step(step_id: str, at: int, name: str, arguments: dict, fail: bool, untimed: bool) -> dict:
    """A tool call of 50–250 ms, failed or without an end time when asked."""
    step = {
        "id": step_id,
        "kind": "tool",
        "name": name,
        "started_at": moment(at),
        "ended_at": None if untimed else moment(at + 50 + at % 200),
        "status": "error" if fail else "ok",
        "tool": {"name": name, "arguments": arguments},
    }
    if fail:
        step["error"] = step["tool"]["error"] = "TimeoutError: upstream did not answer"
    return step


def turn_steps(index: int, turn: int, at: int) -> list[dict]:
    """Ten steps: LLM, two parallel tools, LLM, tool, retry, LLM, tool, LLM, answer LLM."""
    model = ("gpt-4o", "claude-sonnet")[index % 2]
    name = TOOLS[(index + turn) % len(TOOLS)]
    fail = index % 7 == 0
    return [
        llm_step(f"{turn}-0", at, model, [name, "calculate"]),
        tool_step(f"{turn}-1", at + 1000, name, {"q": index}, False, False),
        tool_step(f"{turn}-2", at + 1010, "calculate", {"x": turn}, False, index % 11 == 0),
        llm_step(f"{turn}-3", at + 1400, model, [name]),
        tool_step(f"{turn}-4", at + 2400, name, {"q": index + 1}, fail, False),
        tool_step(f"{turn}-5", at + 2700, name, {"q": index + 1}, False, False),
        llm_step(f"{turn}-6", at + 3000, model, ["get_booking"]),
        tool_step(f"{turn}-7", at + 4000, "get_booking", {"id": index}, False, False),
        llm_step(f"{turn}-8", at + 4300, model, []),
        llm_step(f"{turn}-9", at + 5300, model, []),
    ]


def session_line(index: int) -> bytes:
    """One session as a canonical JSONL line."""
    at = index * 60_000
    turns = [
        {"index": turn, "steps": turn_steps(index, turn, at + turn * 20_000)}
        for turn in range(TURNS)
    ]
    session = {
        "schema": "abt.session/1",
        "id": f"s{index}",
        "agent": {"name": "booking", "version": f"{1 + index % 2}"},
        "turns": turns,
    }
    return json.dumps(session, separators=(",", ":")).encode() + b"\n"


def write_input(path: Path, steps: int) -> int:
    """Write sessions holding ``steps`` steps in all; the number of sessions written."""
    sessions = steps // (STEPS_PER_TURN * TURNS)
    with path.open("wb") as handle:
        for index in range(sessions):
            handle.write(session_line(index))
    return sessions


def measure(path: Path, out: Path) -> tuple[float, int]:
    """Seconds and peak RSS (KiB) of ``abt profile`` on the file, in a fresh child process."""
    return run_measured(
        [sys.executable, "-m", "agent_backtest.cli", "profile", str(path), "-o", str(out)]
    )


def main() -> None:
    """Write each size, profile it, print a row of figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="abt-profile-bench-"))
    print(
        f"{'steps':>10} {'sessions':>9} {'input MB':>9} {'seconds':>8} {'steps/s':>9} "
        f"{'peak RSS MB':>12}"
    )
    for steps in sorted(args.steps):
        path = workdir / f"sessions-{steps}.jsonl"
        sessions = write_input(path, steps)
        written = sessions * STEPS_PER_TURN * TURNS
        megabytes = path.stat().st_size / 1_000_000
        seconds, peak_kib = measure(path, workdir / "profile.json")
        print(
            f"{written:10d} {sessions:9d} {megabytes:9.0f} {seconds:8.1f} "
            f"{written / seconds:9.0f} {peak_kib / 1024:12.0f}",
            flush=True,
        )
        path.unlink()
    (workdir / "profile.json").unlink(missing_ok=True)


if __name__ == "__main__":
    main()
