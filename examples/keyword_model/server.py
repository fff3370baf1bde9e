"""A keyword model behind an OpenAI-compatible ``/v1/chat/completions`` endpoint.

It needs no key, no download and no GPU, and answers in a millisecond, so the tutorials can
run an agent end to end on any machine: the demo agent's model in the simulate tutorial and
the airline agent in the benchmark tutorial. It is not a language model. It reads the last
message: after a tool result it reports what the tool returned; after a user message it calls
the first offered tool whose rule matches the user's words (a note to save, a day of the
calendar, a τ-bench user or reservation id), else it says which tools it has. Its scores say
nothing about an LLM; they show what abt records and measures, and a real model served the
same way (vLLM, llama.cpp's server, Ollama) takes its place with no other change.

    python -m examples.keyword_model --port 8020
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Arguments = dict[str, Any]
MONTHS = "january february march april may june july august september october november december"


def day_named(text: str) -> str | None:
    """``2026-03-02`` for "2 March" (the demo's calendar is in 2026), else None."""
    found = re.search(r"\b(\d{1,2}) (" + MONTHS.replace(" ", "|") + r")\b", text, re.I)
    if not found:
        return None
    month = MONTHS.split().index(found[2].lower()) + 1
    return f"2026-{month:02d}-{int(found[1]):02d}"


def note_to_save(text: str) -> Arguments | None:
    """The title and body of "save a note called TITLE saying BODY"."""
    found = re.search(r"note called (.+?) saying (.+?)\.?$", text, re.I)
    return {"title": found[1], "body": found[2]} if found else None


def asks_for(*words: str) -> Callable[[str], Arguments | None]:
    """A rule calling its tool with no arguments when the text holds one of ``words``."""
    return lambda text: {} if any(word in text.lower() for word in words) else None


def named_id(pattern: str, argument: str) -> Callable[[str], Arguments | None]:
    """A rule calling its tool with the first id in the text that matches ``pattern``."""

    def rule(text: str) -> Arguments | None:
        found = re.search(pattern, text)
        return {argument: found[0]} if found else None

    return rule


# A τ-bench reservation id: six capitals and digits, with at least one of each.
RESERVATION_ID = r"\b(?=[A-Z0-9]*\d)(?=[A-Z0-9]*[A-Z])[A-Z0-9]{6}\b"

# Tried in order; a rule applies only when its tool is offered.
RULES: list[tuple[str, Callable[[str], Arguments | None]]] = [
    ("add_note", note_to_save),
    ("list_events", lambda text: {"day": day} if (day := day_named(text)) else None),
    ("list_notes", asks_for("note")),
    ("get_reservation_details", named_id(RESERVATION_ID, "reservation_id")),
    ("get_user_details", named_id(r"\b[a-z]+_[a-z]+_\d+\b", "user_id")),
]


def answer(body: dict[str, Any]) -> dict[str, Any]:
    """The assistant message for a chat-completions request body."""
    offered = [tool["function"]["name"] for tool in body.get("tools") or []]
    last = body["messages"][-1]
    if last["role"] == "tool":
        return {"role": "assistant", "content": f"Here is what I found: {last['content']}"}
    said = text_of(last.get("content"))
    for name, rule in RULES:
        arguments = rule(said) if name in offered else None
        if arguments is not None:
            call = {"name": name, "arguments": json.dumps(arguments)}
            return {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": f"call_{name}", "type": "function", "function": call}],
            }
    tools = ", ".join(offered) or "no tools"
    return {"role": "assistant", "content": f"I can help with what my tools do: {tools}."}


def text_of(content: str | list[dict[str, Any]] | None) -> str:
    """The text of a message's content, plain or in parts."""
    if isinstance(content, list):
        return " ".join(part.get("text", "") for part in content)
    return content or ""


def completion(body: dict[str, Any]) -> dict[str, Any]:
    """A chat-completions response holding the rules' answer."""
    message = answer(body)
    return {
        "id": "chatcmpl-keyword",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model", "keyword"),
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
            }
        ],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
    }


class Handler(BaseHTTPRequestHandler):
    """``POST /v1/chat/completions``; anything else is a 404."""

    def do_POST(self) -> None:
        if self.path.rstrip("/") != "/v1/chat/completions":
            self.send_error(404)
            return
        length = int(self.headers.get("content-length", 0))
        try:
            reply = completion(json.loads(self.rfile.read(length)))
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            self.send_error(400, f"not a chat-completions request: {exc}")
            return
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: one line a request would drown the terminal."""


def main() -> None:
    """Serve on 127.0.0.1 until interrupted."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8020)
    port = parser.parse_args().port
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    print(f"keyword model serving on http://127.0.0.1:{port}/v1", flush=True)
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C is how the reader stops it
        server.serve_forever()
