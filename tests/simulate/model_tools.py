"""The Python tools of the model target's tests: what they return is made from their arguments."""

from __future__ import annotations

import asyncio


def add_note(text: str) -> dict:
    """Save a note: the note as saved."""
    return {"saved": text, "length": len(text)}


async def count_words(text: str) -> int:
    """An async tool: the words of the text."""
    await asyncio.sleep(0)
    return len(text.split())


def explode(reason: str) -> str:
    """A tool whose backend is down."""
    raise RuntimeError(f"the notes store is down ({reason})")


TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": {argument: {"type": "string"}},
                "required": [argument],
            },
        },
    }
    for name, description, argument in (
        ("add_note", "Save a note.", "text"),
        ("count_words", "Count the words of a text.", "text"),
        ("explode", "Check the notes store.", "reason"),
    )
]
"""Their definitions, in OpenAI function format."""
