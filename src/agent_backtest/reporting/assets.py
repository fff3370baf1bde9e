"""The page skeleton, style sheet and script shipped as package data."""

from __future__ import annotations

from functools import cache
from importlib.resources import files

from agent_backtest.reporting.markup import Markup, fill, script_hash


@cache
def asset(name: str) -> str:
    """The text of one file in ``report/assets``."""
    return (files("agent_backtest.reporting") / "assets" / name).read_text(encoding="utf-8")


def page(
    title: str,
    body: Markup,
    data: str = "",
    script: str | None = None,
    generator: str = "agent-backtest",
) -> str:
    """A whole self-contained page: inline style, inline data, at most one inline script.

    The content security policy allows no network at all and only the one script shipped
    here (by its hash), so nothing a trace smuggles into the page could run or call out.
    """
    before, after = page_around(title, body, script, generator)
    return before + data + after


def page_around(
    title: str, body: Markup, script: str | None = None, generator: str = "agent-backtest"
) -> tuple[str, str]:
    """The page of :func:`page` before its inline data and after it, for data written apart."""
    script_block = f"<script>{script}</script>" if script else ""
    parts = {
        "title": Markup(title),
        "style": asset("report.css"),
        "body": body,
        "script": script_block,
        "script_policy": script_hash(script) if script else "'none'",
        "generator": generator,
    }
    before, after = asset("page.html").split("{{data}}")
    return fill(before, parts), fill(after, parts)
