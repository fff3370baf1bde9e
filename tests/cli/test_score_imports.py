"""``abt score`` loads what scoring needs: not the trace readers, not the report pages."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import agent_backtest.api
import agent_backtest.providers
import agent_backtest.reporting
import agent_backtest.runs
from tests.scoring.builders import no_judge_run

# What ``abt score --help`` imports (the command's module and everything it imports at module
# level), printed by a fresh interpreter: the test process has it all loaded.
IMPORTS = """
import json, sys
from typer.testing import CliRunner
from agent_backtest.cli.app import app
result = CliRunner().invoke(app, ["score", "--help"])
assert result.exit_code == 0, result.output
print(json.dumps(sorted(sys.modules)))
"""


def test_score_leaves_the_trace_readers_and_the_report_pages_unimported() -> None:
    done = subprocess.run(
        [sys.executable, "-c", IMPORTS], capture_output=True, text=True, check=True
    )
    modules = set(json.loads(done.stdout))
    assert {"agent_backtest.cli.score", "agent_backtest.reporting.figures"} <= modules
    # The bounded JSON reader (jsonio, with its limits) reads gold files as it reads traces;
    # no trace reader, registry or session stream comes with it.
    json_reader = {"formats", "formats.jsonio", "formats.limits"}
    formats = {name for name in modules if name.startswith("agent_backtest.formats")}
    assert formats <= {f"agent_backtest.{name}" for name in json_reader}
    assert "yaml" not in modules  # only a YAML agent config needs it
    pages = {"run_report", "run_compare", "report_page", "compare_page", "gate", "markdown"}
    assert not {f"agent_backtest.reporting.{page}" for page in pages} & modules


def test_every_public_name_of_the_lazy_packages_is_importable_from_the_package() -> None:
    # Each is imported from its module on first use: a name whose module does not define it
    # raises here.
    packages = agent_backtest.api, agent_backtest.providers, agent_backtest.reporting
    for package in (*packages, agent_backtest.runs):
        for name in package.__all__:
            assert getattr(package, name) is not None, (package.__name__, name)


SCORES_WITHOUT_SCIPY = """
import sys
from pathlib import Path
from agent_backtest import api
api.score(Path(sys.argv[1]))
unwanted = ("scipy", "numpy", "asyncio", "tenacity", "sqlite3")
clients = ("agent_backtest.providers.client", "agent_backtest.runs.comparison")
print(sorted(name for name in sys.modules if name.split(".")[0] in unwanted or name in clients))
"""


def test_scoring_without_a_judge_loads_neither_scipy_nor_the_model_clients(
    tmp_path: Path,
) -> None:
    # scipy with numpy takes about half a second to load, a quarter of what scoring 10,000
    # answers may take: the intervals' beta and t functions are the package's own. Without a
    # judge nothing waits on a call: no event loop, no client, no response cache.
    run = no_judge_run(tmp_path / "run", 40)
    done = subprocess.run(
        [sys.executable, "-c", SCORES_WITHOUT_SCIPY, str(run)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(done.stdout.replace("'", '"')) == []
    summary = json.loads((run / "summary.json").read_text())
    assert summary["overall"]["agreement"]["ci95"][0] is not None


def test_a_name_no_module_defines_is_an_attribute_error() -> None:
    message = r"module 'agent_backtest\.runs' has no attribute 'NoSuchName'"
    with pytest.raises(AttributeError, match=message):
        _ = agent_backtest.runs.NoSuchName  # type: ignore[attr-defined]
