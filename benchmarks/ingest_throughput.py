"""Ingest speed and memory on synthetic OTLP JSONL (OTel GenAI spans), at two input sizes.

Writes a synthetic collector-style export (one ExportTraceServiceRequest per line, each trace
an agent span with chat and tool spans, split over two lines so traces interleave), runs
``abt ingest FILE -o OUT`` in a child process, and reports MB/s of wall and of CPU time and the
child's peak RSS. Peak RSS at the small and the large size shows whether memory grows with the
file. On a shared machine CPU time is the steadier figure; ``--rounds`` repeats each size and
prints the median with the range.

    python benchmarks/ingest_throughput.py --sizes-mb 100 1000 --rounds 3
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
from pathlib import Path

from child_process import installed_env, run_measured

SYSTEM_PROMPT = (
    "You are the airline's booking agent. Follow the policy: confirm every change "
    "with the user before acting, never invent flights, one tool call at a time. "
)
TOOLS = json.dumps(
    [
        {
            "type": "function",
            "function": {
                "name": "search_flights",
                "description": "Find direct flights between two airports.",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "origin": {"type": "string"},
                        "destination": {"type": "string"},
                        "date": {"type": "string"},
                    },
                    "required": ["origin", "destination", "date"],
                },
            },
        }
    ]
)


def attr(key: str, value: str | int) -> dict:
    """One OTLP KeyValue."""
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": value}}


def chat_span(trace_id: str, span_id: str, parent: str, start: int, turn: int) -> dict:
    """A GenAI chat span with a realistic history, tool definitions and a tool call answer."""
    history = [
        {
            "role": "user",
            "parts": [{"type": "text", "content": f"Turn {i}: find me a flight to Denver."}],
        }
        for i in range(turn + 1)
    ]
    output = [
        {
            "role": "assistant",
            "finish_reason": "tool_call",
            "parts": [
                {
                    "type": "tool_call",
                    "id": f"call_{span_id}",
                    "name": "search_flights",
                    "arguments": {"origin": "JFK", "destination": "DEN", "date": "2024-05-20"},
                }
            ],
        }
    ]
    return {
        "traceId": trace_id,
        "spanId": span_id,
        "parentSpanId": parent,
        "name": "chat gpt-4o",
        "kind": "SPAN_KIND_CLIENT",
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + 900_000_000),
        "status": {"code": "STATUS_CODE_OK"},
        "attributes": [
            attr("gen_ai.operation.name", "chat"),
            attr("gen_ai.request.model", "gpt-4o"),
            attr("gen_ai.response.model", "gpt-4o-2024-08-06"),
            attr("gen_ai.provider.name", "openai"),
            attr(
                "gen_ai.system_instructions",
                json.dumps([{"type": "text", "content": SYSTEM_PROMPT * 4}]),
            ),
            attr("gen_ai.input.messages", json.dumps(history)),
            attr("gen_ai.output.messages", json.dumps(output)),
            attr("gen_ai.tool.definitions", TOOLS),
            attr("gen_ai.usage.input_tokens", 800 + turn),
            attr("gen_ai.usage.output_tokens", 40),
        ],
    }


def tool_span(trace_id: str, span_id: str, parent: str, start: int) -> dict:
    """An execute_tool span."""
    return {
        "traceId": trace_id,
        "spanId": span_id,
        "parentSpanId": parent,
        "name": "execute_tool search_flights",
        "kind": 1,
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + 120_000_000),
        "attributes": [
            attr("gen_ai.operation.name", "execute_tool"),
            attr("gen_ai.tool.name", "search_flights"),
            attr("gen_ai.tool.call.id", f"call_{span_id}"),
        ],
    }


def trace_spans(index: int) -> list[dict]:
    """An agent span with four chat spans and three tool spans."""
    trace_id = f"{index:032x}"
    root = f"{index:012x}0000"
    start = 1_700_000_000_000_000_000 + index * 10_000_000_000
    spans = [
        {
            "traceId": trace_id,
            "spanId": root,
            "name": "invoke_agent booking",
            "kind": 1,
            "startTimeUnixNano": str(start),
            "endTimeUnixNano": str(start + 8_000_000_000),
            "attributes": [
                attr("gen_ai.operation.name", "invoke_agent"),
                attr("gen_ai.agent.name", "booking"),
            ],
        }
    ]
    for turn in range(4):
        at = start + turn * 1_500_000_000
        spans.append(chat_span(trace_id, f"{index:012x}{turn + 1:04x}", root, at, turn))
        if turn < 3:
            spans.append(
                tool_span(trace_id, f"{index:012x}{turn + 0x100:04x}", root, at + 1_000_000_000)
            )
    return spans


def export_line(spans: list[dict]) -> bytes:
    """One ExportTraceServiceRequest as a JSON line."""
    return (
        json.dumps(
            {
                "resourceSpans": [
                    {
                        "resource": {"attributes": [attr("service.name", "booking-agent")]},
                        "scopeSpans": [{"scope": {"name": "agent.framework"}, "spans": spans}],
                    }
                ]
            }
        ).encode()
        + b"\n"
    )


def write_input(path: Path, size_bytes: int) -> int:
    """Write about ``size_bytes`` of export lines; each trace's spans span two lines."""
    written, index, pending = 0, 0, None
    with path.open("wb") as handle:
        while written < size_bytes:
            spans = trace_spans(index)
            half = len(spans) // 2
            # this trace's first half, then the previous trace's second half: traces interleave
            line = export_line(spans[:half] + (pending or []))
            pending = spans[half:]
            handle.write(line)
            written += len(line)
            index += 1
        handle.write(export_line(pending or []))
    return index


def measure(path: Path, out: Path) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds and peak RSS (KiB) of ``abt ingest`` on the file, in a fresh
    child process (the CPU time includes the small process that starts it, a few ms)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    seconds, peak_kib = run_measured(
        [sys.executable, "-m", "agent_backtest.cli", "ingest", str(path), "-o", str(out)],
        installed_env(),
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return seconds, cpu, peak_kib


def spread(values: list[float]) -> str:
    """The median of the values, with their range when there are several."""
    median = statistics.median(values)
    if len(values) == 1:
        return f"{median:.1f}"
    return f"{median:.1f} ({min(values):.1f}–{max(values):.1f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes-mb", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--rounds", type=int, default=1, help="runs of each size")
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="abt-ingest-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    print(f"load {' '.join(f'{value:.2f}' for value in os.getloadavg())}")
    print(f"{'input MB':>9} {'traces':>8}  {'CPU MB/s':<18} {'wall MB/s':<18} {'peak RSS MB':<18}")
    for size in sorted(args.sizes_mb):
        path = workdir / f"otlp-{size}mb.jsonl"
        traces = write_input(path, size * 1_000_000)
        megabytes = path.stat().st_size / 1_000_000
        runs = [measure(path, workdir / "sessions.jsonl") for _ in range(args.rounds)]
        wall = spread([megabytes / seconds for seconds, _, _ in runs])
        cpu = spread([megabytes / seconds for _, seconds, _ in runs])
        peak = spread([peak_kib / 1024 for _, _, peak_kib in runs])
        print(f"{megabytes:9.0f} {traces:8d}  {cpu:<18} {wall:<18} {peak:<18}", flush=True)
        path.unlink()
    (workdir / "sessions.jsonl").unlink(missing_ok=True)


if __name__ == "__main__":
    main()
