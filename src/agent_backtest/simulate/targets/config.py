"""The target file (TOML): which live agent the flows are played through, and how to talk to it.

    name = "support-agent"
    type = "http"                      # http | python | model (the built-in loop) | installed
    base_url = "http://127.0.0.1:8000"
    timeout = 60                       # seconds per turn
    connect_retries = 3                # a refused connection is tried again (nothing was sent)
    max_turn_events = 20000            # caps on one turn's answer (a runaway agent ends the
    max_turn_bytes = 16777216          # conversation with turn_too_large, or answer_too_large
    max_answer_bytes = 8388608         # for one JSON answer or one streamed event)
    env = { api_key = "SUPPORT_KEY" }  # ${api_key} in a template is $SUPPORT_KEY
    credential_command = "vault read -field=key secret/agent"   # its output is ${credential}
    headers = { Authorization = "Bearer ${api_key}" }

    health = { method = "GET", path = "/health" }   # optional: checked before the first flow

    [session]                          # optional: one agent session per conversation
    create = { method = "POST", path = "/sessions", id_path = "id" }
    teardown = { method = "DELETE", path = "/sessions/${session_id}" }

    [turn]                             # one request per user message
    path = "/chat"
    body = { session = "${session_id}", message = "${message}" }

    [answer]                           # json: paths in the answer; sse: a mapping of events
    format = "sse"
    end = "done"                       # the event that completes a turn (optional)
    events.token = { kind = "text_delta", text = "delta" }
    events.tool = { kind = "tool_start", name = "tool", arguments = "input" }

A ``model`` target is the built-in agent loop: the ``agent`` role's model (``--agent``), the
tools it is offered and the code that runs them, Python functions or an MCP server::

    name = "notes-model"
    type = "model"
    max_steps = 8                      # model calls per user turn before it is stopped
    system = "You keep the user's notes."

    [tools]
    file = "tools.json"                # OpenAI function format (or inline: [[tools.offered]])
    python = { add_note = "notes_tools:add_note" }
    # or: mcp = { command = "python", args = ["server.py"], env = { NOTES = "notes.db" } }

Templates are ``string.Template`` strings: ``${name}`` is replaced by a value and nothing is
ever evaluated, so a user message cannot run code or change the request's shape (it is placed
as one JSON string, or one form field). Every name used is checked when the file is read.
"""

from __future__ import annotations

import re
from pathlib import Path
from string import Template
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import Field, ValidationError, field_validator, model_validator

from agent_backtest.errors import InputError, UserError
from agent_backtest.input_files import load_toml
from agent_backtest.record_model import StrictModel
from agent_backtest.simulate.targets.events import EventKind, EventPaths

_HOST = re.compile(r"[A-Za-z0-9._-]+|[0-9A-Fa-f:.]+")
"""A host name, an IPv4 address, or an IPv6 address (urlsplit drops its brackets)."""
TURN_VALUES = ("message", "session_id", "flow_id", "conversation_id", "turn")
"""What a template knows of the conversation: the user's message, the agent session's id (from
session.create), the flow's id, the conversation's own id (new for each conversation, recorded
with it: a header can carry it to the agent's logs), and the turn's number (1-based)."""
MIB = 1024 * 1024


class Request(StrictModel):
    """One HTTP request: method, path under base_url, and a templated body."""

    method: Literal["GET", "POST", "PUT", "PATCH", "DELETE"] = "POST"
    path: str = Field(min_length=1, description="Under base_url; templated.")
    body_format: Literal["json", "form"] = "json"
    body: dict[str, Any] | None = Field(
        default=None, description="Templated strings at any depth (form: one level)."
    )


class SessionCreate(Request):
    """The request that opens an agent session, and where its answer holds the id."""

    id_path: str = Field(default="id", description="Dotted path of the id in the JSON answer.")


class SessionCalls(StrictModel):
    """Open an agent session before a conversation and close it after (whatever happened)."""

    create: SessionCreate
    teardown: Request | None = None


class JsonAnswer(StrictModel):
    """The answer is one JSON document; each path says where a part of the turn sits in it."""

    format: Literal["json"]
    text: str | None = Field(default="text", description="The final text.")
    tool_calls: str | None = Field(default=None, description="A list of the turn's tool calls.")
    tool: EventPaths = Field(
        default_factory=EventPaths, description="Paths inside each item of tool_calls."
    )
    error: str | None = Field(default=None, description="An error the agent reports.")
    input_tokens: str | None = None
    output_tokens: str | None = None
    tools_offered: str | None = Field(
        default=None, description="The tools offered to the agent's model (names or definitions)."
    )


class SseEvent(EventPaths):
    """What one type of server-sent event means, and where its fields sit in its data."""

    kind: EventKind

    def paths(self) -> EventPaths:
        """The field paths of this event type."""
        return EventPaths(**self.model_dump(exclude={"kind"}))


class SseAnswer(StrictModel):
    """The answer is a stream of server-sent events, each mapped by its type."""

    format: Literal["sse"]
    type_from: str = Field(
        default="event",
        description="event: the SSE event field names the type; else a dotted path in the "
        "data (e.g. type).",
    )
    events: dict[str, SseEvent] = Field(min_length=1, description="Event type → its meaning.")
    done: list[str] = Field(
        default_factory=list, description="Event types (or data such as [DONE]) that end a turn."
    )
    end: str | None = Field(
        default=None,
        description="The event type (or data) that completes a turn, which may be mapped in "
        "events too (say, to usage): a stream that ends before it is the transport error "
        "stream_ended_early, never a finished turn.",
    )


def _byte_cap(default: int, description: str) -> Any:
    """A cap on bytes of an agent's answer: at least 1 KiB, at most 1 GiB."""
    return Field(default=default, ge=1024, le=1024 * MIB, description=description)


class TargetBase(StrictModel):
    """What every target has: a name (recorded with each conversation) and a turn timeout."""

    name: str = Field(min_length=1)
    timeout: float = Field(default=60.0, gt=0, description="Seconds one turn may take.")


class HttpTarget(TargetBase):
    """A live agent over HTTP."""

    type: Literal["http"]
    base_url: str = Field(description="http(s)://host[:port][/path]: where the agent listens.")
    connect_retries: int = Field(default=3, ge=0, le=20)
    retry_wait: float = Field(default=0.5, ge=0, description="Seconds between connect tries.")
    env: dict[str, str] = Field(
        default_factory=dict, description="Template name → environment variable."
    )
    credential_command: str | None = Field(
        default=None, description="Prints a key, used as ${credential}; run again on HTTP 401."
    )
    headers: dict[str, str] = Field(default_factory=dict)
    max_turn_events: int = Field(
        default=20_000,
        ge=1,
        le=10_000_000,
        description="Most events one streamed turn may send; past it the turn is the transport "
        "error turn_too_large.",
    )
    max_turn_bytes: int = _byte_cap(
        16 * MIB,
        "Most bytes (decoded) one streamed turn may send; past it the turn is the transport "
        "error turn_too_large, its answer never held whole.",
    )
    max_answer_bytes: int = _byte_cap(
        8 * MIB,
        "Most bytes (decoded) of one JSON answer or one streamed event; past it the turn is the "
        "transport error answer_too_large.",
    )
    session: SessionCalls | None = None
    health: Request | None = Field(
        default=None,
        description="A request the agent answers with a success when it is up and takes the "
        "credential: sent once before the first flow, instead of a session opened and closed.",
    )
    turn: Request
    answer: Annotated[JsonAnswer | SseAnswer, Field(discriminator="format")]

    @field_validator("base_url")
    @classmethod
    def _usable_url(cls, value: str) -> str:
        """A URL a connection can be opened to: http or https, a host name, a port in range."""
        if "${" in value:
            raise ValueError(f"{value!r}: base_url is not a template: write the address itself")
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https"):
            raise ValueError(f"{value!r}: give an http:// or https:// address")
        try:
            port = parts.port
        except ValueError:
            port = -1
        if port is not None and not 1 <= port <= 65535:
            raise ValueError(f"{value!r}: the port must be a number from 1 to 65535")
        if not parts.hostname or not _HOST.fullmatch(parts.hostname):
            raise ValueError(f"{value!r}: no usable host name")
        return value

    @model_validator(mode="after")
    def _known_names(self) -> HttpTarget:
        """Every ``${name}`` is a turn value, an env name, or the credential."""
        known = {*TURN_VALUES, *self.env, *(["credential"] if self.credential_command else [])}
        for where, template in self.templates():
            for name in _identifiers(template, where):
                if name not in known:
                    raise ValueError(
                        f"{where}: unknown ${{{name}}} (known: {', '.join(sorted(known))}; name "
                        "an environment variable under env)"
                    )
        if self.session is None and "session_id" in {
            name for _, template in self.templates() for name in _identifiers(template, "")
        }:
            raise ValueError("${session_id} needs a [session] create request")
        return self

    def templates(self) -> list[tuple[str, str]]:
        """(key, template) of every templated string of the file."""
        found = [(f"headers.{key}", value) for key, value in self.headers.items()]
        requests = {"turn": self.turn}
        if self.health is not None:
            requests["health"] = self.health
        if self.session is not None:
            requests["session.create"] = self.session.create
            if self.session.teardown is not None:
                requests["session.teardown"] = self.session.teardown
        for key, request in requests.items():
            found.append((f"{key}.path", request.path))
            found.extend(_strings(request.body, f"{key}.body"))
        return found


class PythonTarget(TargetBase):
    """A callable that takes the conversation so far and returns the turn's events."""

    type: Literal["python"]
    callable: str = Field(pattern=r"^[\w.]+:[\w.]+$", description="module:function.")
    path: str | None = Field(
        default=None, description="A folder put on sys.path first (relative to the file)."
    )


class McpServer(StrictModel):
    """An MCP server started over stdio for the run: its command, arguments and environment."""

    command: str = Field(min_length=1, description="A program on PATH, or a path to one.")
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(
        default_factory=dict, description="Set for the server, over a minimal environment."
    )
    cwd: str | None = Field(default=None, description="Its working folder (relative to the file).")


class ModelTools(StrictModel):
    """The tools the agent's model is offered, and the code that runs them."""

    file: str | None = Field(
        default=None, description="A JSON file of tools in OpenAI function format."
    )
    offered: list[dict[str, Any]] | None = Field(
        default=None, description="The tools inline, in OpenAI function format."
    )
    python: dict[str, str] | None = Field(
        default=None, description="Tool name → module:function that runs it."
    )
    mcp: McpServer | None = None
    path: str | None = Field(
        default=None, description="A folder put on sys.path first (relative to the file)."
    )

    @model_validator(mode="after")
    def _one_environment(self) -> ModelTools:
        """Python functions or an MCP server; Python tools need their definitions."""
        if (self.python is None) == (self.mcp is None):
            raise ValueError("give the code that runs the tools: [tools.python] or [tools.mcp]")
        if self.file is not None and self.offered is not None:
            raise ValueError("give the tools offered as file or as offered, not both")
        if self.python is not None and self.file is None and self.offered is None:
            raise ValueError(
                "Python tools need their definitions: file = TOOLS.json or [[tools.offered]]"
            )
        for name, reference in (self.python or {}).items():
            if not re.fullmatch(r"[\w.]+:[\w.]+", reference):
                raise ValueError(f"python.{name}: give it as module:function")
        return self


class ModelTarget(TargetBase):
    """The built-in agent loop: the agent role's model and a tool environment."""

    type: Literal["model"]
    max_steps: int = Field(
        default=10, ge=1, le=200, description="Model calls per user turn before it is stopped."
    )
    system: str | None = Field(default=None, description="The system prompt of the agent.")
    params: dict[str, Any] = Field(
        default_factory=dict, description="Sampling parameters of every call (temperature, …)."
    )
    tools: ModelTools


Target = HttpTarget | PythonTarget | ModelTarget


class TargetFile(StrictModel):
    """The whole file: one target."""

    target: Annotated[HttpTarget | PythonTarget | ModelTarget, Field(discriminator="type")]


def load_target(path: Path) -> Target:
    """Read and check the target file; any mistake is an :class:`InputError` naming the key."""
    data = load_toml(path, "target file")
    if "type" not in data:
        raise InputError(path, "type", 'missing: say type = "http", "python" or "model"')
    if data["type"] not in ("http", "python", "model"):
        return _installed_target(path, data)
    try:
        target = TargetFile.model_validate({"target": data}).target
    except ValidationError as exc:
        raise _file_error(path, exc, data, wrapped=True) from None
    return target


def _installed_target(path: Path, data: dict[str, Any]) -> Any:
    """A target file of a type an installed package adds, read with that type's settings."""
    from agent_backtest.simulate.targets import TARGET_TYPES

    try:
        settings = TARGET_TYPES.load(str(data["type"])).settings
    except UserError as exc:
        raise InputError(path, "type", exc.message) from None
    try:
        return settings.model_validate(data)
    except ValidationError as exc:
        raise _file_error(path, exc, data) from None


def _file_error(
    path: Path, exc: ValidationError, data: dict[str, Any], wrapped: bool = False
) -> InputError:
    """The first problem, as the key of the file at fault (``wrapped``: the error's location
    starts with the wrapper of :class:`TargetFile`) and its fix."""
    error = exc.errors()[0]
    location = error["loc"][1:] if wrapped else error["loc"]
    # A check of the whole file (no key of its own) names the key in its message.
    key = _key_in_file(data, location, error["type"] == "missing")
    if error["type"] == "extra_forbidden":
        return InputError(path, key, "unknown key: remove it or check its spelling")
    return InputError(path, key, error["msg"].removeprefix("Value error, "))


def _key_in_file(data: Any, location: tuple[int | str, ...], missing: bool) -> str | None:
    """A validation error's location as the file writes it. The names pydantic adds on the way
    (a union member's tag such as ``http`` or ``sse``) are not keys of the file and are left
    out; only a missing key is named although the file does not hold it."""
    keys: list[str] = []
    node = data
    for number, part in enumerate(location):
        if _holds(node, part):
            node = node[part]
        elif not (missing and number == len(location) - 1):
            continue
        keys.append(str(part))
    return ".".join(keys) or None


def _holds(node: Any, part: int | str) -> bool:
    """True when ``part`` is a key (or an index) of ``node`` as the file has it."""
    if isinstance(node, dict):
        return part in node
    return isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)


def render(template: str, values: dict[str, str]) -> str:
    """``template`` with every ``${name}`` replaced (all names were checked when read)."""
    return Template(template).substitute(values)


def render_body(body: Any, values: dict[str, str]) -> Any:
    """A body with every string at any depth rendered; other values kept as they are."""
    if isinstance(body, str):
        return render(body, values)
    if isinstance(body, dict):
        return {key: render_body(value, values) for key, value in body.items()}
    if isinstance(body, list):
        return [render_body(value, values) for value in body]
    return body


def _identifiers(template: str, where: str) -> list[str]:
    parsed = Template(template)
    if not parsed.is_valid():
        raise ValueError(f"{where}: not a valid template (write $$ for a literal $)")
    return parsed.get_identifiers()


def _strings(value: Any, where: str) -> list[tuple[str, str]]:
    if isinstance(value, str):
        return [(where, value)]
    if isinstance(value, dict):
        return [found for k, v in value.items() for found in _strings(v, f"{where}.{k}")]
    if isinstance(value, list):
        return [found for i, v in enumerate(value) for found in _strings(v, f"{where}.{i}")]
    return []
