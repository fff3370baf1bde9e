"""Every job's run.json says what each start ran on: abt's version and commit, Python's, the key
libraries', and each role's endpoint as resolved (never a key)."""

from __future__ import annotations

import json
import platform
from importlib.metadata import version
from importlib.util import find_spec
from pathlib import Path

import pytest

from agent_backtest.providers import ModelConfig, ModelRef
from agent_backtest.providers.config import ModelRole, ProviderSettings
from agent_backtest.runs.provenance import collect_provenance, package_versions, safe_url
from tests.conftest import write_tau_units
from tests.fake_openai import FakeOpenAI
from tests.optional import local_extra_missing, unavailable
from tests.runs.job_runs import abt, bench_run, run_json, simulate_run

KEY = "sk-test-provenance-0123456789abcdef"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, str]]:
    """A run of each job whose models are reached at a server on 127.0.0.1, with the server's
    base URL: a replay (resumed once), a simulate run, a bench run."""
    folder = tmp_path_factory.mktemp("provenance")
    units = write_tau_units(folder / "units.jsonl", limit=2)
    replay = folder / "replay"
    with FakeOpenAI() as server:
        config = folder / "abt.toml"
        config.write_text(
            f'[providers.fake]\ntype = "openai"\nbase_url = "{server.base_url}"\napi_key_env = ""\n'
        )
        abt("replay", units, "--model", "fake/candidate-1", "--out", replay, "--no-cache",
            "--config", config)  # fmt: skip
        replay_url = server.base_url
        abt("replay", "--resume", replay, "--retry-errors")
    simulate = simulate_run(folder)
    bench = bench_run(folder)
    simulate_url = run_json(simulate)["provenance"][0]["endpoints"]["user"]["sim/user-model"]
    bench_url = run_json(bench)["provenance"][0]["endpoints"]["agent"]["fake/agent-1"]
    return {
        "replay": (replay, replay_url),
        "simulate": (simulate, simulate_url),
        "bench": (bench, bench_url),
    }


def test_every_jobs_run_json_records_what_it_ran_on(runs: dict[str, tuple[Path, str]]) -> None:
    python = f"{platform.python_implementation()} {platform.python_version()}"
    for kind, (run, _) in runs.items():
        (first, *_) = run_json(run)["provenance"]
        assert first["python"] == python, kind
        assert first["abt_version"] == version("agent-backtest"), kind
        assert first["abt_commit"], kind  # the tests run from a checkout
        for name in ("pydantic", "httpx", "typer"):
            assert first["packages"][name] == version(name), (kind, name)
        assert "ray" not in first["packages"], kind


def test_each_role_reached_at_an_endpoint_records_it_resolved(
    runs: dict[str, tuple[Path, str]],
) -> None:
    replay, url = runs["replay"]
    assert url.startswith("http://127.0.0.1:")
    starts = run_json(replay)["provenance"]
    assert len(starts) == 2 == run_json(replay)["attempts_of_run"]  # one per start
    endpoints = {"candidate": {"fake/candidate-1": url}}
    assert [start["endpoints"] for start in starts] == [endpoints, endpoints]
    simulate, url = runs["simulate"]
    assert url.startswith("http://127.0.0.1:")
    assert run_json(simulate)["provenance"][0]["endpoints"]["user"] == {"sim/user-model": url}
    bench, url = runs["bench"]
    assert url.startswith("http://127.0.0.1:")
    assert run_json(bench)["provenance"][0]["endpoints"] == {"agent": {"fake/agent-1": url}}


def test_a_model_served_in_process_has_no_endpoint(tmp_path: Path) -> None:
    units = write_tau_units(tmp_path / "units.jsonl", limit=1)
    abt("replay", units, "--model", "mock/golden", "--out", tmp_path / "run", "--no-cache")
    (start,) = run_json(tmp_path / "run")["provenance"]
    assert start["endpoints"] == {"candidate": {"mock/golden": None}}


def test_an_endpoint_is_the_roles_own_else_its_providers_and_never_holds_a_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    config = ModelConfig(
        providers={"vllm": ProviderSettings(type="openai", base_url="http://10.0.0.5:8000/v1")}
    )
    roles = {
        "agent": ModelRole(name="agent", model="openai/gpt-4o"),
        "user": ModelRole(
            name="user",
            model="vllm/qwen",
            base_url=f"https://bo:{KEY}@gateway.example/v1?api-key={KEY}&region=eu",
        ),
        "judge": ModelRole(name="judge", model="vllm/judge-7b"),
        "candidate": ModelRole(name="candidate", model="trace"),
    }
    traced = {"candidate": [ModelRef("vllm", "a"), ModelRef("openai", "gpt-4o-mini")]}
    provenance = collect_provenance(roles, config, traced)
    assert provenance.endpoints["agent"] == {"openai/gpt-4o": "https://api.openai.com/v1"}
    assert provenance.endpoints["user"] == {
        "vllm/qwen": "https://gateway.example/v1?api-key=[redacted]&region=eu"
    }
    assert provenance.endpoints["judge"] == {"vllm/judge-7b": "http://10.0.0.5:8000/v1"}
    assert provenance.endpoints["candidate"] == {
        "openai/gpt-4o-mini": "https://api.openai.com/v1",
        "vllm/a": "http://10.0.0.5:8000/v1",
    }
    assert KEY not in provenance.model_dump_json()


def test_an_ipv6_endpoint_keeps_its_brackets_and_port() -> None:
    assert safe_url("http://u:p@[::1]:8080/v1") == "http://[::1]:8080/v1"


def test_optional_libraries_are_recorded_when_the_run_loads_them() -> None:
    if find_spec("ray") is None:
        unavailable("ray is not installed: pip install 'agent-backtest[ray]'")
    assert package_versions(["ray"])["ray"] == version("ray")
    assert set(package_versions()) >= {"pydantic", "httpx", "typer"}


def test_a_local_model_records_llama_cpp_pythons_version() -> None:
    missing = local_extra_missing()
    if missing:
        unavailable(missing)
    roles = {"agent": ModelRole(name="agent", model="local/smollm2")}
    provenance = collect_provenance(roles, ModelConfig())
    assert provenance.packages["llama-cpp-python"] == version("llama-cpp-python")
    assert provenance.endpoints == {"agent": {"local/smollm2": None}}


def test_a_run_json_without_provenance_still_loads(tmp_path: Path) -> None:
    from agent_backtest.runs.manifest_base import ManifestBase

    run = bench_run(tmp_path)
    document = run_json(run)
    del document["provenance"]
    (run / "run.json").write_text(json.dumps(document))
    assert ManifestBase.load(run / "run.json").provenance == []
