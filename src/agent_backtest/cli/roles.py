"""The judge flags of the commands that score, turned into the API's ``roles`` mapping."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class JudgeFlags:
    """The models of the judge roles, as ``--judge`` and ``--fallback-judge`` name them."""

    judge: str | None = None
    """LLM judge (provider/model); without one, text gets a labelled token-overlap similarity."""
    fallback_judge: str | None = None
    """Asked when the judge's verdict is still invalid after one retry."""

    def roles(self) -> dict[str, str]:
        """The judge roles named, for an API function's ``roles``."""
        named = {"judge": self.judge, "fallback_judge": self.fallback_judge}
        return {name: model for name, model in named.items() if model}
