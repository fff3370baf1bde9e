"""Tables of the parts a user can add: providers, trace readers, simulate targets, bench graders
and environments.

A :class:`Registry` maps a name to a reference (``module`` or ``module:attr``, the syntax of an
entry point's value) and imports the module only when the name is used, so a command pays only
for the parts it runs. The built-in parts are entries of the table; a package adds its own by
declaring entry points in the registry's group (``agent_backtest.providers``, …), which join the
same table. The installed entry points are read once, and only when a name is not a built-in or
the whole list is asked for: reading them scans every installed distribution, which a command
that uses built-ins never needs.

A built-in name always wins over an installed one: a package cannot replace ``openai``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agent_backtest.errors import UserError
from agent_backtest.plugins import import_reference, load_object

__all__ = ["Entry", "Registry"]


@dataclass(frozen=True)
class Entry:
    """One name of a table: what it refers to and, when a package installed it, which."""

    name: str
    reference: str
    """``module`` or ``module:attr``."""
    distribution: str | None = None
    """The installed package that declared it; None for a built-in."""

    def origin(self, group: str) -> str:
        """Where the entry comes from, for an error about it."""
        if self.distribution is None:
            return f"built-in {self.reference}"
        return (
            f"package {self.distribution}, entry point {self.name} = {self.reference!r} "
            f"in group {group}"
        )


class Registry:
    """Named parts of one kind, built-in and installed, each imported on first use."""

    def __init__(
        self,
        group: str,
        what: str,
        built_in: Mapping[str, str],
        how_to_add: str,
        contract: Sequence[str] = (),
        references: bool = False,
    ) -> None:
        """``what`` names one part in messages (``provider type``); ``how_to_add`` ends the
        message about an unknown name; ``contract`` lists the attributes every part must have
        (``__call__`` for a callable); with ``references``, a name holding ``:`` is a user's
        own ``module:attr``."""
        self.group = group
        self.what = what
        self.how_to_add = how_to_add
        self.contract = tuple(contract)
        self.references = references
        self._built_in = {name: Entry(name, reference) for name, reference in built_in.items()}
        self._installed: dict[str, list[Entry]] | None = None
        self._loaded: dict[str, Any] = {}

    def built_in_names(self) -> list[str]:
        """The built-in names, in the table's order."""
        return list(self._built_in)

    def installed_names(self) -> list[str]:
        """The names installed packages add (built-ins they repeat left out), sorted."""
        return sorted(name for name in self._read_installed() if name not in self._built_in)

    def names(self) -> list[str]:
        """Every name: the built-ins in the table's order, then the installed ones."""
        return [*self.built_in_names(), *self.installed_names()]

    def __contains__(self, name: object) -> bool:
        """True for a built-in or installed name (entry points read only for the latter)."""
        if not isinstance(name, str):
            return False
        return name in self._built_in or name in self._read_installed()

    def load(self, name: str, parameter: str | None = None) -> Any:
        """The part ``name`` refers to, imported now (once); a :class:`UserError` naming
        ``parameter`` for an unknown name, or a part that cannot be imported."""
        if name in self._loaded:
            return self._loaded[name]
        entry = self._built_in.get(name)
        if entry is None:
            if self.references and ":" in name:
                return load_object(name, f"{self.what} {name!r}", parameter or self.what)
            entry = self._installed_entry(name, parameter)
        found = self._import(entry, parameter)
        self._loaded[name] = found
        return found

    def _unknown(self, name: str, parameter: str | None = None) -> UserError:
        """The error for a name that is not in the table: the known names and how to add one."""
        return UserError(
            f"unknown {self.what} {name!r}: name one of {', '.join(self.names())}, "
            f"or {self.how_to_add}",
            parameter,
        )

    def _installed_entry(self, name: str, parameter: str | None) -> Entry:
        """The installed entry of ``name``; an error when none, or several packages, add it."""
        entries = self._read_installed().get(name)
        if not entries:
            raise self._unknown(name, parameter)
        if len(entries) > 1:
            packages = " and ".join(sorted(str(entry.distribution) for entry in entries))
            raise UserError(
                f"{self.what} {name!r} is added by more than one package ({packages}): "
                "uninstall all but one",
                parameter,
            )
        return entries[0]

    def _import(self, entry: Entry, parameter: str | None) -> Any:
        """The entry's object, checked against the contract. A plugin failing at import is a
        user error (its package is at fault, not this one); a built-in failing is one too when
        an optional dependency is missing."""
        try:
            found = import_reference(entry.reference)
        except ImportError as exc:
            raise UserError(
                f"{self.what} {entry.name!r} ({entry.origin(self.group)}) cannot be imported: "
                f"{exc}",
                parameter,
            ) from None
        except Exception as exc:
            if entry.distribution is None:
                raise
            raise UserError(
                f"{self.what} {entry.name!r} ({entry.origin(self.group)}) cannot be imported: "
                f"{type(exc).__name__}: {exc}",
                parameter,
            ) from None
        missing = [attribute for attribute in self.contract if not hasattr(found, attribute)]
        if missing:
            lacks = f"has no {', '.join(missing)}"
            if missing == ["__call__"]:
                lacks = "cannot be called"
            raise UserError(
                f"{self.what} {entry.name!r} ({entry.origin(self.group)}) {lacks}: "
                f"see what the entry point group {self.group} asks for",
                parameter,
            )
        return found

    def _read_installed(self) -> dict[str, list[Entry]]:
        """The group's entry points by name, read on the first call only."""
        if self._installed is None:
            from importlib.metadata import entry_points

            installed: dict[str, list[Entry]] = {}
            # One distribution per name, the first on the path, as importlib gives them: a
            # package both on PYTHONPATH and in site-packages is not a conflict with itself.
            for point in entry_points(group=self.group):
                distribution = point.dist.name if point.dist is not None else "?"
                installed.setdefault(point.name, []).append(
                    Entry(point.name, point.value, distribution)
                )
            self._installed = installed
        return self._installed
