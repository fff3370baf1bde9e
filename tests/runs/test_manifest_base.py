"""One manifest base for every job: a real run of each validates against its schema, a run's
kind is read from its run.json, and runs written before the base existed still load."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from agent_backtest.bench.run_manifest import BenchRunManifest
from agent_backtest.cli.app import app
from agent_backtest.errors import InputError
from agent_backtest.runs.manifest import RunManifest
from agent_backtest.runs.manifest_base import ManifestBase, RunKind, run_kind
from agent_backtest.simulate.manifest import SimulateManifest
from tests.runs.job_runs import bench_run, replay_run, run_json, simulate_run

BEFORE = Path(__file__).parents[1] / "fixtures" / "runs_before_kind"
MANIFESTS: dict[RunKind, type[ManifestBase]] = {
    "replay": RunManifest,
    "simulate": SimulateManifest,
    "bench": BenchRunManifest,
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[RunKind, Path]:
    """A real run of each job."""
    folder = tmp_path_factory.mktemp("jobs")
    return {
        "replay": replay_run(folder),
        "simulate": simulate_run(folder),
        "bench": bench_run(folder),
    }


def base_schema() -> dict:
    """The base schema as ``abt schema run_base`` prints it."""
    printed = CliRunner().invoke(app, ["schema", "run_base"])
    assert printed.exit_code == 0, printed.output
    return json.loads(printed.stdout)


def test_every_jobs_run_json_meets_the_one_base_schema(runs: dict[RunKind, Path]) -> None:
    schema = base_schema()
    validator = jsonschema.Draft202012Validator(schema)
    for kind, run in runs.items():
        document = run_json(run)
        validator.validate(document)
        assert document["kind"] == kind and document["status"] == "completed", kind
        assert run_kind(run) == kind
        assert type(MANIFESTS[kind].load(run / "run.json")) is MANIFESTS[kind]
    # the schema is strict where it speaks: a run.json of no known kind fails it
    stray = {**run_json(runs["bench"]), "kind": "profile"}
    with pytest.raises(jsonschema.ValidationError):
        validator.validate(stray)


def test_each_job_records_its_calls_per_role(runs: dict[RunKind, Path]) -> None:
    assert run_json(runs["replay"])["counts"]["candidate"]["calls"] == 2
    # the simulated user spoke three times (its last message held the stop marker); the
    # scripted flow asked no model
    counts = run_json(runs["simulate"])["counts"]
    assert set(counts) == {"user"} and counts["user"]["calls"] == 3
    assert run_json(runs["simulate"])["played"]["conversations"] == 2
    # the bench agent: lookup, order, then its answer, in each of the two episodes
    assert run_json(runs["bench"])["counts"]["agent"]["calls"] == 6


def test_the_roles_and_inputs_are_where_the_base_says(runs: dict[RunKind, Path]) -> None:
    replay = run_json(runs["replay"])
    assert replay["roles"] == replay["config"]["roles"]
    assert replay["roles"]["candidate"]["model"] == "mock/golden"
    simulate = run_json(runs["simulate"])
    assert simulate["roles"]["user"]["model"] == "sim/user-model"
    inputs = simulate["inputs"]
    assert [Path(i["path"]).name for i in inputs] == ["flows.jsonl", "target.toml"]
    assert all(len(i["sha256"]) == 64 for i in [*replay["inputs"], *inputs])


@pytest.mark.parametrize("kind", ["replay", "simulate", "bench"])
def test_a_run_json_written_before_the_base_loads_with_its_kind(
    kind: RunKind, tmp_path: Path
) -> None:
    earlier = json.loads((BEFORE / f"{kind}.json").read_text())
    assert "kind" not in earlier
    run = tmp_path / kind
    run.mkdir()
    (run / "run.json").write_text(json.dumps(earlier))
    assert run_kind(run) == kind
    manifest = MANIFESTS[kind].load(run / "run.json")
    base = ManifestBase.load(run / "run.json")
    assert manifest.kind == base.kind == kind
    assert manifest.created_at == base.created_at and manifest.status == "completed"
    if kind == "replay":  # its counts were the candidate's
        assert manifest.counts["candidate"].calls == earlier["counts"]["calls"] == 2
    if kind == "simulate":  # its counts were the conversations'; no call was recorded
        assert isinstance(manifest, SimulateManifest)
        assert manifest.played.conversations == earlier["counts"]["conversations"] == 2
        assert manifest.counts == {} == base.counts
    if kind == "bench":
        assert manifest.counts["agent"].calls == earlier["counts"]["agent"]["calls"] == 6
    # saved again, it is a run.json of today's shape that still reads the same
    manifest.save(run / "run.json")
    jsonschema.validate(run_json(run), base_schema())
    assert MANIFESTS[kind].load(run / "run.json") == manifest


def test_a_folder_without_a_run_has_no_kind(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"is not a run directory \(no run.json\)"):
        run_kind(tmp_path)
    (tmp_path / "run.json").write_text('{"schema": "abt.profile/1"}')
    with pytest.raises(InputError) as caught:
        run_kind(tmp_path)
    assert caught.value.location == "kind" and "not a run manifest" in str(caught.value)


def test_a_replay_command_on_another_jobs_run_names_its_kind(runs: dict[RunKind, Path]) -> None:
    for kind in ("simulate", "bench"):
        result = CliRunner().invoke(app, ["score", str(runs[kind])])
        assert result.exit_code == 2, result.output
        assert result.stderr.strip() == (
            f"abt: error: {runs[kind] / 'run.json'}: kind: a {kind} run, not a replay run: "
            f"use abt {kind} on it"
        )
