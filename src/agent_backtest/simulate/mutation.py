"""What a conversation may have done to the agent's data, judged from the tools it called.

Whether a flow is isolated is decided before it is played, from what it says (``mutates``,
``expect_tools``); which tools the agent then calls is the agent's choice. So each conversation
is looked at after it ends:

* played **unisolated**, a call of a tool the agent config does not declare read-only may have
  changed the data the next flows (and the next run) see: the conversation records the tools
  (``unisolated_calls``), its verdict is ``uncertain`` (``unisolated_mutation``) and the run
  ends ``completed_with_errors``;
* played **isolated on a fixture database**, calls of mutating tools that never changed the file
  over a whole run mean the file named is most likely not the one the agent writes: the run
  warns, since restoring it protects nothing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from agent_backtest.simulate.isolation import FixtureDb, Isolation
from agent_backtest.simulate.models import ConversationRecord

UNISOLATED = "unisolated_mutation"
"""The check, and the reason of the uncertain verdict, of a conversation that called a tool not
known to be read-only outside isolation."""


@dataclass(frozen=True)
class ToolSafety:
    """What the agent config declares of the agent's tools."""

    read_only: frozenset[str] = frozenset()
    mutating: frozenset[str] = frozenset()

    @classmethod
    def declared(cls, read_only: Iterable[str], mutating: Iterable[str]) -> ToolSafety:
        """The declarations of an agent config (``read_only_tools``, ``mutating_tools``)."""
        return cls(frozenset(read_only), frozenset(mutating))

    def not_read_only(self, conversation: ConversationRecord) -> list[str]:
        """The tools the conversation called that are not declared read-only, in the order
        first called."""
        return _in_order(conversation, lambda name: name not in self.read_only)

    def mutating_calls(self, conversation: ConversationRecord) -> list[str]:
        """The tools the conversation called that change data: those declared mutating, or
        when the config declares none, those not declared read-only."""
        if self.mutating:
            return _in_order(conversation, lambda name: name in self.mutating)
        return self.not_read_only(conversation)


def _in_order(conversation: ConversationRecord, keep: Callable[[str], bool]) -> list[str]:
    """The tools called that ``keep`` keeps, each once, in the order first called."""
    names = (call.name for turn in conversation.turns for call in turn.tool_calls)
    return [name for name in dict.fromkeys(names) if keep(name)]


def unisolated_mutation(conversation: ConversationRecord) -> str | None:
    """Why the conversation cannot be trusted to have left the agent's data as it was, when it
    called tools not known to be read-only outside isolation."""
    if not conversation.unisolated_calls:
        return None
    return (
        f"called {', '.join(conversation.unisolated_calls)} without isolation: not declared "
        "read-only, so it may have changed the agent's data for the flows after it; declare "
        "it in read_only_tools, or isolate the flow (mutates: true with --fixture-db or "
        "--snapshot-cmd and --restore-cmd)"
    )


@dataclass
class FixtureWatch:
    """Whether the fixture database changed after the isolated conversations that made
    mutating calls, over one start of a run."""

    path: Path
    kept: Path
    mutated: list[str] = field(default_factory=list)
    """The flows that called a mutating tool."""
    changed: bool = False
    """The file differed from the kept copy after at least one of them."""

    def after(self, flow_id: str, calls: list[str]) -> None:
        """Look at the file after the conversation of ``flow_id`` (before its restore)."""
        if not calls:
            return
        self.mutated.append(flow_id)
        if not self.changed:
            self.changed = _digest(self.path) != _digest(self.kept)

    def warning(self) -> str | None:
        """The warning when mutating calls never changed the file."""
        if not self.mutated or self.changed:
            return None
        flows = ", ".join(self.mutated[:3]) + (" …" if len(self.mutated) > 3 else "")
        return (
            f"{len(self.mutated)} isolated conversations ({flows}) called mutating tools, yet "
            f"{self.path} never changed: it may not be the agent's database, and restoring it "
            "protects nothing; name the file the agent writes with --fixture-db"
        )


def watch_fixture(isolation: Isolation) -> FixtureWatch | None:
    """A watch on the fixture database of ``isolation``; None for snapshot commands, whose
    data cannot be looked at."""
    if isinstance(isolation, FixtureDb):
        return FixtureWatch(isolation.path, isolation.kept)
    return None


def _digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()
