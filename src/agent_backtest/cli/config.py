"""``abt config``: where the model config (abt.toml) is looked for, and which one is in effect."""

from __future__ import annotations

from pathlib import Path

import typer

from agent_backtest.providers.config import config_path, user_config_path

config_app = typer.Typer(
    help="The model config (abt.toml): endpoints, key variables, roles and aliases.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
)


@config_app.command("path")
def path() -> None:
    """Print the config file in effect (./abt.toml, else the user's), then where each is
    looked for."""
    in_effect = config_path(None)
    local, user = Path("abt.toml").resolve(), user_config_path()
    typer.echo(str(in_effect.resolve()) if in_effect else "none: the built-in defaults apply")
    typer.echo(f"looked for: {local} ({'found' if local.is_file() else 'absent'})", err=True)
    typer.echo(f"            {user} ({'found' if user.is_file() else 'absent'})", err=True)
