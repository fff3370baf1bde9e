"""The registries: built-ins imported on first use, installed entry points read only when needed,
and a one-line error for every way a name can fail (unknown, broken, incomplete, claimed twice).

Packages are installed here by writing their ``.dist-info`` folder (what an installer leaves) in
a folder put on ``sys.path``: importlib.metadata reads them as it reads any installed package.
"""

from __future__ import annotations

import importlib.metadata
import sys
from pathlib import Path

import pytest

from agent_backtest.bench.environments import environment_factory
from agent_backtest.bench.grading import resolve_graders
from agent_backtest.errors import UserError
from agent_backtest.formats import READERS, format_names
from agent_backtest.providers import PROVIDER_TYPES
from agent_backtest.registry import Registry
from agent_backtest.simulate.targets import TARGET_TYPES

GROUP = "abt_tests.parts"


def install(site: Path, distribution: str, points: dict[str, str], modules: dict[str, str]) -> None:
    """Write a distribution's metadata, entry points of GROUP and its modules into ``site``."""
    info = site / f"{distribution.replace('-', '_')}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {distribution}\nVersion: 1.0\n")
    lines = "".join(f"{name} = {value}\n" for name, value in points.items())
    (info / "entry_points.txt").write_text(f"[{GROUP}]\n{lines}")
    for module, source in modules.items():
        (site / f"{module}.py").write_text(source)


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder of installed packages, first on the path for this test."""
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    return folder


def parts() -> Registry:
    return Registry(
        GROUP,
        "part",
        {"plain": "json:dumps", "module": "json"},
        "install a package that adds one",
        contract=("__call__",),
    )


def test_built_ins_load_without_reading_entry_points(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(**_: object) -> None:
        raise AssertionError("entry points read for a built-in name")

    monkeypatch.setattr(importlib.metadata, "entry_points", refuse)
    registry = parts()
    import json

    assert registry.load("plain") is json.dumps
    assert registry.built_in_names() == ["plain", "module"]
    assert "plain" in registry


def test_a_reference_without_attribute_is_the_module_itself() -> None:
    registry = Registry(GROUP, "part", {"module": "json"}, "install one")
    assert registry.load("module") is sys.modules["json"]


def test_an_installed_part_joins_the_table_after_the_built_ins(site: Path) -> None:
    install(site, "abt-parts", {"shout": "abt_parts:shout"}, {"abt_parts": SHOUT})
    registry = parts()
    assert registry.names() == ["plain", "module", "shout"]
    assert registry.installed_names() == ["shout"]
    assert registry.load("shout")("hi") == "HI"


def test_an_installed_part_cannot_replace_a_built_in(site: Path) -> None:
    install(site, "abt-parts", {"plain": "abt_parts:shout"}, {"abt_parts": SHOUT})
    registry = parts()
    import json

    assert registry.load("plain") is json.dumps
    assert registry.names() == ["plain", "module"]


def test_an_unknown_name_lists_the_built_in_and_installed_names(site: Path) -> None:
    install(site, "abt-parts", {"shout": "abt_parts:shout"}, {"abt_parts": SHOUT})
    with pytest.raises(UserError) as raised:
        parts().load("whisper", "kind")
    assert str(raised.value) == (
        "kind: unknown part 'whisper': name one of plain, module, shout, "
        "or install a package that adds one"
    )


def test_a_plugin_that_fails_to_import_is_named_by_package_and_entry_point(site: Path) -> None:
    install(
        site,
        "abt-broken",
        {"missing": "abt_broken_a:f", "raising": "abt_broken_b:f"},
        {"abt_broken_a": "import no_such_dependency\n", "abt_broken_b": "1 / 0\n"},
    )
    registry = parts()
    with pytest.raises(UserError) as raised:
        registry.load("missing", "kind")
    assert str(raised.value) == (
        "kind: part 'missing' (package abt-broken, entry point missing = 'abt_broken_a:f' "
        f"in group {GROUP}) cannot be imported: No module named 'no_such_dependency'"
    )
    with pytest.raises(UserError) as raised:
        registry.load("raising", "kind")
    assert str(raised.value).endswith("cannot be imported: ZeroDivisionError: division by zero")


def test_a_plugin_without_the_contract_or_claimed_twice_is_refused(site: Path) -> None:
    install(site, "abt-one", {"number": "abt_one:VALUE", "twice": "abt_one:f"}, {"abt_one": ONE})
    install(site, "abt-two", {"twice": "abt_two:f"}, {"abt_two": "def f():\n    return 2\n"})
    registry = parts()
    with pytest.raises(UserError, match=r"part 'number' \(package abt-one, .*cannot be called"):
        registry.load("number")
    with pytest.raises(UserError) as raised:
        registry.load("twice")
    assert "more than one package (abt-one and abt-two): uninstall all but one" in str(raised.value)


def test_a_package_found_twice_on_the_path_is_one_entry(site: Path, tmp_path: Path) -> None:
    install(site, "abt-parts", {"shout": "abt_parts:shout"}, {"abt_parts": SHOUT})
    again = tmp_path / "again"
    install(again, "abt-parts", {"shout": "abt_parts:shout"}, {})
    sys.path.insert(0, str(again))
    try:
        assert parts().load("shout")("a") == "A"
    finally:
        sys.path.remove(str(again))


def test_every_registry_lists_its_built_ins_in_their_order() -> None:
    assert PROVIDER_TYPES.built_in_names() == ["openai", "anthropic", "local", "mock"]
    assert READERS.built_in_names() == [
        "canonical",
        "otlp",
        "langfuse",
        "inspect",
        "tau2_bench",
        "tau_bench",
        "session_steps",
        "openhands",
        "swe_agent",
        "chat_log",
        "cassette",
    ]
    assert format_names()[:11] == READERS.built_in_names()
    assert TARGET_TYPES.built_in_names() == ["http", "python", "model"]
    assert [name for name, _ in resolve_graders(["outputs", "tool_calls"])] == [
        "outputs",
        "tool_calls",
    ]
    with pytest.raises(UserError, match="unknown environment 'retail': name one of bfcl, "):
        environment_factory("retail")


def test_each_built_in_reader_names_its_own_format() -> None:
    for name in READERS.built_in_names():
        assert READERS.load(name).FORMAT == name


SHOUT = "def shout(text):\n    return text.upper()\n"
ONE = "VALUE = 1\n\ndef f():\n    return 1\n"
