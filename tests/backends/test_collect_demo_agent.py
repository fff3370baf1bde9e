"""The demo agent, instrumented with the OpenTelemetry SDK, sends its own traces to a running
``abt collect`` while a simulate run talks to it: what the collector wrote gives the same units
as the agent's own file export of the same spans."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from agent_backtest.cli.app import app
from tests.backends.test_collect import Collector, abt_units
from tests.conftest import ROOT
from tests.fake_openai import FakeOpenAI
from tests.optional import require
from tests.simulate.demo_app import demo_agent, lookup_model

require("fastapi", "pip install 'agent-backtest[demo]'")
require("uvicorn", "pip install 'agent-backtest[demo]'")
require("opentelemetry.exporter.otlp.proto.http", "pip install 'agent-backtest[demo]'")

DEMO = ROOT / "examples" / "demo_agent"
FLOWS = """
- id: notes
  family: notes
  turns:
    - user: Which notes do I have?
- id: calendar
  family: calendar
  turns:
    - user: What is on my calendar on 2 March?
"""


def test_the_demo_agents_export_to_collect_gives_the_units_of_its_file_export(
    tmp_path: Path,
) -> None:
    collector = Collector(tmp_path)
    own_file = tmp_path / "agent-traces.jsonl"
    flows = tmp_path / "flows.yaml"
    flows.write_text(FLOWS, encoding="utf-8")
    try:
        with (
            FakeOpenAI(reply=lookup_model) as model,
            demo_agent(
                tmp_path / "demo.db",
                model.base_url,
                otlp_file=own_file,
                otlp_endpoint=collector.url,
            ) as url,
        ):
            target = tmp_path / "target.toml"
            text = (DEMO / "target.toml").read_text(encoding="utf-8")
            target.write_text(text.replace("http://127.0.0.1:8011", url), encoding="utf-8")
            result = CliRunner().invoke(
                app,
                ["simulate", "run", str(flows), "--out", str(tmp_path / "run"), "--target",
                 str(target), "--agent-config", str(DEMO / "agent.toml"), "--skip-judge"],
            )  # fmt: skip
            assert result.exit_code == 0, result.output
            calls = model.total
    finally:
        collector.stop()
    collected = abt_units(collector.out, tmp_path / "collected-units.jsonl")
    exported = abt_units(own_file, tmp_path / "file-units.jsonl")
    assert calls == 4  # a look-up and an answer in each of the two conversations
    assert len(collected) == calls
    assert collected == exported
    # what the collector wrote is the receiver's own: OTLP/JSON lines of the agent's spans
    names = {
        span["name"]
        for line in collector.out.read_text(encoding="utf-8").splitlines()
        for resource in json.loads(line)["resourceSpans"]
        for scope in resource["scopeSpans"]
        for span in scope["spans"]
    }
    assert names == {"invoke_agent demo-agent", "chat scripted"}
