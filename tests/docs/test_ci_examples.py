"""The CI files users copy from examples/ci run as written: each ``abt`` line of their scripts,
read from the YAML (never copied here), runs in bash with the file's own variables on the shipped
traces, the candidate ``mock/golden`` (production's own answers) in place of a hosted model that
would need a key. Lines that set the machine up (``pip install``) are the CI system's, not
abt's, and are not run."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from tests.test_docs import ROOT

CI = ROOT / "examples" / "ci"
# the one variable a test cannot use as written: the hosted candidate needs a key
NO_KEY = {"CANDIDATE": "mock/golden"}


def github_job(workflow: dict[str, Any]) -> tuple[dict[str, str], list[str]]:
    """The variables and the script lines of the workflow's only job, in order."""
    (job,) = workflow["jobs"].values()
    variables = dict(workflow.get("env", {}))
    lines = []
    for step in job["steps"]:
        if "run" in step:
            variables.update(step.get("env", {}))
            lines += step["run"].splitlines()
    return variables, lines


def gitlab_job(pipeline: dict[str, Any]) -> tuple[dict[str, str], list[str]]:
    """The variables and the script lines of the pipeline's only job, in order."""
    (job,) = pipeline.values()
    return dict(job.get("variables", {})), list(job["script"])


def run_abt_lines(variables: dict[str, str], lines: list[str], cwd: Path) -> list[str]:
    """Each ``abt`` line run by bash in ``cwd`` with ``variables``; the lines run."""
    shutil.copytree(ROOT / "examples", cwd / "examples")
    environment = {**os.environ, **variables, **NO_KEY, "COLUMNS": "100", "NO_COLOR": "1"}
    environment.pop("OPENAI_API_KEY", None)  # the job must not need one with mock/golden
    # abt as this checkout's command, whatever is first on PATH
    define_abt = f'abt() {{ "{sys.executable}" -m agent_backtest.cli "$@"; }}\n'
    ran = [line for line in lines if line.strip().startswith("abt ")]
    for line in ran:
        done = subprocess.run(
            ["bash", "-c", define_abt + line], cwd=cwd, env=environment,
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, f"{line}\n{done.stdout}\n{done.stderr}"
    return ran


def test_the_github_workflow_runs_on_the_shipped_traces(tmp_path: Path) -> None:
    workflow = yaml.safe_load((CI / "github-actions.yml").read_text(encoding="utf-8"))
    variables, lines = github_job(workflow)
    variables = {k: v for k, v in variables.items() if "${{" not in str(v)}  # secrets
    summary = tmp_path / "step-summary.md"
    ran = run_abt_lines({**variables, "GITHUB_STEP_SUMMARY": str(summary)}, lines, tmp_path)
    assert [line.split()[1] for line in ran] == ["units", "replay", "gate"]
    assert "**gate passed**" in summary.read_text(encoding="utf-8")
    kept = workflow["jobs"]["backtest"]["steps"][-1]["with"]["path"].split()
    assert all((tmp_path / path).is_file() for path in kept), kept


def test_the_gitlab_job_runs_on_the_shipped_traces(tmp_path: Path) -> None:
    pipeline = yaml.safe_load((CI / "gitlab-ci.yml").read_text(encoding="utf-8"))
    variables, lines = gitlab_job(pipeline)
    ran = run_abt_lines(variables, lines, tmp_path)
    assert [line.split()[1] for line in ran] == ["units", "replay", "gate"]
    kept = pipeline["backtest"]["artifacts"]["paths"]
    assert all((tmp_path / path).is_file() for path in kept), kept


def test_the_gate_of_the_jobs_fails_a_candidate_below_the_bar(tmp_path: Path) -> None:
    """The job's last line is a real check: the same commands with a bar above what the
    candidate reaches end with exit code 3, which fails the CI job."""
    pipeline = yaml.safe_load((CI / "gitlab-ci.yml").read_text(encoding="utf-8"))
    variables, lines = gitlab_job(pipeline)
    *setup, gate = [line for line in lines if line.startswith("abt ")]
    run_abt_lines(variables, setup, tmp_path)
    # the job's own bar raised to what no interval over three sessions reaches at its low end
    environment = {**os.environ, **variables, **NO_KEY}
    define_abt = f'abt() {{ "{sys.executable}" -m agent_backtest.cli "$@"; }}\n'
    done = subprocess.run(
        ["bash", "-c", define_abt + gate + " --min-agreement 1 --use-lower-bound"],
        cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 3, done.stdout + done.stderr
