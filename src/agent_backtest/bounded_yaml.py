"""The one YAML loader abt has: PyYAML's safe loader within limits, for every YAML file read
(cassettes, flows, capabilities, patches, agent configs).

A module of its own so that importing PyYAML (~20 ms) is paid only by what reads YAML.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from agent_backtest.errors import InputError
from agent_backtest.formats.limits import MAX_DEPTH

MAX_ALIASES = 100
"""Aliases a document may hold: a real file has a few at most; an alias bomb has thousands."""
MAX_INTEGER_DIGITS = 100
"""Digits of an integer: converting a longer one costs quadratic time."""


class BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe loader within limits: at most ``MAX_ALIASES`` aliases, none of them to a
    node that holds aliases itself (that is how a few hundred bytes stand for gigabytes: each
    level of aliases multiplies the one below), nesting of at most ``MAX_DEPTH`` levels
    (composing recurses), integers of at most ``MAX_INTEGER_DIGITS`` digits."""

    def __init__(self, stream: Any) -> None:
        super().__init__(stream)
        self.aliases = 0
        self.depth = 0
        self.compound: set[str] = set()  # anchors of nodes that hold an alias

    def compose_node(self, parent: Any, index: Any) -> Any:
        """Count aliases and levels as the document is composed."""
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent):
            self.aliases += 1
            if self.aliases > MAX_ALIASES:
                raise self._refuse(f"more than {MAX_ALIASES} aliases", event)
            if event.anchor in self.compound:
                raise self._refuse("an alias of a node that holds aliases (an alias bomb)", event)
            return super().compose_node(parent, index)
        self.depth += 1
        before = self.aliases
        try:
            if self.depth > MAX_DEPTH:
                raise self._refuse(f"value too deep: nested more than {MAX_DEPTH} levels", event)
            node = super().compose_node(parent, index)
        finally:
            self.depth -= 1
        anchor = getattr(event, "anchor", None)
        if anchor is not None and self.aliases > before:
            self.compound.add(anchor)
        return node

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        """An integer, refused past ``MAX_INTEGER_DIGITS`` digits."""
        if len(str(node.value)) > MAX_INTEGER_DIGITS:
            raise yaml.constructor.ConstructorError(
                None, None, f"an integer of more than {MAX_INTEGER_DIGITS} digits", node.start_mark
            )
        return super().construct_yaml_int(node)

    def _refuse(self, problem: str, event: Any) -> yaml.composer.ComposerError:
        return yaml.composer.ComposerError(None, None, problem, event.start_mark)


BoundedLoader.add_constructor("tag:yaml.org,2002:int", BoundedLoader.construct_yaml_int)


def yaml_location(error: yaml.YAMLError) -> str | None:
    """Where a parser's error is: the line and column when the parser knows them, the byte
    (or character) it could not decode, else None."""
    mark = getattr(error, "problem_mark", None)
    if mark is not None:
        return f"line {mark.line + 1}, column {mark.column + 1}"
    if isinstance(error, yaml.reader.ReaderError):
        return f"byte {error.position}"
    return None


def yaml_problem(error: yaml.YAMLError) -> str:
    """What a parser's error says is wrong, in a few words."""
    problem = getattr(error, "problem", None) or getattr(error, "reason", None)
    return str(problem or "unreadable")


def yaml_error(path: Path, error: yaml.YAMLError) -> InputError:
    """A parser's error as the file's one-line error."""
    return InputError(path, yaml_location(error), f"not valid YAML: {yaml_problem(error)}")
