"""Trace backends as functions: receive OTLP (``collect``), pull traces from Phoenix or Langfuse
(``pull_phoenix``, ``pull_langfuse``), push a run's verdicts onto Phoenix spans
(``push_phoenix``) and send a replay as OpenTelemetry GenAI spans (``push_otlp``).

Each checks its arguments before it opens a socket or a file, and raises
:class:`agent_backtest.errors.UserError` naming the parameter at fault.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from agent_backtest.api.options import PathLike
from agent_backtest.backends import DEFAULT_MAX_REQUEST_BYTES
from agent_backtest.errors import UserError
from agent_backtest.exports import lazy_exports

# The receiver (an HTTP server) and the pull state (a pydantic record) load with the function
# that uses them: the commands import this module to print their help.
if TYPE_CHECKING:
    from agent_backtest.backends.otlp_receiver import ReceiverCounts
    from agent_backtest.backends.replay_spans import ReplayedCall
    from agent_backtest.backends.rest_client import RestClient

__all__ = [
    "DEFAULT_MAX_REQUEST_BYTES",
    "PullOutcome",
    "PushOutcome",
    "ReceiverCounts",
    "collect",
    "pull_langfuse",
    "pull_phoenix",
    "push_otlp",
    "push_phoenix",
]

STOP_POLL_SECONDS = 0.2
LARGEST_PAGE = 1000


def collect(
    listen: str,
    out: PathLike,
    stop: threading.Event,
    *,
    max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
    on_listening: Callable[[str], None] | None = None,
) -> ReceiverCounts:
    """Receive OTLP/HTTP traces on ``listen`` (``HOST:PORT``) and append each request to
    ``out`` as one OTLP/JSON line, until ``stop`` is set; what was received and refused.

    ``on_listening`` is called with the URL exporters send to once the port is bound (port 0
    binds a free one)."""
    from agent_backtest.backends.otlp_receiver import OtlpReceiver, parse_listen

    host, port = parse_listen(listen)
    if max_request_bytes < 1:
        raise UserError("must be at least 1 byte", "max_request_bytes")
    receiver = OtlpReceiver(host, port, Path(out), max_request_bytes)
    receiver.start()
    try:
        if on_listening is not None:
            on_listening(receiver.url)
        while not stop.wait(STOP_POLL_SECONDS):
            pass
    finally:
        receiver.stop()
    return receiver.counts


@dataclass(frozen=True)
class PullOutcome:
    """What a pull wrote: records (spans or traces) in all, of which this call added some."""

    output: Path
    records: int
    added: int
    resumed: bool
    state_file: Path


@dataclass(frozen=True)
class PushOutcome:
    """What a push wrote: annotations, and the units left without one by reason."""

    run_id: str
    annotations: int
    left_out: dict[str, int]


def pull_phoenix(
    endpoint: str,
    project: str,
    output: PathLike,
    *,
    since: datetime | str | None = None,
    until: datetime | str | None = None,
    page_size: int = 500,
    requests_per_second: float = 5.0,
    api_key: str | None = None,
) -> PullOutcome:
    """Pull the spans of Phoenix ``project`` (started in [``since``, ``until``)) into
    ``output`` as OTLP/JSON lines; an unfinished pull into the same file resumes from its
    saved cursor. The key is ``api_key``, else ``$PHOENIX_API_KEY`` (none for a Phoenix
    without authentication)."""
    from agent_backtest.backends import pull_state
    from agent_backtest.backends.phoenix_spans import pull_spans
    from agent_backtest.backends.rest_client import check_endpoint

    out, start, end = Path(output), _moment(since, "since"), _moment(until, "until")
    _check_paging(page_size, requests_per_second)
    if not project or any(char in project for char in "/?#"):
        raise UserError(f"{project!r} is not a project name: name one Phoenix lists", "project")
    endpoint = check_endpoint(endpoint)
    source = {"service": "phoenix", "endpoint": endpoint, "project": project}
    source |= {"since": _text(start), "until": _text(end)}
    state = pull_state.start(out, source)
    before, resumed = state.records, state.position is not None or state.complete
    hint = "(Settings → API keys)"
    with _phoenix(endpoint, api_key, requests_per_second, hint) as client:
        state = pull_spans(client, project, out, state, since=start, until=end, page_size=page_size)
    return PullOutcome(
        out, state.records, state.records - before, resumed, pull_state.state_path(out)
    )


def pull_langfuse(
    output: PathLike,
    *,
    endpoint: str | None = None,
    since: datetime | str | None = None,
    until: datetime | str | None = None,
    page_size: int = 50,
    requests_per_second: float = 5.0,
) -> PullOutcome:
    """Pull Langfuse traces (with a timestamp in [``since``, ``until``)) and their
    observations into ``output``, one ``{trace, observations}`` export per line; an
    unfinished pull into the same file resumes from its saved page. The keys are
    ``$LANGFUSE_PUBLIC_KEY`` and ``$LANGFUSE_SECRET_KEY``; the endpoint ``endpoint``, else
    ``$LANGFUSE_HOST`` or ``$LANGFUSE_BASE_URL``."""
    from agent_backtest.backends import pull_state
    from agent_backtest.backends.langfuse_traces import (
        HOST_VARIABLES,
        PUBLIC_KEY_VARIABLE,
        SECRET_KEY_VARIABLE,
        pull_traces,
    )
    from agent_backtest.backends.rest_client import RestClient, check_endpoint

    out, start = Path(output), _moment(since, "since")
    _check_paging(page_size, requests_per_second)
    endpoint = endpoint or next((os.environ[v] for v in HOST_VARIABLES if os.environ.get(v)), "")
    if not endpoint:
        raise UserError(
            f"name the Langfuse URL with --endpoint or set {HOST_VARIABLES[0]}", "endpoint"
        )
    endpoint = check_endpoint(endpoint)
    public, secret = os.environ.get(PUBLIC_KEY_VARIABLE), os.environ.get(SECRET_KEY_VARIABLE)
    if not public or not secret:
        raise UserError(
            f"no Langfuse keys: set {PUBLIC_KEY_VARIABLE} and {SECRET_KEY_VARIABLE} (the "
            "project's API keys)"
        )
    source = {"service": "langfuse", "endpoint": endpoint, "since": _text(start)}
    end = _moment(until, "until")
    earlier = pull_state.saved(out) if end is None else None
    if earlier is not None:  # a resume keeps the window the pull started with
        end = _moment(earlier.source.get("until"), "until")
    end = end or datetime.now(UTC)
    state = pull_state.start(out, source | {"until": _text(end)})
    before, resumed = state.records, state.position is not None or state.complete
    hint = f"set {PUBLIC_KEY_VARIABLE} and {SECRET_KEY_VARIABLE} to a key pair of this project"
    with RestClient(
        "Langfuse",
        endpoint,
        auth=(public, secret),
        requests_per_second=requests_per_second,
        key_hint=hint,
        secrets=(public, secret),
    ) as client:
        state = pull_traces(client, out, state, since=start, until=end, page_size=page_size)
    return PullOutcome(
        out, state.records, state.records - before, resumed, pull_state.state_path(out)
    )


def push_phoenix(
    run: PathLike,
    endpoint: str,
    *,
    requests_per_second: float = 5.0,
    api_key: str | None = None,
) -> PushOutcome:
    """Write each scored unit's verdict of the replay run at ``run`` as an ``abt.agreement``
    annotation on its production span in the Phoenix at ``endpoint``; a second push of the
    same run updates them. The key is ``api_key``, else ``$PHOENIX_API_KEY``."""
    from agent_backtest.backends.phoenix_annotations import push_annotations
    from agent_backtest.backends.rest_client import check_endpoint
    from agent_backtest.backends.run_verdicts import run_verdicts

    endpoint = check_endpoint(endpoint)
    _check_paging(1, requests_per_second)
    _replay_only(Path(run), "phoenix")
    verdicts = run_verdicts(Path(run))
    with _phoenix(endpoint, api_key, requests_per_second, "that may write annotations") as client:
        written = push_annotations(client, verdicts)
    return PushOutcome(verdicts.run_id, written, dict(sorted(verdicts.left_out.items())))


@dataclass(frozen=True)
class SpansPushOutcome:
    """What a push of spans sent: the run, and its spans, of which some beside production's."""

    run_id: str
    spans: int
    linked: int
    """Spans put in production's trace, as children of the production span."""
    url: str


SPANS_PER_REQUEST = 200
HEADERS_VARIABLE = "OTEL_EXPORTER_OTLP_HEADERS"


def push_otlp(
    run: PathLike,
    endpoint: str,
    *,
    requests_per_second: float = 5.0,
    headers: dict[str, str] | None = None,
) -> SpansPushOutcome:
    """Send every replayed call of the run at ``run`` to the OTLP/HTTP receiver at
    ``endpoint`` (``…/v1/traces`` is added unless given) as a GenAI ``chat`` span in OTLP/JSON,
    beside the production span it replays when the unit knows it (see
    :mod:`agent_backtest.backends.replay_spans`). ``headers`` go with each request, else those
    of ``$OTEL_EXPORTER_OTLP_HEADERS`` (``key=value,…``)."""
    from agent_backtest.backends.otlp_receiver import TRACES_PATH  # the path collect serves
    from agent_backtest.backends.replay_spans import chunks, production_ids, spans_request
    from agent_backtest.backends.rest_client import RestClient, check_endpoint

    endpoint = check_endpoint(endpoint)
    _check_paging(1, requests_per_second)
    base = endpoint.removesuffix(TRACES_PATH)  # the receiver's, whether or not the path was given
    url = f"{base}{TRACES_PATH}"
    calls = list(_replayed_calls(Path(run)))
    run_id = Path(run).resolve().name
    sent = headers if headers is not None else _otlp_headers(os.environ.get(HEADERS_VARIABLE))
    hint = f"set {HEADERS_VARIABLE} to the headers the receiver wants (key=value,…)"
    with RestClient(
        "OTLP receiver",
        base,
        headers=sent,
        requests_per_second=requests_per_second,
        key_hint=hint,
        secrets=tuple(sent.values()),
    ) as client:
        for part in chunks(calls, SPANS_PER_REQUEST):
            answer = client.post(TRACES_PATH, spans_request(part, run_id))
            if answer.status_code == 404:
                raise UserError(
                    f"{url} answered 404: no OTLP/HTTP receiver there; name the "
                    "receiver's base URL, such as http://127.0.0.1:4318",
                    "endpoint",
                )
    linked = sum(1 for call in calls if production_ids(call) is not None)
    return SpansPushOutcome(run_id, len(calls), linked, url)


def _otlp_headers(text: str | None) -> dict[str, str]:
    """``key=value,…`` (values URL-encoded, as the OTLP exporter's variable holds them)."""
    from urllib.parse import unquote

    headers = {}
    for item in (text or "").split(","):
        key, equals, value = item.partition("=")
        if not item.strip():
            continue
        if not equals or not key.strip():
            raise UserError(f"{HEADERS_VARIABLE} holds {item!r}, not key=value", "headers")
        headers[key.strip()] = unquote(value.strip())
    return headers


def _replayed_calls(path: Path) -> Iterator[ReplayedCall]:
    """Each result of the replay run at ``path``, with the request as it was sent (the run's
    patch applied), production's ids and start, and its score when the run is scored."""
    from agent_backtest.backends.replay_spans import ReplayedCall
    from agent_backtest.replaying.run import load_run_patch
    from agent_backtest.runs import RunDirectory, read_results

    _replay_only(path, "otlp")
    directory = RunDirectory(path)
    manifest = directory.load_manifest()
    if not directory.results_path.exists():
        raise UserError(f"{path} has no results yet: abt replay --resume {path}")
    patch = load_run_patch(directory, manifest.config.patch) if manifest.config.patch else None
    units = {unit.unit_id: unit for unit in directory.read_units()}
    scores = {}
    if directory.is_scored():
        for score in directory.read_scores():  # the first record of a pair wins
            scores.setdefault((score.unit_id, score.repeat), score)
    for result in read_results(directory.results_path):
        unit = units.get(result.unit_id)
        if unit is None:
            continue
        request = patch.apply(unit).request if patch is not None else unit.request
        yield ReplayedCall(
            request=request,
            result=result,
            production_trace_id=unit.trace_id,
            production_span_id=unit.step_id if unit.trace_id else None,
            started_at=unit.started_at or manifest.created_at,
            score=scores.get((result.unit_id, result.repeat)),
        )


PHOENIX_SCHEME = "phoenix://"


def phoenix_input(url: str, out: Path) -> Path:
    """The spans of ``phoenix://HOST:PORT/PROJECT``, pulled (over http) into
    ``OUT.phoenix.jsonl`` beside the run directory ``out``: a replay's input. A pull already
    made there is resumed or, when complete, read as it is."""
    from agent_backtest.backends import pull_state

    address, slash, project = url.removeprefix(PHOENIX_SCHEME).partition("/")
    if not address or not slash or not project or "/" in project:
        raise UserError(
            f"{url!r} is not phoenix://HOST:PORT/PROJECT, such as "
            "phoenix://127.0.0.1:6006/my-agent",
            "inputs",
        )
    traces = out.with_name(f"{out.name}.phoenix.jsonl")
    traces.parent.mkdir(parents=True, exist_ok=True)
    try:
        pull_phoenix(f"http://{address}", project, traces)
    except UserError as error:
        if traces.exists() and not traces.stat().st_size and not pull_state.saved(traces):
            traces.unlink()  # nothing pulled: nothing left behind
        raise UserError(f"{url}: {error.message}", "inputs") from None
    return traces


def _replay_only(path: Path, to: str) -> None:
    """``path`` holds a replay run: simulate and bench runs have no production spans to go to."""
    from agent_backtest.runs.manifest_base import run_kind

    kind = run_kind(path)
    if kind != "replay":
        raise UserError(
            f"{path} is a {kind} run: push --to {to} sends a replay run, whose units came from "
            f"production spans (a {kind} run plays its own conversations)"
        )


def _phoenix(
    endpoint: str, api_key: str | None, requests_per_second: float, which_key: str
) -> RestClient:
    """A client of the Phoenix at ``endpoint``, with the key given or ``PHOENIX_API_KEY`` (if
    any); ``which_key`` says, in a refusal, what key is wanted."""
    from agent_backtest.backends.phoenix_spans import KEY_VARIABLE
    from agent_backtest.backends.rest_client import RestClient

    key = api_key or os.environ.get(KEY_VARIABLE) or ""
    return RestClient(
        "Phoenix",
        endpoint,
        headers={"Authorization": f"Bearer {key}"} if key else {},
        requests_per_second=requests_per_second,
        key_hint=f"set {KEY_VARIABLE} to a key of this Phoenix {which_key}",
        secrets=(key,),
    )


def _moment(value: datetime | str | None, parameter: str) -> datetime | None:
    """An ISO 8601 date or time as an aware datetime (UTC when it names no zone)."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            raise UserError(
                f"{value!r} is not an ISO 8601 time, such as 2026-05-01 or 2026-05-01T12:00Z",
                parameter,
            ) from None
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def _text(moment: datetime | None) -> str | None:
    return moment.astimezone(UTC).isoformat() if moment is not None else None


def _check_paging(page_size: int, requests_per_second: float) -> None:
    if not 1 <= page_size <= LARGEST_PAGE:
        raise UserError(f"must be between 1 and {LARGEST_PAGE}", "page_size")
    if requests_per_second <= 0:
        raise UserError("must be above 0", "requests_per_second")


# ReceiverCounts, what collect returns, is still importable from here: with its module, on use.
__getattr__ = lazy_exports({"ReceiverCounts": "agent_backtest.backends.otlp_receiver"}, globals())
