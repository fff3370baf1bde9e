"""``abt config``: where the model config (abt.toml) is looked for, and which one is in effect."""

from __future__ import annotations

import typer

from agent_backtest import api


def path() -> None:
    """Print the config file in effect (./abt.toml, else the user's), then where each is
    looked for."""
    files = api.config_files()
    in_effect, local, user = files.in_effect, files.local, files.user
    typer.echo(str(in_effect) if in_effect else "none: the built-in defaults apply")
    typer.echo(f"looked for: {local} ({'found' if local.is_file() else 'absent'})", err=True)
    typer.echo(f"            {user} ({'found' if user.is_file() else 'absent'})", err=True)
