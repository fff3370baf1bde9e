"""A role is given its model one way in every function: ``roles``, a reference or a typed role."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import agent_backtest as abt
from tests.conftest import TAU_TRAJECTORIES, write_tau_units

# A provider that is complete without a key; a dry run checks it and never calls it.
CONFIG = """[providers.grading]
type = "openai"
base_url = "http://127.0.0.1:9/v1"
api_key_env = ""

[roles.judge]
timeout = 11
"""


@pytest.fixture(scope="module")
def units(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tau_units(tmp_path_factory.mktemp("units") / "units.jsonl", limit=3)


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "abt.toml"
    path.write_text(CONFIG, encoding="utf-8")
    return path


def judge_recorded(units: Path, out: Path, config: Path, judge: Any) -> abt.ModelRole:
    """The judge role a dry replay records in run.json when given ``judge``."""
    run = abt.replay(
        units, model="mock/golden", out=out, roles={"judge": judge}, dry_run=True,
        config_file=config,
    )  # fmt: skip
    return run.manifest.config.roles["judge"]


def test_a_model_reference_takes_the_config_settings(
    units: Path, config: Path, tmp_path: Path
) -> None:
    role = judge_recorded(units, tmp_path / "run", config, "grading/grader")
    assert (role.model, role.timeout, role.concurrency) == ("grading/grader", 11.0, 16)


def test_role_settings_go_over_the_config(units: Path, config: Path, tmp_path: Path) -> None:
    judge = abt.RoleSettings(model="grading/grader", timeout=7, max_retries=1)
    role = judge_recorded(units, tmp_path / "run", config, judge)
    assert (role.timeout, role.max_retries, role.concurrency) == (7.0, 1, 16)


def test_a_resolved_role_is_used_as_it_is(units: Path, config: Path, tmp_path: Path) -> None:
    judge = abt.ModelRole(name="judge", model="grading/grader", timeout=9, concurrency=2)
    assert judge_recorded(units, tmp_path / "run", config, judge) == judge


def test_a_resolved_role_of_another_name_is_refused(
    units: Path, config: Path, tmp_path: Path
) -> None:
    with pytest.raises(abt.UserError, match="a user role was given for the judge role"):
        judge_recorded(
            units, tmp_path / "run", config, abt.ModelRole(name="user", model="grading/x")
        )
    assert not (tmp_path / "run").exists()


def test_a_role_the_function_does_not_have_names_roles(tmp_path: Path) -> None:
    with pytest.raises(abt.UserError, match="has no 'user' role here") as caught:
        abt.replay(TAU_TRAJECTORIES, model="mock/golden", out=tmp_path / "r", roles={"user": "x/y"})
    assert caught.value.parameter == "roles"
    assert not (tmp_path / "r").exists()


def test_a_role_given_as_something_else_is_refused(tmp_path: Path) -> None:
    with pytest.raises(abt.UserError, match="judge: give provider/model") as caught:
        abt.score(tmp_path, roles={"judge": 42})  # type: ignore[dict-item]
    assert caught.value.parameter == "roles"


def test_a_bench_run_names_the_role_it_misses(tmp_path: Path) -> None:
    with pytest.raises(abt.UserError, match="case 0 of tau_airline is played") as caught:
        abt.bench_run("tau_airline", roles={"agent": "mock/golden"}, out=tmp_path / "r")
    assert caught.value.parameter == "user"
    assert not (tmp_path / "r").exists()


def test_a_teacher_without_generation_is_refused(tmp_path: Path) -> None:
    with pytest.raises(abt.UserError, match="the teacher writes flows") as caught:
        abt.simulate_run(
            tmp_path / "flows.jsonl", target=tmp_path / "t.toml", out=tmp_path / "r",
            roles={"teacher": "grading/t"},
        )  # fmt: skip
    assert caught.value.parameter == "roles"
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(
    "call",
    [
        lambda run: abt.simulate_judge(run, roles={"agent": "x/y"}),
        lambda run: abt.simulate_resume(run, roles={"user": "x/y"}),
        lambda run: abt.simulate_generate(
            run, tools=run, out=run / "f.jsonl", per_family=1, roles={"judge": "x/y"}
        ),
        lambda run: abt.resume(run, roles={"candidate": "x/y"}),
    ],
)
def test_every_function_checks_its_roles_first(call: Any, tmp_path: Path) -> None:
    with pytest.raises(abt.UserError) as caught:
        call(tmp_path)
    assert caught.value.parameter == "roles"
    assert list(tmp_path.iterdir()) == []
