"""Rollouts: which episodes a run has (seeds, prompt groups, ids), and running them at once.

Every number here is derived, never drawn, so a resumed run plans exactly the episodes the
first start planned:

* the seed of rollout ``i`` of a case is the first 31 bits of ``sha256("BASE:CASE_ID:i")``
  (:data:`SEED_DERIVATION`);
* a case's **prompt group** (the rollouts that share one prompt, as RL trainers group them) is
  ``pg-`` and 24 hex digits of the sha256 of the canonical JSON of the case id, the policy
  revision, the agent model, the base seed and the group size;
* an **episode id** is the case id (made safe for a file name), the group's first 8 hex digits
  and the rollout number: ``CASE--1a2b3c4d--r000``.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from agent_backtest.bench.models import Case
from agent_backtest.trace import canonical_json

SEED_DERIVATION = "sha256(base:case_id:rollout), first 31 bits"
PROMPT_GROUP_DERIVATION = (
    "pg- + sha256(canonical JSON of case_id, policy_revision, model, base_seed, group_size), "
    "first 24 hex"
)
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")
CASE_ID_CHARS = 100


@dataclass(frozen=True)
class Rollout:
    """One planned episode: a case, its rollout number, seed, prompt group and id."""

    case: Case
    rollout: int
    seed: int
    prompt_group: str
    episode_id: str

    @property
    def key(self) -> tuple[str, int]:
        """(case_id, rollout), as its episode record's key."""
        return self.case.id, self.rollout


def rollout_seed(base_seed: int, case_id: str, rollout: int) -> int:
    """The seed of one rollout: the first 31 bits of sha256(``base:case_id:rollout``)."""
    digest = hashlib.sha256(f"{base_seed}:{case_id}:{rollout}".encode()).digest()
    return int.from_bytes(digest[:4], "big") >> 1


def prompt_group(
    case_id: str, policy_revision: str, model: str, base_seed: int, group_size: int
) -> str:
    """The prompt group of a case's rollouts (see the module docstring)."""
    material = {
        "case_id": case_id,
        "policy_revision": policy_revision,
        "model": model,
        "base_seed": base_seed,
        "group_size": group_size,
    }
    return "pg-" + hashlib.sha256(canonical_json(material)).hexdigest()[:24]


def episode_id(case_id: str, group: str, rollout: int) -> str:
    """A file-safe id of one episode, unique in its run."""
    safe = _UNSAFE.sub("_", case_id)[:CASE_ID_CHARS]
    return f"{safe}--{group[3:11]}--r{rollout:03d}"


def plan_rollouts(
    cases: Sequence[Case],
    rollouts: int,
    base_seed: int,
    model: str,
    policy_revision: Callable[[Case], str],
) -> list[Rollout]:
    """Every episode of the run, case by case, rollout by rollout."""
    planned = []
    for case in cases:
        group = prompt_group(case.id, policy_revision(case), model, base_seed, rollouts)
        for i in range(rollouts):
            seed = rollout_seed(base_seed, case.id, i)
            planned.append(Rollout(case, i, seed, group, episode_id(case.id, group, i)))
    return planned


async def run_all(
    rollouts: Sequence[Rollout],
    run_one: Callable[[Rollout], Awaitable[None]],
    concurrency: int,
) -> None:
    """Run ``run_one`` for every rollout, at most ``concurrency`` episodes at once, in order of
    the plan; the first exception stops the others."""
    queue = iter(rollouts)

    async def worker() -> None:
        for rollout in queue:  # one shared iterator: each rollout is taken once
            await run_one(rollout)

    async with asyncio.TaskGroup() as group:
        for _ in range(min(concurrency, len(rollouts))):
            group.create_task(worker())
