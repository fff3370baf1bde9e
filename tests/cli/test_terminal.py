"""Control characters in trace text, ids and file names never reach the terminal raw."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

from agent_backtest.cli.terminal import SafeConsole, escape, printable
from tests.conftest import FIXTURES

HOSTILE = "hello \x1b]0;owned\x07 \x1b[2J\rbye \u202eevil\x9b"
SHOWN = "hello \\x1b]0;owned\\x07 \\x1b[2J\\x0dbye \\u202eevil\\x9b"


def abt(cwd: Path, *args: object) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "agent_backtest.cli", *map(str, args)],
        cwd=cwd,
        env={**os.environ, "COLUMNS": "400"},
        capture_output=True,
        timeout=120,
    )


def hostile_log(tmp_path: Path) -> Path:
    record = json.loads((FIXTURES / "chat_log" / "example.jsonl").read_text().splitlines()[0])
    record["request"]["messages"][1]["content"] = HOSTILE
    record["response"]["choices"][0]["message"]["tool_calls"][0]["function"]["name"] = "t\x1b[31m"
    path = tmp_path / "log.jsonl"
    path.write_text(json.dumps(record) + "\n")
    return path


def raw_controls(output: bytes) -> list[str]:
    text = output.decode()
    return [c for c in text if (ord(c) < 0x20 and c not in "\n\t") or 0x7F <= ord(c) < 0xA0]


def test_show_prints_hostile_trace_text_escaped(tmp_path: Path) -> None:
    log = hostile_log(tmp_path)
    for target in (log, tmp_path / "units.jsonl"):
        if target.name == "units.jsonl":
            assert abt(tmp_path, "units", log, "-o", target).returncode == 0
        result = abt(tmp_path, "show", target)
        assert result.returncode == 0, result.stderr
        assert raw_controls(result.stdout) == [] and "\u202e" not in result.stdout.decode()
        assert SHOWN in result.stdout.decode()
        assert "t\\x1b[31m" in result.stdout.decode()


def test_a_file_name_with_control_characters_is_shown_escaped(tmp_path: Path) -> None:
    result = abt(tmp_path, "ingest", "trap\x1b]0;x\x07.json")
    assert result.returncode == 2
    assert raw_controls(result.stderr) == []
    assert "trap\\x1b]0;x\\x07.json" in result.stderr.decode()


def test_the_safe_console_keeps_its_own_styles() -> None:
    out = io.StringIO()
    SafeConsole(file=out, force_terminal=True, color_system="standard", highlight=False).print(
        f"[bold]{escape(HOSTILE)}[/bold]"
    )
    text = out.getvalue()
    assert "\x1b[1m" in text and SHOWN in text and "\x07" not in text
    assert printable("a\tb\nc") == "a\tb\nc"
