"""``config_files()``: which model config (abt.toml) is in effect, and where each is looked for."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agent_backtest.providers.config import config_path, user_config_path

__all__ = ["ConfigFiles", "config_files"]


@dataclass(frozen=True)
class ConfigFiles:
    """The config file in effect (None: the built-in defaults apply), and the two places looked
    in, in order."""

    in_effect: Path | None
    local: Path
    user: Path


def config_files() -> ConfigFiles:
    """./abt.toml if it exists, else the user's; both places, resolved."""
    in_effect = config_path(None)
    return ConfigFiles(
        in_effect.resolve() if in_effect else None,
        Path("abt.toml").resolve(),
        user_config_path(),
    )
