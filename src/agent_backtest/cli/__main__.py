"""``python -m agent_backtest.cli``: the same as the ``abt`` command."""

from agent_backtest.cli import main

main()
