"""Reader of Inspect AI evaluation logs: ``.eval`` archives and ``.json`` logs.

A ``.json`` log is one document ``{version, status, eval, plan, results, stats, samples}``; an
``.eval`` log is a zip archive holding ``header.json`` (the same fields without the samples) and
one ``samples/<id>_epoch_<n>.json`` per sample and epoch. Every sample run (each epoch of a
sample) is one session. Its events, in order, give the steps: every ``model`` event is an LLM
step (the input messages exactly as sent, the tools offered, the tool choice, the generation
settings as parameters, the output as the recorded answer, with model, usage and timings), every
``tool`` event a tool execution. The sample's scores, target and epoch are session metadata.

Inspect shortens a log in two ways that are undone here: a long text is stored once in the
sample's ``attachments`` (``attachment://<hash>``; older logs keep it in the transcript's
``content`` as ``tc://<hash>``), and newer logs store each model event's input as ranges
(``input_refs``) into a message pool kept with the sample.
"""

from __future__ import annotations

import zipfile
import zlib
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import orjson

from agent_backtest import trace
from agent_backtest.errors import InputError, RecordError
from agent_backtest.formats import inspect_records as records
from agent_backtest.formats.base import ReadOptions, SkipLog, SpanReading, validation_errors_as
from agent_backtest.formats.isotime import parse_timestamp
from agent_backtest.formats.jsonio import load_json
from agent_backtest.formats.limits import MAX_DOCUMENT_BYTES, check_size, check_value
from agent_backtest.formats.run_steps import text_or_none as _text
from agent_backtest.formats.run_steps import tool_step

FORMAT = "inspect"
EXPECTS = "Inspect AI evaluation logs (.eval archives or .json logs with eval and samples)"
ZIP_MAGIC = "PK\x03\x04"
ATTACHMENT_PREFIXES = ("attachment://", "tc://")
SAMPLES_FOLDER = "samples/"


def sniff(head: str, path: Path) -> bool:
    """True for a zip archive whose members are an Inspect log's, or a JSON document with an
    ``eval`` header and Inspect's log fields."""
    if head.startswith(ZIP_MAGIC):
        return any(name in head for name in ("_journal/start.json", "header.json", "samples/"))
    return (
        head.lstrip().startswith("{")
        and '"eval"' in head
        and '"version"' in head
        and '"task"' in head
        and ('"run_id"' in head or '"task_id"' in head)
    )


def read(path: Path, options: ReadOptions, skips: SkipLog) -> Iterator[trace.Session]:
    """Yield one session per sample and epoch of the log."""
    if not _is_zip(path):
        yield from _sessions(*_json_log(path), path, skips)
        return
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise InputError(path, "zip archive", f"not a readable .eval archive ({exc})") from None
    with archive:
        yield from _sessions(*_eval_archive(archive, path), path, skips)


def _sessions(
    header: dict[str, Any], samples: Iterator[tuple[str, Any]], path: Path, skips: SkipLog
) -> Iterator[trace.Session]:
    spec = header.get("eval") if isinstance(header.get("eval"), dict) else {}
    for location, sample in samples:
        try:
            yield sample_session(sample, spec, path, location, skips)
        except RecordError as exc:
            skips.record_error(exc, location)


def _is_zip(path: Path) -> bool:
    with path.open("rb") as handle:
        return handle.read(len(ZIP_MAGIC)) == ZIP_MAGIC.encode()


def _json_log(path: Path) -> tuple[dict[str, Any], Iterator[tuple[str, Any]]]:
    log = load_json(path)
    if not isinstance(log, dict) or not isinstance(log.get("eval"), dict):
        raise InputError(path, "$", f"expected {EXPECTS}")
    samples = log.get("samples") or []
    if not isinstance(samples, list):
        raise InputError(path, "$.samples", "expected a list of samples")
    return log, ((f"$.samples[{index}]", sample) for index, sample in enumerate(samples))


def _eval_archive(
    archive: zipfile.ZipFile, path: Path
) -> tuple[dict[str, Any], Iterator[tuple[str, Any]]]:
    names = archive.namelist()
    header_name = next((n for n in ("header.json", "_journal/start.json") if n in names), None)
    if header_name is None:
        raise InputError(path, "zip archive", f"expected {EXPECTS}; it has no header.json")
    header = _member(archive, header_name, path)
    members = sorted((n for n in names if _is_sample(n)), key=_sample_order)
    return header, ((name, _member(archive, name, path)) for name in members)


def _is_sample(name: str) -> bool:
    return name.startswith(SAMPLES_FOLDER) and name.endswith(".json")


def _sample_order(name: str) -> tuple[int, str, int]:
    """Samples by id (numbers in numeric order), then epoch: ``samples/<id>_epoch_<n>.json``."""
    stem = name.removeprefix(SAMPLES_FOLDER).removesuffix(".json")
    sample_id, _, epoch = stem.rpartition("_epoch_")
    number = int(sample_id) if sample_id.isdigit() else -1
    return number, sample_id, int(epoch) if epoch.isdigit() else 0


def _member(archive: zipfile.ZipFile, name: str, path: Path) -> Any:
    """One JSON member of the archive, refused before inflating when it is too large."""
    info = archive.getinfo(name)
    check_size(info.file_size, path, name)
    try:
        with archive.open(info) as handle:
            data = handle.read(MAX_DOCUMENT_BYTES + 1)
        check_size(len(data), path, name)
        return check_value(orjson.loads(data), data, path, name)
    except (zipfile.BadZipFile, OSError, EOFError, zlib.error, ValueError) as exc:
        # ValueError covers orjson's decode error and a corrupt member's bad header.
        raise InputError(path, name, f"not readable: {exc}") from None


@validation_errors_as("malformed_sample")
def sample_session(
    sample: Any, spec: dict[str, Any], path: Path, location: str, skips: SkipLog
) -> trace.Session:
    """One run of a sample: a single turn from the sample's input to its output, with a step
    per model and tool event."""
    if not isinstance(sample, dict):
        raise RecordError("malformed_sample", "a sample must be an object")
    sample = resolve_attachments(sample)
    run = spec.get("eval_id") or spec.get("run_id") or path.stem
    session = trace.Session(
        id=f"inspect-{run}-{sample.get('id')}-epoch{sample.get('epoch', 1)}",
        source=trace.SourceRef(file=str(path), format=FORMAT, location=location),
        metadata=_metadata(sample, spec),
    )
    turn = trace.Turn(
        index=0, user_input=_input_text(sample.get("input")), agent_output=_output(sample)
    )
    session.turns.append(turn)
    pool = _message_pool(sample)
    model_events = 0
    for where, event in _events(sample, f"{location}.events"):
        model_events += event.get("event") == "model"
        step = _step(event, pool, where, skips)
        if step is not None:
            turn.steps.append(step)
    if not model_events:
        # Logs written before Inspect recorded events keep only the final messages.
        skips.skip("no_model_events", location, "the sample records no model event to replay")
    return session


def resolve_attachments(sample: dict[str, Any]) -> dict[str, Any]:
    """The sample with every ``attachment://`` or ``tc://`` reference replaced by its text."""
    stored: dict[str, Any] = {}
    for holder in (sample.get("attachments"), _transcript(sample).get("content")):
        if isinstance(holder, dict):
            stored.update(holder)
    if not stored:
        return sample

    def resolved(value: Any) -> Any:
        if isinstance(value, str) and value.startswith(ATTACHMENT_PREFIXES):
            return stored.get(value.split("://", 1)[1], value)
        if isinstance(value, list):
            return [resolved(item) for item in value]
        if isinstance(value, dict):
            return {key: resolved(item) for key, item in value.items()}
        return value

    return resolved(sample)


def _message_pool(sample: dict[str, Any]) -> list[Any]:
    data = sample.get("events_data")
    pool = data.get("messages") if isinstance(data, dict) else sample.get("message_pool")
    return pool if isinstance(pool, list) else []


def _transcript(sample: dict[str, Any]) -> dict[str, Any]:
    """The sample's ``transcript`` (where older logs keep events and attachments), or an empty
    one when it is missing or not an object."""
    transcript = sample.get("transcript")
    return transcript if isinstance(transcript, dict) else {}


def _events(sample: dict[str, Any], location: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """The sample's events in order, with the events recorded inside a tool or subtask after
    the event that holds them. Older logs keep the events in ``transcript``."""
    events = sample.get("events")
    if events is None:
        events = _transcript(sample).get("events")
        location = location.replace(".events", ".transcript.events")
    yield from _flattened(events if isinstance(events, list) else [], location)


def _flattened(events: list[Any], location: str) -> Iterator[tuple[str, dict[str, Any]]]:
    for index, event in enumerate(events):
        if not isinstance(event, dict):
            continue
        where = f"{location}[{index}]"
        yield where, event
        if isinstance(event.get("events"), list):
            yield from _flattened(event["events"], f"{where}.events")


def _step(
    event: dict[str, Any], pool: list[Any], location: str, skips: SkipLog
) -> trace.Step | None:
    """A model event as an LLM step, a tool event as a tool step, other events as none."""
    kind = event.get("event")
    if kind not in ("model", "tool"):
        return None
    step_id = str(event.get("uuid") or location)
    try:
        step = _model_step(event, pool, step_id) if kind == "model" else _tool_step(event, step_id)
    except RecordError as exc:
        skips.record_error(exc, location)
        return None
    reason = _unusable_reason(step)
    skips.read(
        SpanReading(location, step_id, step.name or kind, step.kind, FORMAT, *(reason or ()))
    )
    return step


def _unusable_reason(step: trace.Step) -> tuple[str, str] | None:
    call = step.llm
    if call is None or call.response is not None:
        return None
    return "no_response", step.error or "the model event records no answer"


def _model_step(event: dict[str, Any], pool: list[Any], step_id: str) -> trace.Step:
    """A ``ModelEvent``: the request as sent, and the first choice of its output."""
    provider, _, model = str(event.get("model") or "").rpartition("/")
    request = trace.LLMRequest(
        model=model or None,
        messages=[records.message(raw) for raw in _input(event, pool)],
        tools=records.tools(event.get("tools")),
        tool_choice=records.tool_choice(event.get("tool_choice")),
        params=records.params(event.get("config")),
    )
    call = trace.LLMCall(
        request=request,
        response=records.response(event.get("output")),
        provider=provider or None,
        dialect=FORMAT,
    )
    if event.get("cache") == "read":
        call.notes.append("Inspect answered this call from its cache")
    error = _error_text(event.get("error"))
    started, ended = _times(event)
    return trace.Step(
        id=step_id,
        kind="llm",
        name=_span_name(event),
        started_at=started,
        ended_at=ended,
        status="error" if error else "ok",
        error=error,
        llm=call,
    )


def _input(event: dict[str, Any], pool: list[Any]) -> list[Any]:
    """The event's input messages, expanded from message-pool ranges when stored as those."""
    refs = event.get("input_refs")
    if event.get("input") or not isinstance(refs, list):
        return event.get("input") or []
    messages: list[Any] = []
    for ref in refs:
        if not (isinstance(ref, list) and len(ref) == 2 and all(isinstance(i, int) for i in ref)):
            raise RecordError("malformed_model_event", f"input_refs entry {ref!r} is not a range")
        if ref[1] > len(pool):
            raise RecordError(
                "malformed_model_event", f"input_refs {ref} reach past the message pool"
            )
        messages.extend(pool[ref[0] : ref[1]])
    return messages


def _tool_step(event: dict[str, Any], step_id: str) -> trace.Step:
    """A ``ToolEvent``: the function, its arguments, its result or error."""
    name = event.get("function")
    if not isinstance(name, str):
        raise RecordError("malformed_tool_event", "a tool event without a function name")
    error = _error_text(event.get("error"))
    result = event.get("result")
    if isinstance(result, list):
        result = records.content(result)
        result = "\n".join(p.text for p in result if p.text) if isinstance(result, list) else None
    execution = trace.ToolExecution.from_raw(
        name, event.get("arguments"), call_id=_text(event.get("id")), result=result, error=error
    )
    return tool_step(step_id, execution, *_times(event))


def _times(event: dict[str, Any]) -> tuple[Any, Any]:
    """When an event started and ended: ``timestamp`` and ``completed``, or the start plus the
    output's ``time`` (older logs record only that)."""
    started = parse_timestamp(event.get("timestamp"), "timestamp")
    ended = parse_timestamp(event.get("completed"), "completed")
    output = event.get("output") if isinstance(event.get("output"), dict) else {}
    seconds = output.get("time")
    if ended is None and started is not None and isinstance(seconds, int | float):
        ended = started + timedelta(seconds=seconds)
    return started, ended


def _span_name(event: dict[str, Any]) -> str | None:
    role = event.get("role")
    return role if isinstance(role, str) else None


def _error_text(raw: Any) -> str | None:
    if isinstance(raw, str):
        return raw
    if isinstance(raw, dict):
        return str(raw.get("message") or raw.get("type") or raw)
    return None


def _input_text(raw: Any) -> str | None:
    """The sample's input: its text, or the text of its last user message."""
    if isinstance(raw, str):
        return raw
    if isinstance(raw, list):
        users = [m for m in raw if isinstance(m, dict) and m.get("role") == "user"]
        if users:
            return records.message(users[-1]).text()
    return None


def _output(sample: dict[str, Any]) -> str | None:
    output = sample.get("output")
    completion = output.get("completion") if isinstance(output, dict) else None
    return completion if isinstance(completion, str) and completion else None


def _metadata(sample: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    """What the log says about the run: task, model, sample id, epoch, target and scores."""
    metadata: dict[str, Any] = {
        "task": spec.get("task"),
        "model": spec.get("model"),
        "sample_id": sample.get("id"),
        "epoch": sample.get("epoch"),
        "target": sample.get("target"),
    }
    version = (spec.get("packages") or {}).get("inspect_ai")
    if version:
        metadata["inspect_version"] = version
    scores = sample.get("scores")
    if isinstance(scores, dict):
        metadata["scores"] = {
            name: {key: score.get(key) for key in ("value", "answer", "explanation")}
            for name, score in scores.items()
            if isinstance(score, dict)
        }
    return {key: value for key, value in metadata.items() if value is not None}
