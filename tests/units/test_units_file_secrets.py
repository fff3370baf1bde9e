"""A units file written elsewhere is held to the rule traces are read by: request fields that
hold credentials, at any depth and under a bare ``key`` or ``auth`` too, are neither stored in
the run nor sent to the candidate; the rest of the request is sent as it was."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
from typer.testing import CliRunner

from agent_backtest.cli.app import app
from tests.conftest import write_tau_units
from tests.fake_openai import FakeOpenAI

# Not shaped like a provider key: only its field's name says that it is a credential.
PLANTED = "a3f9e0c1d2b4e5f607182930"


def test_a_planted_key_in_a_units_file_is_neither_stored_nor_sent(tmp_path: Path) -> None:
    units = write_tau_units(tmp_path / "clean.jsonl", limit=2)
    lines = []
    for line in units.read_bytes().splitlines():
        unit = orjson.loads(line)
        unit["request"]["params"] = {
            "temperature": 0,
            "metadata": {"key": PLANTED, "auth": PLANTED, "team": "support"},
            "api_key": PLANTED,
        }
        lines.append(orjson.dumps(unit))
    planted = tmp_path / "units.jsonl"
    planted.write_bytes(b"\n".join(lines) + b"\n")
    config = tmp_path / "abt.toml"
    with FakeOpenAI() as server:
        config.write_text(
            f'[providers.fake]\ntype = "openai"\nbase_url = "{server.base_url}"\napi_key_env = ""\n'
        )
        result = CliRunner().invoke(
            app,
            [
                "replay",
                str(planted),
                "--model",
                "fake/m",
                "--out",
                str(tmp_path / "run"),
                "--config",
                str(config),
                "--no-cache",
            ],
        )
        sent = list(server.bodies)
    assert result.exit_code == 0, result.output
    assert len(sent) == 2
    for body in sent:
        assert PLANTED not in json.dumps(body)
        assert body["metadata"] == {"team": "support"} and body["temperature"] == 0
    for path in (tmp_path / "run").rglob("*"):
        if path.is_file():
            assert PLANTED.encode() not in path.read_bytes(), path.name
