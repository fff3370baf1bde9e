"""What run.json says about the code that made a run."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from agent_backtest.runs import manifest_base
from agent_backtest.runs.manifest_base import code_version

CHECKOUT = Path(__file__).resolve().parents[2]


def test_a_run_from_a_checkout_names_its_commit() -> None:
    head = subprocess.run(
        ["git", "-C", str(CHECKOUT), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    assert re.fullmatch(rf"git:{head}(\+dirty)?", code_version())


def test_an_installed_package_is_named_by_version_and_a_hash_of_its_files(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(manifest_base, "_git_commit", lambda package: None)
    first = code_version()
    assert re.fullmatch(r"\d+\.\d+\.\d+\+sha256:[0-9a-f]{16}", first)
    assert code_version() == first  # the same files give the same fingerprint
