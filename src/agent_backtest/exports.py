"""Packages whose public names are imported from their modules on first use.

A package that re-exports its modules' names would otherwise import every module the moment
any one is asked for: a command that needs one helper would load them all, and pay for it at
every start.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any


def lazy_exports(homes: Mapping[str, str], namespace: dict[str, Any]) -> Callable[[str], Any]:
    """The module ``__getattr__`` of a package whose public names live in other modules:
    ``homes`` maps each name to the module that defines it, and ``namespace`` is the package's
    ``globals()``, where a name is kept once imported (later look-ups skip the function)."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {namespace['__name__']!r} has no attribute {name!r}")
        value = getattr(import_module(home), name)
        namespace[name] = value
        return value

    return __getattr__
