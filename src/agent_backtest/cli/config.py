"""``abt config``: where the model config (abt.toml) is looked for, and which one is in effect."""

from __future__ import annotations

from pathlib import Path

import typer

from agent_backtest.providers.config import config_path, user_config_path


def path() -> None:
    """Print the config file in effect (./abt.toml, else the user's), then where each is
    looked for."""
    in_effect = config_path(None)
    local, user = Path("abt.toml").resolve(), user_config_path()
    typer.echo(str(in_effect.resolve()) if in_effect else "none: the built-in defaults apply")
    typer.echo(f"looked for: {local} ({'found' if local.is_file() else 'absent'})", err=True)
    typer.echo(f"            {user} ({'found' if user.is_file() else 'absent'})", err=True)
