"""A Python callable as the target: it takes the conversation so far and returns the turn's
events.

The callable is ``module:function``. It is called with ``messages``, the conversation as chat
messages (``{"role": "user" | "assistant", "content": ...}``, the newest user message last),
and returns (or, when async, resolves to) an iterable of event objects, each
``{"type": KIND, ...}`` with the fields the event vocabulary names: ``text_delta`` and
``final_text`` (``text``), ``tool_start`` (``name``, ``arguments``, ``id``), ``tool_result``
(``id``, ``name``, ``result``, ``message`` for a tool's error), ``error`` (``message``),
``usage`` (``input_tokens``, ``output_tokens``), ``tools_offered`` (``tools``). A plain
function runs in a worker thread, so conversations still go side by side.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from agent_backtest.episodes.calls import ModelCaller
from agent_backtest.errors import InputError
from agent_backtest.simulate.targets.config import PythonTarget
from agent_backtest.simulate.targets.errors import TargetError
from agent_backtest.simulate.targets.events import EVENT_KINDS, EventPaths, TurnEvent, event_from
from agent_backtest.simulate.targets.turns import TargetAnswer


def load_callable(target: PythonTarget, file: Path) -> Callable[..., Any]:
    """The target's function, imported; a missing module or name names the file's key."""
    if target.path is not None:
        folder = str((file.parent / target.path).resolve())
        if folder not in sys.path:
            sys.path.insert(0, folder)
    module_name, _, attribute = target.callable.partition(":")
    try:
        found: Any = importlib.import_module(module_name)
        for part in attribute.split("."):
            found = getattr(found, part)
    except ImportError as exc:
        raise InputError(file, "callable", f"cannot import {module_name}: {exc}") from None
    except AttributeError:
        raise InputError(file, "callable", f"{module_name} has no {attribute}") from None
    if not callable(found):
        raise InputError(file, "callable", f"{target.callable} is not callable")
    return found


class PythonAgent:
    """The callable, shared by every conversation of the run."""

    secrets: tuple[str, ...] = ()

    def __init__(self, target: PythonTarget, function: Callable[..., Any]) -> None:
        self.target = target
        self.function = function

    async def start(self, models: Mapping[str, ModelCaller]) -> None:
        """Nothing to set up (the callable runs its own models)."""

    async def open(self, flow_id: str) -> PythonConversation:
        """A conversation (the callable keeps no session of its own)."""
        return PythonConversation(self)

    async def aclose(self) -> None:
        """Nothing to release."""


class PythonConversation:
    """One conversation: each turn calls the function with the messages so far."""

    def __init__(self, agent: PythonAgent) -> None:
        self.agent = agent

    async def turn(self, index: int, message: str, history: list[dict[str, str]]) -> TargetAnswer:
        """Call the function within the turn's deadline; its events, timed."""
        messages = [*history, {"role": "user", "content": message}]
        started = time.perf_counter()
        try:
            async with asyncio.timeout(self.agent.target.timeout):
                returned = await self._call(messages)
        except TimeoutError:
            raise TargetError(
                "timeout", f"no answer within {self.agent.target.timeout:g} s"
            ) from None
        except Exception as exc:  # the agent's own failure, shown with its type
            raise TargetError("python", f"{type(exc).__name__}: {exc}") from None
        events = [_event(item) for item in returned or ()]
        return TargetAnswer(events, None, (time.perf_counter() - started) * 1000)

    async def _call(self, messages: list[dict[str, str]]) -> Any:
        function = self.agent.function
        if inspect.iscoroutinefunction(function):
            return await function(messages)
        returned = await asyncio.to_thread(function, messages)
        return await returned if inspect.isawaitable(returned) else returned

    async def close(self) -> None:
        """Nothing to close."""


def _event(item: Any) -> TurnEvent:
    """One returned event object, checked."""
    kind = item.get("type") if isinstance(item, dict) else None
    if kind not in EVENT_KINDS:
        raise TargetError(
            "malformed_answer",
            f"an event must be an object whose type is one of {', '.join(EVENT_KINDS)}; "
            f"got {str(item)[:100]}",
        )
    return event_from(kind, item, EventPaths())
