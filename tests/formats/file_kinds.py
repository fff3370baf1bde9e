"""Every kind of file abt reads besides traces, for the fuzz test and its benchmark: a real
file of each kind, the command that reads it, and hostile variants of it.

A case writes one mutated file where the command reads it (a settings file, a file of a
benchmark directory, a file of a finished run) and runs that command in process. The command
must end as a command ends, exit 0 to 3 with one line for a mistake, never with an exception.
"""

from __future__ import annotations

import json
import os
import random
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from tests.conftest import FIXTURES
from tests.formats.mutations import MUTATIONS, hostile_value

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "examples" / "demo_agent"
TRACE = FIXTURES / "chat_log" / "example.jsonl"

CONFIG = """\
[providers.local_vllm]
type = "openai"
base_url = "http://127.0.0.1:9/v1"
api_key_env = ""
drop_schema_keys = ["additionalProperties"]

[roles.judge]
model = "local_vllm/judge"
concurrency = 4
timeout = 30

[aliases]
"gpt-4o" = "local_vllm/gpt-4o"
"""
AGENT_CONFIG_YAML = """\
router_nodes: [dispatcher]
end_session_tools: [end_session]
equivalent_tools:
  - [get_weather, weather_lookup]
arg_defaults:
  get_weather:
    unit: celsius
free_text_args:
  get_weather: [city]
"""
PRICES = """\
{
  "gpt-4o-mini": {"input_per_million": 0.15, "output_per_million": 0.6},
  "gpt-4.1-2025-04-14": {"input_per_million": 2.0, "output_per_million": 8.0}
}
"""
OWNERS = """\
# who owns a failure of the demo agent
agent_routing: the prompt that picks the tool
agent_execution: the tool code and its arguments
agent_rendering: how the answer is written
model: the model itself
backend_data: the notes and calendar store
"""
PATCH_YAML = """\
schema: abt.patch/1
ops:
  - id: weather-in-celsius
    target: system
    action: append
    text: " Give temperatures in degrees Celsius."
  - id: lisbon-tool
    target: tool
    action: set_description
    tool: get_weather
    description: The weather now in one city, by name.
"""
PATCH_JSON = json.dumps(
    {
        "schema": "abt.patch/1",
        "ops": [
            {
                "id": "travel-rule",
                "target": "system",
                "action": "replace",
                "find": "Use tools for live data.",
                "replace": "Always use tools for live data.",
            }
        ],
    },
    indent=2,
)


def target_file() -> str:
    """The demo agent's target file, pointed at a port nothing listens on, tried once."""
    text = (DEMO / "target.toml").read_text(encoding="utf-8")
    text = text.replace("http://127.0.0.1:8011", "http://127.0.0.1:9")
    return text.replace("timeout = 120", "timeout = 5\nconnect_retries = 0")


@dataclass(frozen=True)
class Workspace:
    """What every case's command needs besides the file under test, made once."""

    folder: Path
    units: Path
    target: Path
    run: Path
    benchmark: Path


@cache
def workspace(folder: Path) -> Workspace:
    """Units of the chat-log fixture, a run replayed on them, a benchmark directory and a
    target, under ``folder``."""
    from agent_backtest.api import build_units
    from agent_backtest.trace import dump_record
    from tests.bench.conftest import abt, write_benchmark

    folder.mkdir(parents=True, exist_ok=True)
    units = folder / "units.jsonl"
    units.write_bytes(b"".join(dump_record(unit) + b"\n" for unit in build_units(TRACE)))
    target = folder / "target.toml"
    target.write_text(target_file(), encoding="utf-8")
    run = folder / "run"
    code, output = abt("replay", units, "--model", "mock/golden", "--out", run)
    assert code == 0, output
    benchmark = write_benchmark(folder / "shop")
    return Workspace(folder, units, target, run, benchmark)


Command = Callable[[Path, Workspace, Path], list[object]]
"""The command line reading ``file`` (the case's copy), given the workspace and a scratch
folder of the case."""


@dataclass(frozen=True)
class FileKind:
    """One kind of file: a real one, where a case's copy goes, and the command reading it."""

    name: str
    seed: Callable[[Workspace], bytes]
    filename: str
    command: Command
    within: str | None = None
    """``benchmark`` or ``run``: the file replaces one of a copy of that directory."""


def _units(flag: str) -> Command:
    return lambda file, ws, scratch: ["units", TRACE, flag, file, "-o", scratch / "u.jsonl"]


def _simulate(file: Path, ws: Workspace, scratch: Path, *extra: object) -> list[object]:
    return [
        "simulate", "run", file, "--target", ws.target, "--judge", "none",
        "--agent-config", DEMO / "agent.toml", "--read-only-only", "--out", scratch / "sim",
        *extra,
    ]  # fmt: skip


def _bench(file: Path, ws: Workspace, scratch: Path) -> list[object]:
    return [
        "bench", "run", file.parent, "--agent", "mock/golden", "--user", "scripted",
        "--out", scratch / "bench", "--limit", "1",
    ]  # fmt: skip


def _run(file: Path, ws: Workspace, scratch: Path) -> list[object]:
    # what a finished run is read by: a report, and a resume that scores it again
    if file.name in ("units.jsonl", "results.jsonl", "run.json"):
        return ["replay", "--resume", file.parent]
    return ["report", file.parent]


def _text(text: str) -> Callable[[Workspace], bytes]:
    return lambda ws: text.encode()


def _file(path: Path) -> Callable[[Workspace], bytes]:
    return lambda ws: path.read_bytes()


def _run_file(name: str) -> Callable[[Workspace], bytes]:
    return lambda ws: (ws.run / name).read_bytes()


def _bench_file(name: str) -> Callable[[Workspace], bytes]:
    return lambda ws: (ws.benchmark / name).read_bytes()


FILE_KINDS: dict[str, FileKind] = {
    kind.name: kind
    for kind in [
        FileKind(
            "config",
            _text(CONFIG),
            "abt.toml",
            lambda file, ws, scratch: [
                "replay",
                ws.units,
                "--model",
                "mock/golden",
                "--config",
                file,
                "--dry-run",
                "--out",
                scratch / "dry",
            ],
        ),
        FileKind(
            "target",
            lambda ws: target_file().encode(),
            "target.toml",
            lambda file, ws, scratch: [
                "simulate",
                "run",
                DEMO / "flows.yaml",
                "--target",
                file,
                "--judge",
                "none",
                "--agent-config",
                DEMO / "agent.toml",
                "--read-only-only",
                "--out",
                scratch / "sim",
            ],
        ),
        FileKind("tools", _file(DEMO / "tools.json"), "tools.json", _units("--tools")),
        FileKind(
            "agent_config_toml", _file(DEMO / "agent.toml"), "agent.toml", _units("--agent-config")
        ),
        FileKind(
            "agent_config_yaml", _text(AGENT_CONFIG_YAML), "agent.yaml", _units("--agent-config")
        ),
        FileKind(
            "prices",
            _text(PRICES),
            "prices.json",
            lambda file, ws, scratch: ["profile", TRACE, "--prices", file],
        ),
        FileKind(
            "exclusions",
            _text("# sessions left out\nexample.jsonl#line-1\n"),
            "exclude.txt",
            _units("--exclude-sessions"),
        ),
        FileKind(
            "owners",
            _text(OWNERS),
            "owners.txt",
            lambda file, ws, scratch: _simulate(DEMO / "flows.yaml", ws, scratch, "--owners", file),
        ),
        FileKind(
            "patch_yaml",
            _text(PATCH_YAML),
            "patch.yaml",
            lambda file, ws, scratch: ["patch", "check", file, ws.units],
        ),
        FileKind(
            "patch_json",
            _text(PATCH_JSON),
            "patch.json",
            lambda file, ws, scratch: ["patch", "check", file, ws.units],
        ),
        FileKind("flows_yaml", _file(DEMO / "flows.yaml"), "flows.yaml", _simulate),
        FileKind(
            "capabilities",
            _file(DEMO / "capabilities.yaml"),
            "capabilities.yaml",
            lambda file, ws, scratch: [
                "simulate",
                "generate",
                file,
                "--tools",
                DEMO / "tools.json",
                "--per-family",
                "1",
                "--teacher",
                "mock/golden",
                "--out",
                scratch / "gen.jsonl",
            ],
        ),
        FileKind(
            "bench_manifest", _bench_file("manifest.json"), "manifest.json", _bench, "benchmark"
        ),
        FileKind("bench_cases", _bench_file("cases.jsonl"), "cases.jsonl", _bench, "benchmark"),
        FileKind("bench_gold", _bench_file("gold.jsonl"), "gold.jsonl", _bench, "benchmark"),
        FileKind("run_manifest", _run_file("run.json"), "run.json", _run, "run"),
        FileKind("run_units", _run_file("units.jsonl"), "units.jsonl", _run, "run"),
        FileKind("run_results", _run_file("results.jsonl"), "results.jsonl", _run, "run"),
        FileKind("run_scores", _run_file("scores.jsonl"), "scores.jsonl", _run, "run"),
        FileKind("run_summary", _run_file("summary.json"), "summary.json", _run, "run"),
    ]
}


# -- mutations of settings files --------------------------------------------------------------


def toml_swap(rng: random.Random, data: bytes) -> bytes:
    """One ``key = value`` line of a TOML file given a hostile value: a long integer, a deep
    table or array, a control character, an escaped lone surrogate, another type."""
    lines = data.decode("utf-8").splitlines()
    assignments = [i for i, line in enumerate(lines) if " = " in line]
    if not assignments:
        return data
    index = rng.choice(assignments)
    key = lines[index].split(" = ", 1)[0]
    depth = rng.choice([50, 200, 1000, 3000])
    value = rng.choice(
        [
            "1" * rng.choice([20, 400, 5000]),
            "99999999999999999999",
            "{ a = " * depth + "1" + " }" * depth,
            "[" * depth + "]" * depth,
            '"\\ud800"',
            '"a\x01b"',
            '"\x1b]0;owned\x07"',
            "1979-05-27T07:32:00Z",
            "nan",
            "true",
            "[1, 2, 3]",
        ]
    )
    lines[index] = f"{key} = {value}"
    return ("\n".join(lines) + "\n").encode()


def deep_toml_table(rng: random.Random, data: bytes) -> bytes:
    """A table header nested thousands of levels deep, before or after the file."""
    header = "[" + ".".join(["t"] * rng.choice([200, 3000])) + "]\nx = 1\n"
    return data + b"\n" + header.encode() if rng.random() < 0.5 else header.encode() + data


def surrogate_or_control(rng: random.Random, data: bytes) -> bytes:
    """A lone surrogate (escaped, as JSON and YAML write one) or a raw control character put
    inside the text."""
    text = data.decode("utf-8")
    at = rng.randrange(len(text) + 1)
    inserted = rng.choice(["\\ud800", "\\udfff", "\x00", "\x01", "\x1b", "\x7f", "\u2028"])
    return (text[:at] + inserted + text[at:]).encode()


def quoted_surrogate(rng: random.Random, data: bytes) -> bytes:
    """A string value ending in an escaped lone surrogate (valid JSON and YAML text)."""
    text = data.decode("utf-8")
    quotes = [i for i, char in enumerate(text) if char == '"']
    if len(quotes) < 2:
        return surrogate_or_control(rng, data)
    at = rng.choice(quotes[1::2])
    return (text[:at] + "\\ud83d" + text[at:]).encode()


def text_swap(rng: random.Random, data: bytes) -> bytes:
    """One line of a line-oriented file replaced by a hostile value."""
    lines = data.decode("utf-8").splitlines() or [""]
    lines[rng.randrange(len(lines))] = hostile_value(rng)[:100_000]
    return ("\n".join(lines) + "\n").encode()


FILE_MUTATIONS: dict[str, Callable[[random.Random, bytes], bytes]] = {
    **MUTATIONS,
    "toml_swap": toml_swap,
    "deep_toml_table": deep_toml_table,
    "surrogate_or_control": surrogate_or_control,
    "quoted_surrogate": quoted_surrogate,
    "text_swap": text_swap,
}
_NOT_FOR = {
    ".toml": {"swap_value", "yaml_aliases"},
    ".txt": {"swap_value", "toml_swap", "deep_toml_table", "yaml_aliases"},
}


@dataclass(frozen=True)
class FileCase:
    """One mutated file of one kind."""

    kind: str
    mutation: str
    data: bytes


def mutate_file(seed: int, kind: str, ws: Workspace) -> FileCase:
    """The case ``seed`` makes of a file of ``kind`` (the same bytes for the same seed)."""
    rng = random.Random(seed)
    file_kind = FILE_KINDS[kind]
    suffix = Path(file_kind.filename).suffix
    allowed = sorted(set(FILE_MUTATIONS) - _NOT_FOR.get(suffix, set()))
    if suffix not in (".toml",):
        allowed = [name for name in allowed if name not in ("toml_swap", "deep_toml_table")]
    name = rng.choice(allowed)
    data = file_kind.seed(ws)
    try:
        mutated = FILE_MUTATIONS[name](rng, data)
    except (ValueError, IndexError):  # a mutation that does not apply to this file's text
        name, mutated = "flip_bytes", FILE_MUTATIONS["flip_bytes"](rng, data)
    return FileCase(kind, name, mutated)


def place(case_data: bytes, kind: str, ws: Workspace, scratch: Path) -> Path:
    """Write the case where its command reads it: alone in ``scratch``, or in a copy of the
    benchmark or run directory; its path."""
    file_kind = FILE_KINDS[kind]
    if file_kind.within is None:
        folder = scratch
    else:
        source = ws.benchmark if file_kind.within == "benchmark" else ws.run
        folder = scratch / source.name
        shutil.copytree(source, folder)
    path = folder / file_kind.filename
    path.unlink(missing_ok=True)
    path.write_bytes(case_data)
    return path


def replace_by(path: Path, what: str) -> None:
    """Put a named pipe nobody writes to (``fifo``), a link to /dev/zero (``dev_zero``) or a
    folder where ``path`` is."""
    path.unlink()
    if what == "fifo":
        os.mkfifo(path)
    elif what == "dev_zero":
        path.symlink_to("/dev/zero")
    else:
        path.mkdir()


def run_command(argv: list[object]) -> tuple[int, str]:
    """``abt ARGV`` in process: (exit code, output). An exception other than the exit is
    the bug this fuzz looks for, and propagates."""
    from typer.testing import CliRunner

    from agent_backtest.cli.app import app

    result = CliRunner().invoke(app, [str(arg) for arg in argv])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout + result.stderr


def read_case(case: FileCase, ws: Workspace, scratch: Path) -> str:
    """Run the command that reads the case's file: ``exit N`` (0 to 3) for an ending the
    command meant, with the error line when there is one. A crash propagates."""
    path = place(case.data, case.kind, ws, scratch)
    code, output = run_command(FILE_KINDS[case.kind].command(path, ws, scratch))
    errors = [line for line in output.splitlines() if line.startswith("abt: error:")]
    return f"exit {code}" + (f": {errors[0]}" if errors else "") + _extra_error_lines(errors)


def _extra_error_lines(errors: list[str]) -> str:
    return f" (and {len(errors) - 1} more error lines)" if len(errors) > 1 else ""
