"""A plugin distribution, installed with pip, adds a provider type and a trace format that
``abt replay`` uses by name, and a target type ``abt simulate`` plays flows through, with no
change to the package.

The distribution (``tests/plugin_dist``) declares the ``echo`` provider type, the ``memo``
format and the ``echo`` target type as entry points. The echo provider answers from the request
alone: a call of the tool the user's message starts with (``key=value`` words as its
arguments), else the message said back.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

PLUGIN = Path(__file__).resolve().parent / "plugin_dist"
SOURCE = Path(__file__).resolve().parent.parent / "src"
TOOLS = {"get_weather": ["city"], "book": ["flight"]}
# Production's answers, and what echo answers instead:
PARIS = {"call": "get_weather", "args": {"city": "Paris"}}
MEMO = [
    # echo calls get_weather {city: Paris}: the same call
    {"chat": "a", "user": "get_weather city=Paris", "agent": PARIS},
    # echo calls book {flight: AF2}: the same tool, another argument
    {"chat": "a", "user": "book flight=AF2", "agent": {"call": "book", "args": {"flight": "AF1"}}},
    # echo says "hello there": the same text but for case
    {"chat": "b", "user": "hello there", "agent": {"say": "Hello there"}},
    # echo calls get_weather {city: Rome} where production answered in text
    {"chat": "b", "user": "get_weather city=Rome", "agent": {"say": "It is sunny in Rome."}},
]  # fmt: skip


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The plugin distribution installed by pip into a folder of its own (offline)."""
    target = tmp_path_factory.mktemp("site")
    subprocess.run(
        [
            *(sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index"),
            *("--no-build-isolation", "--target", str(target), str(PLUGIN)),
        ],
        check=True,
        capture_output=True,
        env={**os.environ, "PIP_NO_CACHE_DIR": "1"},
    )
    return target


@pytest.fixture
def memo(tmp_path: Path) -> Path:
    path = tmp_path / "chats.jsonl"
    lines = [json.dumps({"memo": 1, **record, "tools": TOOLS}) for record in MEMO]
    path.write_text("\n".join(lines) + "\n")
    return path


def abt(site: Path, cwd: Path, *args: object) -> subprocess.CompletedProcess[str]:
    """``abt`` in a new process that finds the plugin on its path."""
    return subprocess.run(
        [sys.executable, "-m", "agent_backtest.cli", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(SOURCE), str(site)])},
        timeout=120,
    )


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_replay_uses_the_plugin_reader_and_provider_by_name(
    site: Path, memo: Path, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    done = abt(site, tmp_path, "replay", memo, "--format", "memo", "--model", "echo/x")
    assert done.returncode == 2 and "--out" in done.stderr  # nothing is run without --out
    done = abt(
        site, tmp_path, "replay", memo, "--format", "memo", "--model", "echo/x", "--out", run
    )
    assert done.returncode == 0, done.stderr
    units = lines(run / "units.jsonl")
    assert [(u["session_id"], u["request"]["messages"][-1]["content"]) for u in units] == [
        (record["chat"], record["user"]) for record in MEMO
    ]
    results = lines(run / "results.jsonl")
    assert [r["model"] for r in results] == ["echo/x"] * 4
    answers = [r["response"]["message"] for r in results]
    assert [m.get("tool_calls") for m in answers] == [
        [{"id": "echo-1", "name": "get_weather", "arguments": {"city": "Paris"}}],
        [{"id": "echo-1", "name": "book", "arguments": {"flight": "AF2"}}],
        None,
        [{"id": "echo-1", "name": "get_weather", "arguments": {"city": "Rome"}}],
    ]
    assert answers[2]["content"] == "hello there"
    scores = {s["unit_id"]: s for s in lines(run / "scores.jsonl")}
    by_unit = [scores[u["unit_id"]] for u in units]
    assert [(s["bucket"], s["score"], s["strict"]) for s in by_unit] == [
        ("match", 1.0, True),
        ("args_mismatch", 0.0, False),
        ("text_match", 1.0, True),
        ("tool_instead_of_text", 0.0, False),
    ]


def test_a_plugin_provider_type_serves_a_provider_of_the_config(
    site: Path, memo: Path, tmp_path: Path
) -> None:
    """``[providers.NAME] type = "echo"``, and the memo file found by its content."""
    done = abt(site, tmp_path, "ingest", memo, "--json")
    assert done.returncode == 0, done.stderr
    assert [i["format"] for i in json.loads(done.stdout)["inputs"]] == ["memo"]
    config = tmp_path / "abt.toml"
    config.write_text('[providers.parrot]\ntype = "echo"\n')
    run = tmp_path / "run"
    done = abt(site, tmp_path, "replay", memo, "--model", "parrot/y", "--out", run)
    assert done.returncode == 0, done.stderr
    results = lines(run / "results.jsonl")
    assert [r["model"] for r in results] == ["parrot/y"] * 4
    assert sorted(s["bucket"] for s in lines(run / "scores.jsonl")) == [
        "args_mismatch",
        "match",
        "text_match",
        "tool_instead_of_text",
    ]


def test_an_unknown_provider_names_the_installed_plugin_types(
    site: Path, memo: Path, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    done = abt(site, tmp_path, "replay", memo, "--model", "nosuch/x", "--out", run)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith(
        "abt: error: --model: unknown provider 'nosuch' (known: anthropic, local, mock, "
        "openai; installed provider types: echo); add [providers.nosuch] with type and base_url"
    )
    assert not run.exists()
    done = abt(site, tmp_path, "ingest", memo, "--format", "nosuch")
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "unknown format 'nosuch': name one of canonical, otlp, langfuse, inspect, " in (
        done.stderr
    )
    assert "cassette, memo, or install a package" in done.stderr


def test_simulate_plays_flows_through_a_plugin_target_type(site: Path, tmp_path: Path) -> None:
    flows = tmp_path / "flows.jsonl"
    turns = [{"user": "hi"}, {"user": "bye"}]
    flows.write_text(json.dumps({"id": "f1", "family": "chat", "turns": turns}) + "\n")
    target = tmp_path / "parrot.toml"
    target.write_text('name = "parrot"\ntype = "echo"\nprefix = "you said: "\n')
    run = tmp_path / "run"
    done = abt(site, tmp_path, "simulate", "run", flows, "--target", target, "--out", run,
               "--skip-judge")  # fmt: skip
    assert done.returncode == 0, done.stderr
    [conversation] = lines(run / "conversations.jsonl")
    assert [turn["final_text"] for turn in conversation["turns"]] == [
        "you said: hi",
        "you said: bye",
    ]
    assert conversation["target"] == "parrot"
    target.write_text('name = "parrot"\ntype = "echo"\nprefx = "you said: "\n')
    done = abt(site, tmp_path, "simulate", "run", flows, "--target", target, "--out", run / "b",
               "--skip-judge")  # fmt: skip
    assert (done.returncode, done.stderr) == (
        2,
        f"abt: error: {target}: prefx: unknown key: remove it or check its spelling\n",
    )
