"""The judge's prompt shows no credential: a key pasted into the conversation reaches the judge
as ``[redacted]``, the rest of the text as it is."""

from __future__ import annotations

from agent_backtest.scoring.judge import TEXT_ANSWER
from agent_backtest.scoring.prompts import context_text, load_template, render
from agent_backtest.trace import Message

PASTED = "sk-proj-PastedIntoTheChat0123456789abcd"


def test_a_key_in_the_conversation_is_masked_in_the_judges_prompt() -> None:
    context = [Message(role="user", content=f"my key is {PASTED}, please rotate it")]
    prompt = render(
        load_template(TEXT_ANSWER),
        {"context": context_text(context), "reference": "Rotated.", "candidate": "Done."},
    )
    assert PASTED not in prompt.user and PASTED not in prompt.system
    assert "my key is [redacted], please rotate it" in prompt.user
