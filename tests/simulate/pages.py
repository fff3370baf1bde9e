"""A simulate run's page opened in Chromium, with every script error, console error and request
collected."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def open_page(chromium: Any, path: Path, problems: list[str], anchor: str = "") -> Any:
    """A page showing ``path``; script and console errors and any request land in ``problems``."""
    page = chromium.new_page(viewport={"width": 1300, "height": 900})
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on(
        "console",
        lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None,
    )
    page.on(
        "request",
        lambda r: problems.append(f"request: {r.url}") if not r.url.startswith("file:") else None,
    )
    page.goto(path.as_uri() + anchor)
    return page


def visible(page: Any) -> list[str]:
    """The ids of the conversations shown."""
    return page.eval_on_selector_all(
        "section.conversation", "items => items.filter(i => i.offsetParent !== null).map(i => i.id)"
    )
