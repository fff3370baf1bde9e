"""Real headless Chromium for the page tests, or a clear skip (a failure under CI)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def missing_reason(chromium: Path = CHROMIUM) -> str | None:
    """Why the browser tests cannot run here, or None when they can."""
    if not chromium.exists():
        return f"no browser at {chromium}: apt-get install -y chromium"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed: pip install playwright (never playwright install)"
    return None


def keep_screenshot(path: Path) -> None:
    """Copy a screenshot to $ABT_SCREENSHOT_DIR when set, to look at it after the run."""
    target = os.environ.get("ABT_SCREENSHOT_DIR")
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(target) / path.name)
