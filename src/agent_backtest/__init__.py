"""agent-backtest: what a change to an LLM agent would have done on its recorded traces."""

from __future__ import annotations


def __getattr__(name: str) -> str:
    """``__version__``, looked up on first use: reading the package metadata takes longer than
    the rest of ``import agent_backtest``, and only ``abt --version`` needs it."""
    if name == "__version__":
        version = _package_version()
        globals()["__version__"] = version
        return version
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _package_version() -> str:
    """The installed package's version; in a source tree that is not installed, pyproject's."""
    from importlib import metadata

    try:
        return metadata.version("agent-backtest")
    except metadata.PackageNotFoundError:
        import tomllib
        from pathlib import Path

        pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
        return tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["version"]
