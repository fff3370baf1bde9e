"""The response cache, the config in effect and the record schemas, asked for from Python."""

from __future__ import annotations

from pathlib import Path

import pytest

import agent_backtest as abt


def test_cache_stats_and_clear_read_the_same_cache(tmp_path: Path) -> None:
    empty = abt.cache_stats(tmp_path / "cache")
    assert empty.entries == 0
    cleared = abt.cache_clear(tmp_path / "cache")
    assert cleared.removed == 0 and cleared.path == empty.path


def test_config_files_prefers_the_local_abt_toml(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert abt.config_files().in_effect is None
    (tmp_path / "abt.toml").write_text("", encoding="utf-8")
    files = abt.config_files()
    assert files.in_effect == files.local == (tmp_path / "abt.toml").resolve()


def test_schema_names_every_record_or_refuses_an_unknown_one() -> None:
    every = abt.schema()
    assert {"session", "unit", "run", "bench_run", "simulate_run"} <= set(every)
    assert abt.schema("unit") == every["unit"]
    with pytest.raises(abt.UserError) as caught:
        abt.schema("units")
    assert caught.value.parameter == "record"
