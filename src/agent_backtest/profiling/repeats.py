"""Repeated tool calls: the same tool called again with the same arguments (retries, loops).

A *retry* is a tool call identical (name and canonical arguments) to the session's previous tool
call; a run of retries is a loop, and the longest run is reported. A *repeat* is a call identical
to any earlier call of the session, however far back. A call whose arguments were not recorded
cannot be compared, so it is counted as missing rather than as "not repeated".
"""

from __future__ import annotations

from collections import Counter

from agent_backtest.profiling.distribution import Tally
from agent_backtest.runs.profile import RepeatedCalls

NO_ARGUMENTS = "have no recorded arguments"


class SessionRepeats:
    """Follows one session's tool calls; forgotten when the session ends."""

    def __init__(self) -> None:
        self.previous: tuple[str, bytes] | None = None
        self.run = 1
        self.longest = 1
        self.seen: set[tuple[str, bytes]] = set()

    def call(self, name: str, arguments: bytes | None) -> tuple[bool, bool] | None:
        """(is a retry, is a repeat) of this call, or None when its arguments are unknown."""
        if arguments is None:
            self.previous, self.run = None, 1
            return None
        key = (name, arguments)
        retry = key == self.previous
        self.run = self.run + 1 if retry else 1
        self.longest = max(self.longest, self.run)
        repeat = key in self.seen
        self.seen.add(key)
        self.previous = key
        return retry, repeat


class Repeats:
    """Retries and repeats of a group's tool calls, in total and by tool."""

    def __init__(self) -> None:
        self.retries = Tally("tool calls", integral=True)
        self.repeats = Tally("tool calls", integral=True)
        self.retries_by_tool: Counter[str] = Counter()
        self.repeats_by_tool: Counter[str] = Counter()
        self.sessions_with_loops = 0
        self.longest_loop = 0

    def add(self, name: str, verdict: tuple[bool, bool] | None) -> None:
        """One tool call's verdict from :meth:`SessionRepeats.call`."""
        if verdict is None:
            self.retries.lack(NO_ARGUMENTS)
            self.repeats.lack(NO_ARGUMENTS)
            return
        retry, repeat = verdict
        self.retries.add(int(retry))
        self.repeats.add(int(repeat))
        self.retries_by_tool[name] += retry
        self.repeats_by_tool[name] += repeat

    def end_session(self, session: SessionRepeats) -> None:
        """Take the longest run of identical calls of a finished session."""
        if session.longest >= 2:
            self.sessions_with_loops += 1
        self.longest_loop = max(self.longest_loop, session.longest if session.seen else 0)

    def figures(self) -> RepeatedCalls:
        """Retries and repeats (None when arguments are missing), by tool, and the longest loop."""
        return RepeatedCalls(
            retries=self.retries.figure(),
            retries_by_tool=_positive(self.retries_by_tool),
            repeats=self.repeats.figure(),
            repeats_by_tool=_positive(self.repeats_by_tool),
            sessions_with_retries=self.sessions_with_loops,
            longest_run_of_identical_calls=self.longest_loop,
        )


def _positive(counts: Counter[str]) -> dict[str, int]:
    """The non-zero counts, sorted by name."""
    return {name: counts[name] for name in sorted(counts) if counts[name]}
