"""Filling one of simulate's prompts (the judge's rubric, the teacher's request) with its data.

Each text taken from a flow, a conversation or a catalogue goes into its own marked block
(``scoring.prompts.block``) under one tag derived from all of them, so no text can close its
block; the blocks and the tag are kept, since a correction request quotes them again.
"""

from __future__ import annotations

from agent_backtest.scoring.prompts import PromptTemplate, block, data_tag


def fill(
    template: PromptTemplate, data: dict[str, str], **values: object
) -> tuple[str, str, str, dict[str, str]]:
    """``template``'s system and user messages with each ``data`` text in its block (user
    message) and ``values`` in place (both); also the tag and the blocks by name."""
    tag = data_tag(data)
    blocks = {name: block(name, text, tag) for name, text in data.items()}
    system = template.system.substitute(values, tag=tag)
    user = template.user.substitute(blocks, **values, tag=tag)
    return system, user, tag, blocks
