"""Reader of OpenHands event streams: a saved trajectory (a JSON list of events) or evaluation
output (JSON Lines of ``{instance_id, instruction, metadata, history: [events], …}``).

Each trajectory or output line is one session. OpenHands records every model answer on the
actions it produced (``tool_call_metadata.model_response``: the provider's whole response, with
its tool calls and usage; one response may produce several actions), and every tool's output as
an observation naming the call (``tool_call_metadata.tool_call_id``). An agent message without
that metadata is a model answer of text only. Each answer is an LLM step and each observation of
a tool call a tool step.

OpenHands does not record the requests: each is rebuilt from the events before the answer, as
the agent builds it (the system prompt and tools of the ``system`` event when the stream has
one, the user's messages, the earlier answers, the tools' outputs as OpenHands shows them to the
model), and marked reconstructed. The workspace context OpenHands adds (``recall``) is written
with its own templates and is not reproduced; each call's notes say so.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agent_backtest import trace
from agent_backtest.errors import InputError, RecordError
from agent_backtest.formats.base import ReadOptions, SkipLog, SpanReading, validation_errors_as
from agent_backtest.formats.isotime import parse_timestamp
from agent_backtest.formats.jsonio import is_json_lines, iter_json_lines, load_json
from agent_backtest.formats.run_steps import text_or_none as _text
from agent_backtest.formats.run_steps import tool_step
from agent_backtest.trace.openai_wire import (
    message_from_openai,
    tools_from_openai,
    usage_from_openai,
)

FORMAT = "openhands"
EXPECTS = "OpenHands event streams (a JSON list of events, or evaluation output with history)"
REBUILT = (
    "OpenHands does not record requests: rebuilt from the event stream (system event, user "
    "messages, earlier answers, tool outputs as OpenHands shows them to the model; the "
    "workspace context it adds is not reproduced)"
)
# What OpenHands appends to an error's text, and the marker it puts where it cut the middle out
# of an output longer than the run's ``max_message_chars``.
ERROR_SUFFIX = "\n[Error occurred in processing last action]"
CUT_MARKER = "\n[... Observation truncated due to length ...]\n"
# Enough of a file's start to see past blank lines whether it opens a JSON list.
LIST_PEEK = 4096
# Observations OpenHands passes on whole: file reads are cut by its editor, pages by the browser.
SHOWN_WHOLE = frozenset({"read", "browse"})


def sniff(head: str, path: Path) -> bool:
    """True for a JSON list of OpenHands events or evaluation output holding their history."""
    start = head.lstrip()[:1]
    if start == "[":
        return '"source"' in head and '"timestamp"' in head and '"args"' in head
    return start == "{" and '"instance_id"' in head and '"agent_class"' in head


def read(path: Path, options: ReadOptions, skips: SkipLog) -> Iterator[trace.Session]:
    """Yield one session per trajectory or output line."""
    for location, run in _runs(path):
        try:
            yield stream_session(run, path, location, skips)
        except RecordError as exc:
            skips.record_error(exc, location)


def _runs(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """Each run of the file with where it is: the lines of evaluation output, or the one
    trajectory a saved event list holds (pretty-printed, or on a single line as OpenHands'
    session store writes its pages of events)."""
    if is_json_lines(path) and not _opens_a_list(path):
        for number, line in iter_json_lines(path, f"each line must be one of {EXPECTS}"):
            yield f"line {number}", line
        return
    document = load_json(path)
    if isinstance(document, list):
        yield "$", {"history": document}
    elif isinstance(document, dict) and isinstance(document.get("history"), list):
        yield "$", document
    else:
        raise InputError(path, "$", f"expected {EXPECTS}")


def _opens_a_list(path: Path) -> bool:
    with path.open("rb") as handle:
        return handle.read(LIST_PEEK).lstrip()[:1] == b"["


@validation_errors_as("malformed_event")
def stream_session(run: Any, path: Path, location: str, skips: SkipLog) -> trace.Session:
    """One event stream: a turn per user message, a step per model answer and tool output."""
    if not isinstance(run, dict) or not isinstance(run.get("history"), list):
        raise RecordError("malformed_output", "an output line without a history list")
    if not any(_is_event(event) for event in run["history"]):
        raise RecordError("no_events", "the history holds no OpenHands action or observation")
    name = run.get("instance_id") or (path.stem if location == "$" else location)
    session = trace.Session(
        id=f"openhands-{name}",
        source=trace.SourceRef(file=str(path), format=FORMAT, location=location),
        metadata=_metadata(run),
    )
    conversation = _Conversation(session, _configured_model(run), _output_limit(run), skips)
    conversation.replay(run["history"], f"{location}.history" if location != "$" else location)
    return session


class _Conversation:
    """The messages the agent would have sent, built event by event, and the steps read."""

    def __init__(
        self,
        session: trace.Session,
        model: str | None,
        output_limit: int | None,
        skips: SkipLog,
    ) -> None:
        self.session, self.model, self.skips = session, model, skips
        self.output_limit = output_limit
        self.messages: list[trace.Message] = []
        self.tools: list[trace.ToolDef] | None = None
        self.answered: dict[str, trace.Message] = {}
        self.turn: trace.Turn | None = None

    def replay(self, events: list[Any], location: str) -> None:
        for index, event in enumerate(events):
            if isinstance(event, dict):
                self.event(event, f"{location}[{index}]")

    def event(self, event: dict[str, Any], where: str) -> None:
        action, args = event.get("action"), event.get("args")
        args = args if isinstance(args, dict) else {}
        metadata = event.get("tool_call_metadata")
        if action == "system" and isinstance(args.get("content"), str):
            self.messages.append(trace.Message(role="system", content=args["content"]))
            self.tools = tools_from_openai(args.get("tools"))
        elif action == "message" and event.get("source") == "user":
            self.user(str(args.get("content") or ""))
        elif action is not None and event.get("source") == "agent":
            if isinstance(metadata, dict) and isinstance(metadata.get("model_response"), dict):
                self.answer(metadata["model_response"], event, where)
            elif action == "message":
                text = trace.Message(role="assistant", content=str(args.get("content") or ""))
                self.llm_step(text, None, event, where)
        elif event.get("observation") is not None and isinstance(metadata, dict):
            self.tool_output(event, metadata, where)

    def user(self, text: str) -> None:
        self.turn = trace.Turn(index=len(self.session.turns), user_input=text)
        self.session.turns.append(self.turn)
        self.messages.append(trace.Message(role="user", content=text))

    def answer(self, response: dict[str, Any], event: dict[str, Any], where: str) -> None:
        """A model response; the actions it produced after the first add nothing new."""
        key = str(response.get("id") or where)
        if key in self.answered:
            return
        choices = response.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise RecordError("malformed_model_response", f"{where}: a response without choices")
        message = message_from_openai(choices[0].get("message"))
        self.answered[key] = message
        self.llm_step(message, response, event, where)

    def llm_step(
        self,
        answer: trace.Message,
        response: dict[str, Any] | None,
        event: dict[str, Any],
        where: str,
    ) -> None:
        choice = (response or {}).get("choices", [{}])[0]
        recorded_model = (response or {}).get("model")
        call = trace.LLMCall(
            request=trace.LLMRequest(
                model=self.model or _text(recorded_model),
                messages=list(self.messages),
                tools=self.tools,
            ),
            response=trace.LLMResponse(
                message=answer,
                finish_reason=_text(choice.get("finish_reason")),
                usage=usage_from_openai((response or {}).get("usage")),
                model=_text(recorded_model),
                id=_text((response or {}).get("id")),
            ),
            reconstructed=True,
            notes=[REBUILT],
            dialect=FORMAT,
        )
        step = trace.Step(
            id=f"event-{event.get('id', where)}",
            kind="llm",
            name="agent",
            ended_at=parse_timestamp(event.get("timestamp"), "timestamp"),
            llm=call,
        )
        self.current_turn().steps.append(step)
        if answer.text():
            self.current_turn().agent_output = answer.text()
        self.messages.append(answer)
        self.skips.read(SpanReading(where, step.id, "agent", "llm", FORMAT))

    def tool_output(self, event: dict[str, Any], metadata: dict[str, Any], where: str) -> None:
        """An observation answering a tool call: a tool message and a tool step."""
        call_id = _text(metadata.get("tool_call_id"))
        content = event.get("content")
        content = content if isinstance(content, str) else None
        call = next(
            (
                c
                for answer in self.answered.values()
                for c in answer.tool_calls or []
                if call_id and c.id == call_id
            ),
            None,
        )
        failed = event.get("observation") == "error"
        execution = trace.ToolExecution(
            name=_text(metadata.get("function_name")) or (call.name if call else "unknown"),
            call_id=call_id,
            arguments=call.arguments if call else None,
            result=content,
            error=content if failed else None,
        )
        ended = parse_timestamp(event.get("timestamp"), "timestamp")
        step = tool_step(f"event-{event.get('id', where)}", execution, ended_at=ended)
        self.current_turn().steps.append(step)
        shown = None if content is None else shown_to_model(event, content, self.output_limit)
        self.messages.append(trace.Message(role="tool", content=shown, tool_call_id=call_id))
        self.skips.read(SpanReading(where, step.id, execution.name, "tool", FORMAT))

    def current_turn(self) -> trace.Turn:
        if self.turn is None:  # the agent acted before any user message
            self.turn = trace.Turn(index=0)
            self.session.turns.append(self.turn)
        return self.turn


def shown_to_model(event: dict[str, Any], content: str, limit: int | None) -> str:
    """An observation's text as OpenHands puts it in the tool message: a command's output with
    its shell state and exit code, an error with the line OpenHands adds; every output but a
    file read or a web page cut in the middle when longer than the run's message limit."""
    kind = _text(event.get("observation"))
    extras = event.get("extras") if isinstance(event.get("extras"), dict) else {}
    if kind in SHOWN_WHOLE:
        return content
    if kind == "run" and isinstance(extras.get("metadata"), dict):
        return _cut(_command_output(content, extras["metadata"]), limit)
    if kind == "error":
        return _cut(content, limit) + ERROR_SUFFIX
    return _cut(content, limit)


def _command_output(content: str, shell: dict[str, Any]) -> str:
    """A command's output framed by the shell state recorded with it (streams older than the
    recorded shell state are shown as their output alone)."""
    text = f"{shell.get('prefix') or ''}{content}{shell.get('suffix') or ''}"
    if shell.get("working_dir"):
        text += f"\n[Current working directory: {shell['working_dir']}]"
    if shell.get("py_interpreter_path"):
        text += f"\n[Python interpreter: {shell['py_interpreter_path']}]"
    exit_code = shell.get("exit_code")
    if isinstance(exit_code, int) and exit_code != -1:
        text += f"\n[Command finished with exit code {exit_code}]"
    return text


def _cut(text: str, limit: int | None) -> str:
    """``text`` with its middle replaced by OpenHands' marker when longer than ``limit``."""
    if limit is None or limit < 0 or len(text) <= limit:
        return text
    half = limit // 2
    return text[:half] + CUT_MARKER + text[-half:]


def _is_event(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and "source" in value
        and ("action" in value or "observation" in value)
    )


def _llm_config(run: dict[str, Any]) -> dict[str, Any]:
    """The model settings an evaluation output records (a saved trajectory has none)."""
    metadata = run.get("metadata") if isinstance(run.get("metadata"), dict) else {}
    config = metadata.get("llm_config")
    return config if isinstance(config, dict) else {}


def _configured_model(run: dict[str, Any]) -> str | None:
    """The model an evaluation was configured with, without its provider prefix."""
    model = _text(_llm_config(run).get("model"))
    return model.split("/", 1)[-1] if model else None


def _output_limit(run: dict[str, Any]) -> int | None:
    """The length past which the evaluation's model was shown a tool output cut in the middle
    (``max_message_chars``)."""
    limit = _llm_config(run).get("max_message_chars")
    return limit if isinstance(limit, int) and not isinstance(limit, bool) else None


def _metadata(run: dict[str, Any]) -> dict[str, Any]:
    metadata = run.get("metadata") if isinstance(run.get("metadata"), dict) else {}
    found = {
        "instance_id": run.get("instance_id"),
        "agent_class": metadata.get("agent_class"),
        "error": run.get("error"),
    }
    return {key: value for key, value in found.items() if value is not None}
