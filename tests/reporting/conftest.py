"""Fixtures of the report tests: scored runs with known answers, and a real headless Chromium."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agent_backtest.trace import LLMResponse, Message
from agent_backtest.units import Unit
from tests.reporting.runs import PLANTED, Answer, build_run, golden, tau_units, timeout, wrong

HOSTILE_NODE = '<img src=x onerror="window.__planted = 3">'


@pytest.fixture(scope="session")
def units40(tmp_path_factory: pytest.TempPathFactory) -> list[Unit]:
    """40 τ-bench units, given nodes (one of them hostile markup) and a planted <script> in the
    last message of unit 3's context."""
    units = tau_units(tmp_path_factory.mktemp("units40"), 40)
    nodes = ("booking", "lookup", HOSTILE_NODE)
    changed = []
    for index, unit in enumerate(units):
        update: dict[str, Any] = {"node": nodes[index % 3]}
        if index == 3:
            messages = list(unit.request.messages)
            messages[-1] = messages[-1].model_copy(update={"content": f"hi {PLANTED} there"})
            update["request"] = unit.request.model_copy(update={"messages": messages})
        changed.append(unit.model_copy(update=update))
    return changed


def first_index(units: list[Unit], test: Callable[[Unit], bool], start: int) -> int:
    """The first unit index at or after ``start`` that passes ``test``."""
    return next(i for i in range(start, len(units)) if test(units[i]))


def args_changed(unit: Unit) -> Answer:
    """Production's call with its first argument changed: an args_mismatch."""
    call = unit.golden.message.tool_calls[0]
    key = sorted(call.arguments)[0]
    message = unit.golden.message.model_copy(
        update={
            "tool_calls": [
                call.model_copy(update={"arguments": {**call.arguments, key: "CHANGED-9"}})
            ]
        }
    )
    return unit.golden.model_copy(update={"message": message})


@pytest.fixture(scope="session")
def baseline_run(units40: list[Unit], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Run A: production's answers, except units 0 and 1."""
    wrong_ids = {units40[0].unit_id, units40[1].unit_id}
    return build_run(
        tmp_path_factory.mktemp("runs") / "baseline",
        units40,
        lambda u: wrong(u) if u.unit_id in wrong_ids else golden(u),
        model="mock/baseline",
    )


@pytest.fixture(scope="session")
def candidate_run(units40: list[Unit], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Run B: wrong on units 0 and 2–7, an argument changed on one call, a timeout, and a
    text answer carrying a planted <script>."""
    plan: dict[str, Callable[[Unit], Answer]] = {
        units40[i].unit_id: wrong for i in (0, 2, 3, 4, 5, 6, 7)
    }
    with_args = first_index(
        units40,
        lambda u: bool(u.golden.message.tool_calls and u.golden.message.tool_calls[0].arguments),
        8,
    )
    plan[units40[with_args].unit_id] = args_changed
    plan[units40[with_args + 1].unit_id] = timeout
    texty = first_index(units40, lambda u: not u.golden.message.tool_calls, with_args + 2)
    plan[units40[texty].unit_id] = lambda u: LLMResponse(
        message=Message(role="assistant", content=f"Sure. {PLANTED}")
    )
    return build_run(
        tmp_path_factory.mktemp("runs") / "candidate",
        units40,
        lambda u: plan.get(u.unit_id, golden)(u),
        model="mock/candidate",
    )
