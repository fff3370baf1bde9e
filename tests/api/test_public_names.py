"""Every public name of the API stays the function or class it names, whatever was imported
before: a module of the package named like one of its functions would replace the function by
itself on the package once imported (Python sets a submodule as its package's attribute)."""

from __future__ import annotations

import importlib
import pkgutil
import types

import agent_backtest
import agent_backtest.api as api


def test_no_module_of_the_api_is_named_like_a_public_name() -> None:
    modules = {info.name for info in pkgutil.iter_modules(api.__path__)}
    assert not modules & set(api.__all__)


def test_public_names_are_never_modules_after_every_module_is_imported() -> None:
    for info in pkgutil.iter_modules(api.__path__):
        importlib.import_module(f"agent_backtest.api.{info.name}")
    for name in api.__all__:
        assert not isinstance(getattr(api, name), types.ModuleType), name
        assert not isinstance(getattr(agent_backtest, name), types.ModuleType), name
