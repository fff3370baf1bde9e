"""Reading a capability file: the families a teacher model writes flows for.

A capability file (YAML, or JSON) lists families, each with a name, a description of the
capability, the tools it uses (names from the agent's tool catalogue) and a few seed
conversations: the user's messages in order, and optionally what a good answer did::

    families:
      - name: notes
        description: Saving and finding notes.
        tools: [list_notes, add_note]
        seeds:
          - [Save a note called groceries, add eggs to it too]
          - turns: [What notes do I have?]
            expect: Lists every saved note by title.

The top level may also be the list of families itself. A JSON file is read as YAML (JSON is
its subset) so that every mistake, in either, names the line of the field at fault.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import (
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from agent_backtest.errors import InputError
from agent_backtest.input_files import compose_yaml, parse_json, read_text
from agent_backtest.record_model import StrictModel

FAMILY_NAME = re.compile(r"^[A-Za-z0-9_-]{1,40}$")


class Seed(StrictModel):
    """One seed conversation: the user's messages, and what a good answer did."""

    turns: list[str] = Field(min_length=1, description="The user's messages, in order.")
    expect: str | None = Field(default=None, description="What a good answer did.")

    @model_validator(mode="before")
    @classmethod
    def _bare_list(cls, value: Any) -> Any:
        """A seed written as a bare list of messages."""
        return {"turns": value} if isinstance(value, list) else value

    @model_validator(mode="after")
    def _messages_say_something(self) -> Seed:
        if any(not message.strip() for message in self.turns):
            raise ValueError("every user message needs text")
        return self


class Family(StrictModel):
    """One capability: what it is, the tools it uses, and its seed conversations."""

    name: str = Field(description="Letters, digits, _ and -; 40 at most: it names the flows.")
    description: str = Field(min_length=1)
    tools: list[str] = Field(default_factory=list, description="Tools of the catalogue it uses.")
    seeds: list[Seed] = Field(min_length=1)

    @field_validator("name")
    @classmethod
    def _usable_in_ids(cls, value: str) -> str:
        """The name is part of every generated flow's id, so it is kept short and plain."""
        if not FAMILY_NAME.match(value):
            raise ValueError("a family name keeps to letters, digits, _ and -, 40 at most")
        return value


class Capabilities(StrictModel):
    """A capability file's families."""

    families: list[Family] = Field(min_length=1)


def read_capabilities(path: Path, catalogue: set[str]) -> Capabilities:
    """The families of ``path``, each tool it names in ``catalogue``; any mistake is an
    :class:`InputError` naming the line and the field."""
    text = read_text(path, "capability file")
    if path.suffix.lower() == ".json":
        parse_json(text, path)  # a JSON mistake is told as JSON, before it is read for its lines
    root, document = compose_yaml(text, path)
    if root is None:
        raise InputError(path, None, "holds no families: list them under families:")
    capabilities = _validated(path, root, document)
    _check_names_and_tools(path, root, capabilities, catalogue)
    return capabilities


def _validated(path: Path, root: yaml.Node, document: Any) -> Capabilities:
    """The document as capabilities (a bare list is the families); its first problem is an
    :class:`InputError` naming the line and the field."""
    if isinstance(document, list):
        document = {"families": document}
    if not isinstance(document, dict):
        raise InputError(path, "line 1", "a capability file holds families: [...]")
    try:
        return Capabilities.model_validate(document)
    except ValidationError as exc:
        error = exc.errors()[0]
        loc = list(error["loc"])
        message = error["msg"].removeprefix("Value error, ")
        field = ".".join(str(part) for part in loc)
        line = _line_of(root, loc, isinstance(root, yaml.SequenceNode))
        raise InputError(path, f"line {line}", f"{field}: {message}") from None


def _check_names_and_tools(
    path: Path, root: yaml.Node, capabilities: Capabilities, catalogue: set[str]
) -> None:
    """Family names are unique, and every tool a family names is the agent's."""
    bare = isinstance(root, yaml.SequenceNode)
    seen: set[str] = set()
    for index, family in enumerate(capabilities.families):
        if family.name in seen:
            line = _line_of(root, ["families", index, "name"], bare)
            raise InputError(path, f"line {line}", f"family {family.name!r} is listed twice")
        seen.add(family.name)
        for position, tool in enumerate(family.tools):
            if tool not in catalogue:
                line = _line_of(root, ["families", index, "tools", position], bare)
                known = ", ".join(sorted(catalogue)) or "none"
                raise InputError(
                    path,
                    f"line {line}",
                    f"family {family.name!r} names tool {tool!r}, which is not in the tool "
                    f"catalogue (known: {known}): fix the name or the --tools file",
                )


def _line_of(root: yaml.Node, loc: list[Any], bare: bool) -> int:
    """The line of the deepest node of ``root`` that ``loc`` (a validation error's path)
    reaches; ``bare`` when the file is the list of families itself."""
    node = root
    for part in loc[1:] if bare else loc:
        child = _child(node, part)
        if child is None:
            break
        node = child
    return node.start_mark.line + 1


def _child(node: yaml.Node, part: Any) -> yaml.Node | None:
    if isinstance(node, yaml.MappingNode):
        return next((value for key, value in node.value if key.value == part), None)
    if isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
        return node.value[part]
    return None
