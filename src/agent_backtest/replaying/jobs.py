"""What a replay sends: (unit, repeat) jobs, each with its seed and the model that answers it."""

from __future__ import annotations

from collections.abc import Container, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agent_backtest.errors import UserError
from agent_backtest.providers import TRACE, ModelConfig, ModelRef, parse_model_ref
from agent_backtest.trace import LLMRequest
from agent_backtest.units import Unit

if TYPE_CHECKING:  # the patch types, for annotations: a patch loads only for a patched run
    from agent_backtest.patch.ops import Patch, PatchedRequest


@dataclass(frozen=True)
class Job:
    """One call to make: a unit, which repeat, with which seed, on which model, and, in a
    patched run, what the patch made of the unit's request."""

    unit: Unit
    repeat: int
    seed: int
    model: ModelRef
    patched: PatchedRequest | None = None
    position: int = 0
    """The unit's place in units.jsonl, so answers that land out of order can be put back."""

    @property
    def key(self) -> tuple[str, int]:
        """(unit_id, repeat)."""
        return self.unit.unit_id, self.repeat

    @property
    def request(self) -> LLMRequest:
        """What is sent: the patched request, or the unit's own."""
        return self.patched.request if self.patched is not None else self.unit.request


def candidate_for(unit: Unit, model: str, config: ModelConfig) -> ModelRef:
    """The model that answers ``unit``: ``model``, or with ``trace`` the one that served it."""
    if model != TRACE:
        return parse_model_ref(model)
    recorded = unit.recorded_model
    if recorded is None:
        raise UserError(
            f"unit {unit.unit_id}: the trace does not say which model answered; pass "
            "--recorded-model when reading it, or name a model",
            "model",
        )
    mapped = config.aliases.get(recorded)
    if mapped is not None:
        return parse_model_ref(mapped, "model")
    if "/" in recorded:
        return parse_model_ref(recorded)
    raise UserError(
        f"trace: the recorded model {recorded!r} names no provider: add "
        f'[aliases] "{recorded}" = "openai/{recorded}" (or another provider) to '
        f"{config.source or 'abt.toml'}",
        "model",
    )


def iter_jobs(
    units: Iterable[tuple[int, Unit]],
    model: str,
    config: ModelConfig,
    k: int,
    seed: int,
    done: Container[tuple[str, int]] = frozenset(),
    patch: Patch | None = None,
) -> Iterator[Job]:
    """Every (unit, repeat) not yet done of ``units`` (each with its place in units.jsonl),
    with seed ``seed + repeat``, in unit order; with a patch, each unit's request is patched
    once for all its repeats."""
    for position, unit in units:
        if all((unit.unit_id, repeat) in done for repeat in range(k)):
            continue
        patched = patch.apply(unit) if patch is not None else None
        ref = model_of(unit, patched, model, config)
        for repeat in range(k):
            if (unit.unit_id, repeat) not in done:
                yield Job(unit, repeat, seed + repeat, ref, patched, position)


def model_of(
    unit: Unit, patched: PatchedRequest | None, model: str, config: ModelConfig
) -> ModelRef:
    """The model that answers ``unit``: a model op of the patch decides where its units go;
    else as for an unpatched run."""
    if patched is not None and patched.model is not None:
        return parse_model_ref(patched.model)
    return candidate_for(unit, model, config)
