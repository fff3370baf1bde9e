"""Fixtures of the bench tests: a shop benchmark directory, a scripted agent and user served by
a real HTTP server on 127.0.0.1, and a model config that points roles at it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agent_backtest.cli.app import app
from tests.fake_openai import FakeOpenAI

runner = CliRunner()
STOP = "###STOP###"
GOLD_MARKS = ("GOLD-ALT-7f3a", "GOLD-RUBRIC-91c2", "GOLD-OUTPUT-5d0e")


def abt(*args: object) -> tuple[int, str]:
    """Run ``abt ARGS`` in process: (exit code, stdout and stderr)."""
    result = runner.invoke(app, [str(a) for a in args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout + result.stderr


def call(name: str, arguments: dict[str, Any], call_id: str) -> dict[str, Any]:
    """An assistant message calling one tool."""
    function = {"name": name, "arguments": json.dumps(arguments)}
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": call_id, "type": "function", "function": function}],
    }


def scripted(body: dict[str, Any]) -> str | dict[str, Any]:
    """The agent, the user and the judge of the tests, each told apart by its request.

    The agent looks the item up, orders 2, then says so; a user asks for apples, then stops once
    the agent has spoken twice; the judge says every item is met.
    """
    messages = body["messages"]
    system = messages[0].get("content") or "" if messages else ""
    if system.startswith("You grade"):
        return '{"reason": "the agent placed the order", "met": true}'
    if not body.get("tools"):  # the simulated user
        heard = sum(m["role"] == "user" for m in messages)
        return STOP if heard >= 2 else "I would like to buy 2 apples, please."
    results = sum(m["role"] == "tool" for m in messages)
    if results == 0:
        return call("lookup", {"item": "apple"}, "call-lookup")
    if results == 1:
        return call("order", {"item": "apple", "quantity": 2}, "call-order")
    return "Your order of 2 apples is placed."


def write_config(path: Path, **providers: str) -> Path:
    """An abt.toml with one keyless OpenAI-compatible provider per name, at each base URL."""
    lines = []
    for name, base_url in providers.items():
        lines += [
            f"[providers.{name}]",
            'type = "openai"',
            f'base_url = "{base_url}"',
            'api_key_env = ""',
        ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def config(tmp_path: Path, fake_openai: FakeOpenAI) -> Path:
    return write_config(tmp_path / "abt.toml", fake=fake_openai.base_url)


def write_benchmark(
    path: Path,
    cases: int = 3,
    environment: str = "tests.bench.shop:ShopEnvironment",
    graders: tuple[str, ...] = ("tool_calls", "tests.bench.shop:ordered_grader"),
    gold_cases: int | None = None,
    max_steps: int = 10,
) -> Path:
    """A shop benchmark of ``cases`` cases (c00, c01, …) with gold for the first
    ``gold_cases`` (all by default); the gold holds the strings of GOLD_MARKS."""
    path.mkdir(parents=True)
    manifest = {
        "schema": "abt.benchmark/1",
        "name": "shop",
        "version": "1",
        "release": "internal",
        "environment": environment,
        "graders": list(graders),
        "rules": {"max_steps": max_steps, "first_tool_call_only": True},
    }
    (path / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    rows = [
        {
            "id": f"c{i:02d}",
            "instruction": "You want 2 apples.",
            "metadata": {"user_turns": ["I would like to buy 2 apples, please."]},
        }
        for i in range(cases)
    ]
    (path / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    apple = {"values": ["apple", GOLD_MARKS[0]]}
    gold = [
        {
            "case_id": f"c{i:02d}",
            "actions": [
                {
                    "name": "lookup",
                    "arguments": {"item": "apple"},
                    "key": {"name": "lookup", "arguments": {"item": apple}},
                },
                {"name": "order", "arguments": {"item": "apple", "quantity": 2}},
            ],
            "outputs": [GOLD_MARKS[2]],
            "rubric": [f"{GOLD_MARKS[1]}: the agent confirms the order"],
        }
        for i in range(cases if gold_cases is None else gold_cases)
    ]
    (path / "gold.jsonl").write_text("".join(json.dumps(g) + "\n" for g in gold), encoding="utf-8")
    return path


@pytest.fixture
def benchmark(tmp_path: Path) -> Path:
    return write_benchmark(tmp_path / "shop")


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
