"""State checks: what the agent's data must hold once a conversation is over.

A flow may name checks on the agent's data, made after its conversation and before any restore:
a SQL query on the fixture database (``--fixture-db``, opened read-only) whose rows must equal
``expect``, or a shell command whose output must (its stripped text when ``expect`` is text, its
JSON otherwise). What the agent said is the judge's to weigh; what it left in its data is a
fact, and a check that finds other rows decides the flow without asking anyone.

A check that cannot be made (the query fails, the command exits non-zero or prints no JSON)
decides nothing: the flow is ``uncertain``, never failed for the tester's mistake.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

from agent_backtest.errors import bounded
from agent_backtest.record_model import StrictModel
from agent_backtest.simulate.shell import failure, run_shell

STATE_OWNER = "agent_execution"
"""Who fixes data left wrong, unless the check names another owner."""
COMMAND_SECONDS = 60


class StateCheck(StrictModel):
    """One check on the agent's data: a query or a command, and what it must find."""

    sql: str | None = Field(default=None, description="A query on the fixture database.")
    command: str | None = Field(default=None, description="A shell command printing the state.")
    expect: Any = Field(
        description="SQL: the rows, a list of lists. A command: its output, as text or JSON."
    )
    owner: str | None = Field(
        default=None, description=f"Who fixes a failure [default: {STATE_OWNER}]."
    )

    @model_validator(mode="after")
    def _one_way(self) -> StateCheck:
        """Exactly one of sql and command."""
        if (self.sql is None) == (self.command is None):
            raise ValueError("give sql or command (one of the two)")
        if self.sql is not None and not _rows_shaped(self.expect):
            raise ValueError("expect of an sql check is its rows: a list of lists")
        return self

    @property
    def kind(self) -> Literal["sql", "command"]:
        """How the state is read."""
        return "sql" if self.sql is not None else "command"

    @property
    def text(self) -> str:
        """The query or the command, as written."""
        return self.sql if self.sql is not None else self.command or ""


class StateResult(StrictModel):
    """One state check as it was made after a conversation."""

    check: StateCheck
    found: Any = Field(default=None, description="The rows or output found (None on an error).")
    holds: bool = Field(description="What was found equals what was expected.")
    error: str | None = Field(default=None, description="Why the check could not be made.")

    def describe(self) -> str:
        """The check, what it expected and what it found, in one line of evidence."""
        what = f"{self.check.kind} {self.check.text!r}"
        if self.error is not None:
            return f"{what} could not be checked: {self.error}"
        expected = json.dumps(self.check.expect, ensure_ascii=False)
        found = json.dumps(self.found, ensure_ascii=False, default=str)
        return f"{what} expected {expected}, found {found}"


def needs_database(flows: Sequence[Any]) -> str | None:
    """The first flow whose state checks query the fixture database, if any."""
    for flow in flows:
        if any(check.sql is not None for check in flow.state):
            return flow.id
    return None


def check_state(checks: Sequence[StateCheck], database: Path | None) -> list[StateResult]:
    """Every check made now, in order; an SQL check needs the ``database``."""
    return [_check(check, database) for check in checks]


def _check(check: StateCheck, database: Path | None) -> StateResult:
    try:
        found = _query(check.sql, database) if check.sql is not None else _output(check)
    except StateUnreadable as exc:
        return StateResult(check=check, holds=False, error=bounded(str(exc)))
    return StateResult(check=check, found=found, holds=found == _normal(check.expect))


class StateUnreadable(Exception):
    """The state could not be read: why."""


def _query(sql: str, database: Path | None) -> list[list[Any]]:
    """The rows of ``sql`` on a read-only connection: a check never changes what it checks."""
    if database is None:
        raise StateUnreadable("no fixture database to query (--fixture-db)")
    try:
        connection = sqlite3.connect(f"{database.resolve().as_uri()}?mode=ro", uri=True)
        try:
            return [list(row) for row in connection.execute(sql).fetchall()]
        finally:
            connection.close()
    except sqlite3.Error as exc:
        raise StateUnreadable(f"{type(exc).__name__}: {exc}") from None


def _output(check: StateCheck) -> Any:
    """The command's output: stripped text when text is expected, else its JSON."""
    done = run_shell(check.command or "", COMMAND_SECONDS)
    if done is None:
        raise StateUnreadable(f"no output within {COMMAND_SECONDS} s")
    if done.returncode != 0:
        raise StateUnreadable(failure(done))
    text = done.stdout.strip()
    if isinstance(check.expect, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        raise StateUnreadable(f"the output is not JSON: {text[:100]!r}") from None


def _normal(expect: Any) -> Any:
    """What was expected, as JSON reads it back (tuples become lists)."""
    return json.loads(json.dumps(expect))


def _rows_shaped(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(row, list) for row in value)
