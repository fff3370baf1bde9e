"""One or more valid example files per format: the seeds the malformed-input tests mutate."""

from __future__ import annotations

from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"

SEEDS: dict[str, list[Path]] = {
    "canonical": [FIXTURES / "canonical" / "sessions.jsonl"],
    "tau_bench": [FIXTURES / "tau_airline" / "two_trajectories.json"],
    "otlp": [
        FIXTURES / "otlp" / "current.json",
        FIXTURES / "otlp" / "events.jsonl",
        FIXTURES / "otlp" / "openinference.jsonl",
    ],
    "langfuse": [FIXTURES / "traces" / "microsoft-agent-2025-12-17.trace.json"],
    "session_steps": [FIXTURES / "session_steps" / "example.json"],
    "chat_log": [FIXTURES / "chat_log" / "example.jsonl"],
    "cassette": [FIXTURES / "cassette" / "test_chat_completion_tool_calls_with_content.yaml"],
    "inspect": [FIXTURES / "frameworks" / "inspect" / "transcript-ollama-0.3.41.json"],
    "tau2_bench": [FIXTURES / "frameworks" / "tau2" / "hotel-gemma-3-27b.json"],
    "swe_agent": [FIXTURES / "frameworks" / "swe_agent" / "gpt-4o-function-calling-1.x.traj"],
    "openhands": [
        FIXTURES / "frameworks" / "openhands" / "claude-3-5-sonnet-wrong-initial-state.json",
        FIXTURES / "frameworks" / "openhands" / "llama-4-maverick-multi-swe-bench.jsonl",
    ],
}
