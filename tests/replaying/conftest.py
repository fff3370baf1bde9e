"""Fixtures of the replay tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import write_tau_units


@pytest.fixture
def units_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first 24 units of the τ-bench sample, with tools and the recorded model."""
    return write_tau_units(tmp_path_factory.mktemp("units") / "units.jsonl", limit=24)
