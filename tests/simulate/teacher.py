"""A scripted teacher for the generation tests: answers a FakeOpenAI request by the family it
asks about and by how many times that family was asked, and the files generation reads."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.simulate.judge_runs import NOTES_TOOLS

CAPABILITIES = """families:
  - name: notes
    description: Saving notes and reading them back.
    tools: [add_note, list_notes]
    seeds:
      - [Save a note called groceries, "add eggs to it"]
      - turns: ["What notes do I have?"]
        expect: Lists every saved note by title.
  - name: chat
    description: Small talk about what the agent can do.
    seeds:
      - [hello, "what can you do?"]
"""

Answer = Callable[[str, int], Any]
"""The answer to the ``ask``-th question (from 1) about ``family``: an object sent as JSON,
or text."""


def written_test(family: str, number: int, tools: list[str] | None = None, seed: int = 1) -> dict:
    """One valid test as a teacher writes it."""
    return {
        "seed": seed,
        "purpose": f"{family} check {number}",
        "turns": [
            {"user": f"{family} question {number}", "expect": f"answers {family} {number}"},
            {"user": "and the other one?", "expect": "answers about the other one"},
        ],
        "expect_tools": tools if tools is not None else [],
    }


def flows(family: str, numbers: range, **fields: Any) -> dict:
    """An answer holding the tests ``numbers`` of ``family``."""
    return {"flows": [written_test(family, number, **fields) for number in numbers]}


class ScriptedTeacher:
    """A reply function for FakeOpenAI, and what each family was asked."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.asks: Counter[str] = Counter()
        self.corrections: list[str] = []

    def __call__(self, body: dict[str, Any]) -> str:
        first_user = next(m["content"] for m in body["messages"] if m["role"] == "user")
        found = re.search(r"capability (\S+):", first_user)
        assert found, first_user[:300]
        family = found.group(1)
        ask = sum(m["role"] == "user" for m in body["messages"])
        if ask > 1:
            self.corrections.append(body["messages"][-1]["content"])
        self.asks[family] += 1
        value = self.answer(family, ask)
        return value if isinstance(value, str) else json.dumps(value)


def write_inputs(tmp_path: Path, capabilities: str = CAPABILITIES) -> tuple[Path, Path]:
    """The capability file and the tools file."""
    caps = tmp_path / "capabilities.yaml"
    caps.write_text(capabilities, encoding="utf-8")
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(NOTES_TOOLS), encoding="utf-8")
    return caps, tools


def teacher_config(tmp_path: Path, base_url: str) -> Path:
    """abt.toml: the teacher at ``base_url``, no retry wait, its cache under ``tmp_path``."""
    path = tmp_path / "abt.toml"
    path.write_text(
        f'[providers.main]\ntype = "openai"\napi_key_env = ""\nbase_url = "{base_url}"\n\n'
        f"[roles.teacher]\nmax_retries = 0\nbackoff_initial = 0\n"
        f'cache_dir = "{tmp_path / "cache"}"\n',
        encoding="utf-8",
    )
    return path
