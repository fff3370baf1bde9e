"""The OTLP/JSON reader: the spec's example, the proto JSON spellings, streaming, errors."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from agent_backtest.errors import InputError, RecordError
from agent_backtest.formats import otlp
from agent_backtest.formats.base import ReadOptions, SkipLog
from tests.conftest import FIXTURES
from tests.formats.otlp_json import b64, span, traces_data, write_document, write_lines

CANONICAL = FIXTURES / "traces" / "otlp_canonical_trace.json"


def read(path: Path, strict: bool = False) -> tuple[list, SkipLog]:
    skips = SkipLog(str(path), strict=strict)
    return list(otlp.read(path, ReadOptions(), skips)), skips


def trace_id(n: int) -> str:
    return f"{n:032x}"


def span_id(n: int) -> str:
    return f"{n:016x}"


def test_canonical_example_is_one_session_with_one_other_step() -> None:
    assert otlp.sniff(CANONICAL.read_text(), CANONICAL)
    (session,), skips = read(CANONICAL)
    assert not skips.counts
    assert session.id == "5b8efff798038103d269b633813fc60c"  # upper-case hex, normalised
    (step,) = session.steps()
    assert step.kind == "other"
    assert step.id == "eee19b7ec3c1b174" and step.parent_id == "eee19b7ec3c1b173"
    assert step.name == "I'm a server span"
    assert step.started_at == datetime(2018, 12, 13, 14, 51, 0, tzinfo=UTC)
    assert step.ended_at == datetime(2018, 12, 13, 14, 51, 1, tzinfo=UTC)
    assert step.status is None  # no status recorded
    assert step.attributes == {"my.span.attr": "some value"}
    assert session.agent.name == "my.service"
    assert session.source.format == "otlp"


def test_sniff_rejects_other_json() -> None:
    assert not otlp.sniff('{"trace": {}, "observations": []}', Path("x.json"))


def test_ids_in_hex_or_base64() -> None:
    assert (
        otlp.decode_id("5B8EFFF798038103D269B633813FC60C", 16, "traceId")
        == "5b8efff798038103d269b633813fc60c"
    )
    assert (
        otlp.decode_id("W47/95gDgQPSabYzgT/GDA==", 16, "traceId")
        == "5b8efff798038103d269b633813fc60c"
    )
    assert otlp.decode_id("7uGbfsPBsXQ=", 8, "spanId") == "eee19b7ec3c1b174"
    with pytest.raises(RecordError):
        otlp.decode_id("not-an-id", 8, "spanId")


def test_time_zero_or_missing_is_none() -> None:
    assert otlp.decode_time("0", "t") is None
    assert otlp.decode_time(None, "t") is None
    assert otlp.decode_time(1544712660000000000, "t") == datetime(2018, 12, 13, 14, 51, tzinfo=UTC)
    with pytest.raises(RecordError):
        otlp.decode_time("yesterday", "t")


def test_any_values_become_plain_values() -> None:
    raw = {
        "kvlistValue": {
            "values": [
                {"key": "n", "value": {"intValue": "9007199254740993"}},
                {"key": "x", "value": {"doubleValue": 0.5}},
                {"key": "ok", "value": {"boolValue": True}},
                {"key": "list", "value": {"arrayValue": {"values": [{"stringValue": "a"}, {}]}}},
                {"key": "raw", "value": {"bytesValue": "3q2+7w=="}},
            ]
        }
    }
    assert otlp.any_value(raw) == {
        "n": 9007199254740993,
        "x": 0.5,
        "ok": True,
        "list": ["a", None],
        "raw": "3q2+7w==",
    }


def test_secrets_are_not_kept(tmp_path: Path) -> None:
    raw = span(
        trace_id(1),
        span_id(1),
        "POST",
        {
            "http.request.header.authorization": "Bearer abc.def",
            "openai.api_key": "sk-abcdefabcdefabcdefabcdef",
            "custom.note": "Bearer eyJhbGciOi",
            "gen_ai.usage.input_tokens": 5,
            "http.method": "POST",
        },
    )
    (session,), _ = read(write_document(tmp_path / "t.json", traces_data([raw])))
    assert session.steps()[0].attributes == {"gen_ai.usage.input_tokens": 5, "http.method": "POST"}


def test_session_id_groups_traces_into_turns(tmp_path: Path) -> None:
    def chat(trace: int, start: int, text: str) -> dict:
        return span(
            trace_id(trace),
            span_id(trace),
            "chat",
            {
                "gen_ai.operation.name": "chat",
                "session.id": "conv-7",
                "gen_ai.input.messages": json.dumps(
                    [{"role": "user", "parts": [{"type": "text", "content": text}]}]
                ),
                "gen_ai.output.messages": json.dumps(
                    [{"role": "assistant", "parts": [{"type": "text", "content": "ok " + text}]}]
                ),
            },
            start_ms=start,
        )

    path = write_lines(
        tmp_path / "t.jsonl",
        [traces_data([chat(2, 50, "second")]), traces_data([chat(1, 0, "first")])],
    )
    (session,), _ = read(path)
    assert session.id == "conv-7"
    assert [turn.user_input for turn in session.turns] == ["first", "second"]
    assert [turn.agent_output for turn in session.turns] == ["ok first", "ok second"]
    assert session.metadata["trace_ids"] == [trace_id(1), trace_id(2)]


def test_steps_ordered_by_start_untimed_last_in_file_order(tmp_path: Path) -> None:
    spans = [
        span(trace_id(1), span_id(n), f"s{n}", {}, start_ms=start)
        for n, start in ((1, 30), (2, 10), (3, 20))
    ]
    for n in (4, 5):
        untimed = span(trace_id(1), span_id(n), f"s{n}", {})
        del untimed["startTimeUnixNano"]
        spans.insert(0 if n == 4 else 2, untimed)
    (session,), _ = read(write_document(tmp_path / "t.json", traces_data(spans)))
    assert [step.name for step in session.steps()] == ["s2", "s3", "s1", "s4", "s5"]
    assert session.steps()[3].started_at is None


# --- streaming ---------------------------------------------------------------------------------


def split_traces_file(path: Path, traces: int) -> Path:
    """Each trace's root on one line and its child three lines later."""
    roots = [
        traces_data([span(trace_id(n), span_id(1), f"root {n}", {}, start_ms=n)])
        for n in range(1, traces + 1)
    ]
    children = [
        traces_data(
            [span(trace_id(n), span_id(2), f"child {n}", {}, parent=span_id(1), start_ms=n + 1)]
        )
        for n in range(1, traces + 1)
    ]
    lines = []
    for n in range(traces):
        lines.append(roots[n])
        if n >= 3:
            lines.append(children[n - 3])
    lines.extend(children[traces - 3 :])
    return write_lines(path, lines)


def test_sessions_split_across_lines_come_out_complete_once(tmp_path: Path) -> None:
    sessions, skips = read(split_traces_file(tmp_path / "t.jsonl", 40))
    assert not skips.counts
    assert sorted(s.id for s in sessions) == sorted(trace_id(n) for n in range(1, 41))
    for session in sessions:
        n = int(session.id, 16)
        assert [step.name for step in session.steps()] == [f"root {n}", f"child {n}"]
        assert session.steps()[1].parent_id == span_id(1)


def test_sessions_are_yielded_before_the_end_of_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = split_traces_file(tmp_path / "t.jsonl", 40)
    total = len(path.read_text().splitlines())
    passes: list[int] = []  # lines parsed so far, per pass over the file
    original = otlp.iter_json_lines

    def counting(p: Path, **options: bool):
        passes.append(0)
        for item in original(p, **options):
            passes[-1] += 1
            yield item

    monkeypatch.setattr(otlp, "iter_json_lines", counting)
    sessions = otlp.read(path, ReadOptions(), SkipLog(str(path)))
    first = next(sessions)
    assert first.id == trace_id(1)
    assert passes == [5]  # trace 1 ends on line 5: its session left right after it
    rest = list(sessions)
    assert len(rest) == 39 and passes == [total]  # every line parsed once


# --- errors ------------------------------------------------------------------------------------


def test_ids_and_keys_written_with_escapes_still_end_sessions_where_they_end(
    tmp_path: Path,
) -> None:
    # The last line of each trace is found from the bytes; escapes must not hide a trace there.
    path = split_traces_file(tmp_path / "t.jsonl", 12)
    lines = path.read_text().splitlines()
    escaped_id = json.dumps(trace_id(2)).replace("0", "\\u0030")
    lines[6] = lines[6].replace(json.dumps(trace_id(2)), escaped_id)  # trace 2's child
    lines[8] = lines[8].replace('"traceId"', '"tr\\u0061ceId"')  # trace 3's child
    assert lines[6].count(escaped_id) == 1 and '"tr\\u0061ceId"' in lines[8]
    path.write_text("\n".join(lines) + "\n")
    sessions, skips = read(path)
    assert not skips.counts
    assert sorted(s.id for s in sessions) == sorted(trace_id(n) for n in range(1, 13))
    assert all(len(session.steps()) == 2 for session in sessions)


def test_a_span_link_does_not_move_where_the_trace_it_names_ends(tmp_path: Path) -> None:
    path = split_traces_file(tmp_path / "t.jsonl", 8)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    last = lines[-1]["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    last["links"] = [{"traceId": trace_id(1), "spanId": span_id(1)}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    sessions, _ = read(path)
    assert [s.id for s in sessions] == [trace_id(n) for n in range(1, 9)]


def test_a_base64_id_with_escaped_slashes_is_the_same_trace(tmp_path: Path) -> None:
    whole = "ff" * 16  # its base64 holds slashes, which JSON may write as \/
    escaped = b64(whole).replace("/", "\\/")
    root = span(whole, span_id(1), "root", {}, start_ms=1)
    child = span(whole, span_id(2), "child", {}, parent=span_id(1), start_ms=2)
    other = span(trace_id(5), span_id(3), "other", {}, start_ms=3)
    lines = [traces_data([root]), traces_data([other]), traces_data([child])]
    path = write_lines(tmp_path / "t.jsonl", lines)
    text = path.read_text().replace(json.dumps(whole), json.dumps(b64(whole)), 2)
    index = text.rindex(json.dumps(b64(whole)))
    text = text[:index] + '"' + escaped + '"' + text[index + len(json.dumps(b64(whole))) :]
    path.write_text(text)
    assert "\\/" in text.splitlines()[2]
    sessions, skips = read(path)
    assert not skips.counts
    assert [(s.id, len(s.steps())) for s in sessions] == [(trace_id(5), 1), (whole, 2)]


def test_an_attribute_value_nested_too_deep_is_refused_with_its_line_and_path(
    tmp_path: Path,
) -> None:
    deep: object = "bottom"
    for _ in range(60):
        deep = [deep]
    spans = [
        span(trace_id(1), span_id(1), "root", {"x": "y"}),
        span(trace_id(1), span_id(2), "deep", {"nested": deep}),
    ]
    path = write_lines(tmp_path / "t.jsonl", [traces_data(spans[:1]), traces_data(spans[1:])])
    with pytest.raises(InputError) as caught:
        read(path)
    assert caught.value.message == "value too deep: nested more than 128 levels"
    assert caught.value.location is not None
    assert caught.value.location.startswith(
        "line 2 $.resourceSpans[0].scopeSpans[0].spans[0].attributes[0]"
    )


def test_invalid_json_line_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(
        json.dumps(traces_data([span(trace_id(1), span_id(1), "a", {})])) + "\n{not json\n"
    )
    with pytest.raises(InputError) as error:
        read(path)
    assert str(path) in str(error.value) and "line 2" in str(error.value)


def test_line_of_the_wrong_shape(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "shape.jsonl",
        [traces_data([span(trace_id(1), span_id(1), "a", {})]), {"spans": []}],
    )
    with pytest.raises(InputError) as error:
        read(path)
    assert "line 2" in str(error.value) and "resourceSpans" in str(error.value)


def test_document_of_the_wrong_shape(tmp_path: Path) -> None:
    path = tmp_path / "shape.json"
    path.write_text('[\n  {"resourceSpans": []}\n]\n')
    with pytest.raises(InputError, match="resourceSpans"):
        read(path)


def test_mistyped_and_missing_fields_are_skipped_by_reason(tmp_path: Path) -> None:
    good = span(trace_id(1), span_id(1), "good", {})
    mistyped = span(trace_id(1), "00f067aa0ba902b7", "bad time", {})
    mistyped["startTimeUnixNano"] = "yesterday"
    missing = span(trace_id(1), span_id(3), "no trace", {})
    del missing["traceId"]
    path = write_lines(tmp_path / "t.jsonl", [traces_data([good, mistyped, missing])])
    (session,), skips = read(path)
    assert [step.name for step in session.steps()] == ["good"]
    assert skips.counts == {"mistyped_field": 1, "missing_field": 1}
    locations = [example.location for example in skips.examples]
    assert "line 1, span 00f067aa0ba902b7" in locations
    with pytest.raises(InputError, match="mistyped_field"):
        read(path, strict=True)


def test_history_not_recorded_is_skipped(tmp_path: Path) -> None:
    raw = span(
        trace_id(1),
        span_id(1),
        "chat",
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.conversation.id": "resp_elsewhere",
            "gen_ai.input.messages": json.dumps(
                [
                    {
                        "role": "tool",
                        "parts": [{"type": "tool_call_response", "id": "call_1", "response": "42"}],
                    }
                ]
            ),
            "gen_ai.output.messages": json.dumps(
                [{"role": "assistant", "parts": [{"type": "text", "content": "It is 42."}]}]
            ),
        },
    )
    other = span(trace_id(1), span_id(2), "other", {}, start_ms=10)
    sessions, skips = read(write_document(tmp_path / "t.json", traces_data([raw, other])))
    assert skips.counts == {"history_not_recorded": 1}
    assert [step.kind for step in sessions[0].steps()] == ["other"]
