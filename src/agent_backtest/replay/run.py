"""A replay run from start to finish: the run directory, the clients, the engine, the manifest.

The settings that decide the answers are stored in run.json, so ``--resume`` sends the missing
(unit, repeat) pairs exactly as the first start would have.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from agent_backtest.errors import InputError
from agent_backtest.patch.ops import Patch, PatchSettings, load_patch
from agent_backtest.providers import (
    CallCounters,
    CallPolicy,
    CredentialCommand,
    ModelClient,
    ModelConfig,
    ModelRef,
    RateLimits,
    ResponseCache,
    build_provider,
    load_model_config,
)
from agent_backtest.replay.engine import ReplayOutcome, run_jobs
from agent_backtest.replay.plan import Job, candidates, iter_jobs
from agent_backtest.runs import (
    ResultRecord,
    ResultWriter,
    RunDirectory,
    RunManifest,
    code_version,
    now,
    private_atomic_writer,
)
from agent_backtest.trace import LLMRequest, LLMResponse


class ReplaySettings(BaseModel):
    """Everything that decides what is sent; stored in run.json as the run's config."""

    model_config = ConfigDict(extra="forbid")

    model: str = Field(description="provider/model, or trace for the recorded model.")
    k: int = Field(default=1, ge=1, description="Repeats per unit.")
    seed: int = Field(default=0, description="Seed of repeat 0; repeat r uses seed + r.")
    base_url: str | None = None
    config_file: str | None = Field(default=None, description="The model config (abt.toml).")
    cache_dir: str | None = Field(default=None, description="Response cache; None: no cache.")
    concurrency: int = Field(default=8, ge=1)
    rpm: float | None = None
    tpm: float | None = None
    timeout: float = Field(default=60.0, gt=0)
    max_retries: int = Field(default=4, ge=0)
    backoff_initial: float = Field(default=1.0, ge=0)
    selection: dict[str, object] = Field(
        default_factory=dict, description="How the units were chosen."
    )
    patch: PatchSettings | None = Field(
        default=None,
        description="The patch applied to each request before it is sent (ops in patch.json).",
    )


@dataclass
class RunHooks:
    """What the caller sees while the run goes: a start count and each result."""

    on_start: Callable[[int, int], None] = lambda todo, done: None
    on_result: Callable[[ResultRecord], None] = lambda record: None


@dataclass
class RunResult:
    """How a run ended, for the command to report."""

    manifest: RunManifest
    outcome: ReplayOutcome
    todo: int
    counters: CallCounters = field(default_factory=CallCounters)


def start_run(
    directory: RunDirectory,
    settings: ReplaySettings,
    manifest: RunManifest,
    credential_command: str | None = None,
    hooks: RunHooks | None = None,
) -> RunResult:
    """Replay every (unit, repeat) of the units.jsonl already written in ``directory``."""
    manifest.save(directory.manifest_path)
    return _replay(directory, settings, manifest, set(), credential_command, hooks)


def resume_run(
    directory: RunDirectory,
    retry_errors: bool,
    overrides: dict[str, object],
    credential_command: str | None = None,
    hooks: RunHooks | None = None,
) -> RunResult:
    """Send only the pairs with no result (and, with ``retry_errors``, those that failed)."""
    manifest = directory.load_manifest()
    settings = ReplaySettings.model_validate({**manifest.config, **overrides})
    manifest.config = settings.model_dump()
    manifest.attempts_of_run += 1
    manifest.status = "running"
    manifest.finished_at = None
    done = directory.settle_results(retry_errors)
    manifest.save(directory.manifest_path)
    return _replay(directory, settings, manifest, done, credential_command, hooks)


def new_manifest(settings: ReplaySettings, inputs: list) -> RunManifest:
    """A fresh manifest for a replay run."""
    moment = now()
    return RunManifest(
        command="replay",
        config=settings.model_dump(),
        inputs=inputs,
        code_version=code_version(),
        created_at=moment,
        updated_at=moment,
    )


def write_run_patch(directory: RunDirectory, patch: Patch) -> None:
    """Keep the run's patch in the run directory (0600), so --resume applies the same ops."""
    with private_atomic_writer(directory.patch_path) as handle:
        handle.write(patch.to_json())


def load_run_patch(directory: RunDirectory, settings: PatchSettings) -> Patch:
    """The patch a run was started with; its ops must be the ones run.json names."""
    path = directory.patch_path
    if not path.exists():
        raise InputError(
            path,
            None,
            f"missing: run.json says the run applies the patch "
            f"{settings.file}, and its ops are kept in this file",
        )
    patch = load_patch(path)
    if patch.op_ids() != settings.ops:
        raise InputError(
            path,
            None,
            f"its ops {patch.op_ids()} are not the run's "
            f"{settings.ops} (run.json): the file was edited after the run started",
        )
    return patch


def _replay(
    directory: RunDirectory,
    settings: ReplaySettings,
    manifest: RunManifest,
    done: set[tuple[str, int]],
    credential_command: str | None,
    hooks: RunHooks | None,
) -> RunResult:
    hooks = hooks or RunHooks()
    config = load_model_config(Path(settings.config_file) if settings.config_file else None)
    patch = load_run_patch(directory, settings.patch) if settings.patch else None
    # Every model is resolved (and every key found) before the first call is sent.
    refs = candidates(directory.read_units(), settings.model, config, patch)
    counters = CallCounters()
    clients = _clients(refs, directory, settings, config, counters, credential_command)
    todo = manifest.units * settings.k - len(done)
    hooks.on_start(todo, len(done))
    jobs = iter_jobs(
        directory.read_units(), settings.model, config, settings.k, settings.seed, done, patch
    )
    writer = ResultWriter(directory.results_path)
    try:
        outcome = asyncio.run(_send(jobs, clients, settings, writer, hooks))
    except KeyboardInterrupt:  # a second Ctrl-C: calls in flight are abandoned
        _finish(directory, manifest, counters, "interrupted")
        raise
    except BaseException:
        _finish(directory, manifest, counters, "failed")
        raise
    finally:
        writer.close()
    status = "interrupted" if outcome.interrupted else "completed"
    _finish(directory, manifest, counters, status)
    return RunResult(manifest, outcome, todo, counters)


async def _send(
    jobs: Iterator[Job],
    clients: dict[ModelRef, ModelClient],
    settings: ReplaySettings,
    writer: ResultWriter,
    hooks: RunHooks,
) -> ReplayOutcome:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()

    def request_stop() -> None:
        # The first Ctrl-C stops taking jobs; the default handler is back for a second one.
        stop.set()
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.remove_signal_handler(signal.SIGINT)

    with contextlib.suppress(NotImplementedError, RuntimeError):
        loop.add_signal_handler(signal.SIGINT, request_stop)
        loop.add_signal_handler(signal.SIGTERM, stop.set)
    try:
        return await run_jobs(jobs, clients, writer, settings.concurrency, stop, hooks.on_result)
    finally:
        for client in clients.values():
            await client.provider.aclose()
            if client.cache is not None:
                client.cache.close()
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.remove_signal_handler(signal.SIGINT)
            loop.remove_signal_handler(signal.SIGTERM)


def _clients(
    refs: set[ModelRef],
    directory: RunDirectory,
    settings: ReplaySettings,
    config: ModelConfig,
    counters: CallCounters,
    credential_command: str | None,
) -> dict[ModelRef, ModelClient]:
    policy = CallPolicy(
        timeout=settings.timeout,
        max_retries=settings.max_retries,
        backoff_initial=settings.backoff_initial,
    )
    limits = RateLimits(settings.rpm, settings.tpm)
    credentials = CredentialCommand(credential_command) if credential_command else None

    def golden() -> Iterator[tuple[LLMRequest, LLMResponse]]:
        return ((unit.request, unit.golden) for unit in directory.read_units())

    clients = {}
    for ref in sorted(refs):
        provider = build_provider(ref, config, settings.base_url, settings.concurrency, golden)
        cache = ResponseCache(Path(settings.cache_dir)) if settings.cache_dir else None
        clients[ref] = ModelClient(provider, policy, cache, limits, credentials, counters)
    return clients


def _finish(
    directory: RunDirectory, manifest: RunManifest, counters: CallCounters, status: str
) -> None:
    manifest.status = status  # type: ignore[assignment]
    manifest.finished_at = now()
    previous = manifest.counts or {}
    manifest.counts = _add_counts(previous, counters.as_dict())
    manifest.save(directory.manifest_path)


def _add_counts(previous: dict, current: dict) -> dict:
    """Counts over every start of the run (a resume adds to the first start's)."""
    total = dict(previous)
    for key, value in current.items():
        if isinstance(value, dict):
            merged = dict(total.get(key, {}))
            for sub, count in value.items():
                merged[sub] = merged.get(sub, 0) + count
            total[key] = dict(sorted(merged.items()))
        else:
            total[key] = total.get(key, 0) + value
    return total
