"""A user's own code named as ``module:name``: graders, checks and environments of their own."""

from __future__ import annotations

from functools import reduce
from importlib import import_module
from typing import Any

from agent_backtest.errors import UserError

__all__ = ["import_reference", "load_object"]


def import_reference(reference: str) -> Any:
    """The object ``module`` or ``module:attr`` names (an entry point's syntax; ``attr`` may
    be dotted), imported now; ImportError or AttributeError when there is none."""
    module_name, _, attribute = reference.partition(":")
    found = import_module(module_name.strip())
    if attribute:
        found = reduce(getattr, attribute.strip().split("."), found)
    return found


def load_object(reference: str, what: str, parameter: str) -> Any:
    """The callable ``module:name`` names, imported now, so that a wrong name stops a run before
    it starts; ``what`` says what it is for in the error (``grader 'x'``)."""
    module_name, _, attribute = reference.partition(":")
    if not module_name or not attribute:
        raise UserError(f"{what}: give it as module:name", parameter)
    try:
        found = import_reference(reference)
    except ImportError as exc:
        raise UserError(f"{what}: cannot import {module_name}: {exc}", parameter) from None
    except AttributeError:
        raise UserError(f"{what}: {module_name} has no {attribute}", parameter) from None
    if not callable(found):
        raise UserError(f"{what}: {reference} cannot be called", parameter)
    return found
