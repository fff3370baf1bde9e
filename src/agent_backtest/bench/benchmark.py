"""Reading a benchmark directory: its manifest and public cases, and choosing the cases to run.

Only ``manifest.json`` and ``cases.jsonl`` are read here; the gold file is only looked for
(:func:`agent_backtest.bench.gold.check_gold_file`), never opened, so nothing that plans or
runs rollouts holds any gold.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path, PurePosixPath, PureWindowsPath

import orjson
from pydantic import ValidationError

from agent_backtest.bench.models import BenchmarkManifest, Case
from agent_backtest.errors import InputError, RecordError, UserError, bounded
from agent_backtest.input_files import read_bytes
from agent_backtest.trace.openai_wire import message_from_openai

MANIFEST_FILE = "manifest.json"
CASES_FILE = "cases.jsonl"
# The benchmarks that come with abt: a name, and the function giving its directory (imported
# only when a run names it).
SHIPPED: dict[str, str] = {
    "bfcl": "agent_backtest.bench.bfcl:cached_benchmark",
    "tau_airline": "agent_backtest.bench.tau_airline:benchmark_directory",
}


@dataclass(frozen=True)
class Benchmark:
    """A benchmark directory read: its manifest, its cases in file order, and its identity."""

    path: Path
    manifest: BenchmarkManifest
    cases: list[Case]
    sha256: str
    """sha256 of manifest.json and cases.jsonl (each file's name, a NUL, its bytes, a NUL)."""

    @property
    def gold_path(self) -> Path:
        """Where the manifest says the gold is."""
        return self.path / self.manifest.gold

    def environment_of(self, case: Case) -> str:
        """The environment a case runs in: its own, else the manifest's."""
        return case.environment or self.manifest.environment


def benchmark_path(given: str | Path) -> Path:
    """The directory of a benchmark: ``given`` itself, or the directory of a shipped one named
    so (a directory of that name in the working directory comes first)."""
    path = Path(given)
    target = SHIPPED.get(str(given))
    if path.exists() or target is None:
        return path
    module_name, _, function = target.partition(":")
    try:
        return Path(getattr(import_module(module_name), function)())
    except ImportError as exc:
        raise UserError(f"the benchmark {given} is not installed: {exc}", "benchmark") from None


def load_benchmark(path: Path) -> Benchmark:
    """Read and check the benchmark directory at ``path``; a mistake names the file and line."""
    if not path.is_dir():
        raise UserError(
            f"{path} is not a benchmark directory: give a directory holding {MANIFEST_FILE} "
            f"and {CASES_FILE}, or a shipped benchmark's name ({', '.join(sorted(SHIPPED))})",
            "benchmark",
        )
    manifest_path, cases_path = path / MANIFEST_FILE, path / CASES_FILE
    manifest_bytes, cases_bytes = (
        _read(_inside(path, manifest_path)),
        _read(_inside(path, cases_path)),
    )
    try:
        manifest = BenchmarkManifest.model_validate_json(manifest_bytes)
    except ValidationError as exc:
        raise InputError(manifest_path, _where(exc), _problem(exc)) from None
    _check_gold_name(path, manifest_path, manifest.gold)
    cases = _cases(cases_path, cases_bytes)
    digest = hashlib.sha256()
    for name, data in ((MANIFEST_FILE, manifest_bytes), (CASES_FILE, cases_bytes)):
        digest.update(name.encode() + b"\0" + data + b"\0")
    return Benchmark(path, manifest, cases, digest.hexdigest())


def select_cases(
    cases: Sequence[Case],
    case_ids: Sequence[str] = (),
    shard_count: int = 1,
    shard_index: int = 0,
    limit: int | None = None,
) -> list[Case]:
    """The cases to run: the ``case_ids`` given (in their order), else all; then the shard over
    the sorted ids; then the first ``limit``."""
    if shard_count < 1:
        raise UserError(f"must be at least 1, got {shard_count}", "shard_count")
    if not 0 <= shard_index < shard_count:
        raise UserError(f"must be in 0…{shard_count - 1}, got {shard_index}", "shard_index")
    if limit is not None and limit < 1:
        raise UserError(f"must be at least 1, got {limit}", "limit")
    by_id = {case.id: case for case in cases}
    chosen = list(cases)
    if case_ids:
        unknown = [case_id for case_id in case_ids if case_id not in by_id]
        if unknown:
            raise UserError(
                f"{len(unknown)} unknown case id(s): {', '.join(unknown[:10])}", "case_ids"
            )
        if len(set(case_ids)) != len(case_ids):
            raise UserError("a case id is given twice", "case_ids")
        chosen = [by_id[case_id] for case_id in case_ids]
    if shard_count > 1:
        ordered = sorted(chosen, key=lambda case: case.id)
        chosen = [case for i, case in enumerate(ordered) if i % shard_count == shard_index]
    if limit is not None:
        chosen = chosen[:limit]
    if not chosen:
        raise UserError("no case is left to run after the selection", "case_ids")
    return chosen


def _inside(directory: Path, path: Path) -> Path:
    """``path``, when it is in ``directory`` once links are followed: a benchmark's files are
    its own, and a link out of it (to the gold of another benchmark, to a secret) is refused."""
    try:
        outside = path.exists() and not path.resolve().is_relative_to(directory.resolve())
    except OSError as exc:  # a name too long, a loop of links
        raise InputError(path, None, f"cannot read: {exc.strerror}", "benchmark") from None
    if outside:
        raise InputError(
            path,
            None,
            "is a link to a file outside the benchmark directory: copy the file into it",
            "benchmark",
        )
    return path


def _check_gold_name(directory: Path, manifest_path: Path, gold: str) -> None:
    """The manifest's gold names a file inside the benchmark directory."""
    name = PurePosixPath(gold)
    if name.is_absolute() or PureWindowsPath(gold).is_absolute() or ".." in name.parts:
        raise InputError(
            manifest_path,
            "gold",
            f"{bounded(gold, 80)!r} is outside the benchmark directory: name the gold file by a "
            "path inside it (no absolute path, no ..)",
            "benchmark",
        )
    _inside(directory, directory / gold)


def _read(path: Path) -> bytes:
    if not path.exists():
        raise InputError(path, None, "missing: a benchmark directory holds this file")
    return read_bytes(path, "benchmark file")


def _cases(path: Path, data: bytes) -> list[Case]:
    """Every case of cases.jsonl, each id once; a bad line is named by its number."""
    cases: list[Case] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"line {number}"
        try:
            case = Case.model_validate(orjson.loads(line))
        except orjson.JSONDecodeError as exc:
            raise InputError(path, where, f"not JSON: {exc}") from None
        except ValidationError as exc:
            raise InputError(path, where, f"not a case: {_where(exc)}: {_problem(exc)}") from None
        if case.id in seen:
            raise InputError(path, where, f"case id {case.id!r} is on line {seen[case.id]} too")
        if case.instruction is None and not case.messages:
            raise InputError(path, where, "a case needs an instruction or opening messages")
        for i, message in enumerate(case.messages or []):
            try:
                message_from_openai(message)
            except RecordError as exc:
                raise InputError(path, f"{where}: messages[{i}]", exc.detail) from None
        seen[case.id] = number
        cases.append(case)
    if not cases:
        raise InputError(path, None, "holds no case")
    return cases


def _where(exc: ValidationError) -> str:
    return ".".join(str(part) for part in exc.errors()[0]["loc"]) or "$"


def _problem(exc: ValidationError) -> str:
    return exc.errors(include_url=False)[0]["msg"]
