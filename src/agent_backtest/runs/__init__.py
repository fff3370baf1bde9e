"""The run directory and the files the tool writes."""

from agent_backtest.runs.files import private_atomic_writer

__all__ = ["private_atomic_writer"]
