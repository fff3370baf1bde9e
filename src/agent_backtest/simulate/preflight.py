"""The target tried once before a run writes anything: a down agent or a refused credential is
one line and exit 2, not a run directory full of failed conversations.

A target that can be tried (an HTTP agent: ``preflight`` and ``preflight_step``) sends its
health request, or opens and tears down one session, or opens a connection; the other targets
were checked when they were prepared (the callable imported, the tools' code loaded, the MCP
server started and listed).
"""

from __future__ import annotations

import asyncio
from typing import Protocol, runtime_checkable

from agent_backtest.errors import UserError
from agent_backtest.simulate.targets import AgentFactory, TargetError


@runtime_checkable
class Preflighted(Protocol):
    """An agent that can show it answers before the run: what it sends, and sending it."""

    @property
    def preflight_step(self) -> str:
        """What :meth:`preflight` sends, in words (for the error)."""
        ...

    async def preflight(self) -> None:
        """One exchange with the agent; a :class:`TargetError` when it fails."""
        ...

    async def aclose(self) -> None:
        """Release its connections."""
        ...


_FIXES = {
    "http_401": "check the credential the target file sends (headers, env, credential_command)",
    "http_403": "check the credential the target file sends (headers, env, credential_command)",
    "credential": "fix credential_command",
    "connection": "start the agent, or correct base_url",
    "timeout": "start the agent, or correct base_url (or raise timeout)",
}


def check_target(name: str, factory: AgentFactory) -> None:
    """Try the target named ``name`` once; a failure is a user error naming the target, what
    was tried and why it failed."""
    agent = factory()
    if not isinstance(agent, Preflighted):
        return
    try:
        asyncio.run(_tried(agent))
    except TargetError as exc:
        fix = _FIXES.get(exc.kind, "see the agent's log")
        raise UserError(
            f"{name} failed the pre-flight {agent.preflight_step} ({exc}): {fix}; "
            "nothing was played",
            "target",
        ) from None


async def _tried(agent: Preflighted) -> None:
    try:
        await agent.preflight()
    finally:
        await agent.aclose()
