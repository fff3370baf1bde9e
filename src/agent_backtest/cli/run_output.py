"""The flags that say where a new run goes and which model config it calls its models through."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from agent_backtest.cli.flags import flag
from agent_backtest.cli.options import CONFIG_FILE_HELP, OUTPUT, ROLES


@dataclass
class RunOutput:
    """A new run's directory (``--out``) and the model config (``--config``) that endpoints,
    keys and roles are read from."""

    out: Path | None = field(
        default=None, metadata=flag(OUTPUT, "DIR", help="The run directory to create.")
    )
    config_file: Path | None = field(
        default=None, metadata=flag(ROLES, "FILE", flag="--config", help=CONFIG_FILE_HELP)
    )
