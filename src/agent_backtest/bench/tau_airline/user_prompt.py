"""τ-bench's user simulator prompt: the system prompt its simulated user is given.

The text is τ-bench's own (``data/user_prompt.txt``; see ``PROVENANCE.md``), with the case's
instruction where ``{instruction}`` stands. With it, the agent's greeting first and the agent's
words as the other side of the chat (as the simulated user of ``episodes`` arranges them), the
user's model is asked what τ-bench asks it.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

from agent_backtest.episodes.simulated_user import DEFAULT_STOP, UserBrief

PLACEHOLDER = "{instruction}"
STOP_MARKER = DEFAULT_STOP
"""The stop marker the prompt's text tells the user to write."""


@cache
def _template() -> str:
    """The shipped prompt text, its trailing newline dropped."""
    data = resources.files("agent_backtest.bench.tau_airline") / "data" / "user_prompt.txt"
    return data.read_text(encoding="utf-8").removesuffix("\n")


def tau_user_prompt(brief: UserBrief) -> str:
    """τ-bench's system prompt for a user playing ``brief.instructions``."""
    return _template().replace(PLACEHOLDER, brief.instructions)
