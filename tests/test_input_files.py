"""The one reader of every file abt is given besides traces: what it opens, what it refuses,
and the hostile files of the hardening probe (alias bombs, deep TOML, huge integers, lone
surrogates, pipes), each through the loader that once let it through."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from agent_backtest import input_files
from agent_backtest.errors import InputError
from agent_backtest.formats.tools_file import load_tools_file
from agent_backtest.input_files import (
    has_long_number,
    load_json,
    load_toml,
    load_yaml,
    open_binary,
    read_bytes,
    read_text,
)
from agent_backtest.patch.ops import load_patch
from agent_backtest.simulate.capabilities import read_capabilities
from agent_backtest.simulate.flows import read_flows
from agent_backtest.units.agent_config import load_agent_config

# Nine levels of nine aliases: under 500 bytes standing for 9**9 strings.
ALIAS_BOMB = "\n".join(
    ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    + [f"a{n}: &a{n} [{','.join([f'*a{n - 1}'] * 9)}]" for n in range(1, 9)]
)


def refusal(call, *args) -> InputError:  # type: ignore[no-untyped-def]
    with pytest.raises(InputError) as error:
        call(*args)
    assert "\n" not in str(error.value)
    return error.value


def refused_without_blocking(call, *args) -> InputError:  # type: ignore[no-untyped-def]
    """:func:`refusal` of ``call``, made in a thread of its own so that a read blocked on a
    pipe fails the test instead of hanging it."""
    result: list[InputError] = []
    worker = threading.Thread(target=lambda: result.append(refusal(call, *args)), daemon=True)
    worker.start()
    worker.join(60)
    assert not worker.is_alive(), "blocked on the pipe"
    return result[0]


def test_a_named_pipe_is_refused_at_once_without_blocking(tmp_path: Path) -> None:
    pipe = tmp_path / "abt.toml"
    os.mkfifo(pipe)
    error = refused_without_blocking(load_toml, pipe, "config")
    assert str(error) == f"{pipe}: is a named pipe, not a config: give a regular file"


def test_a_pipe_put_in_place_after_the_check_still_cannot_block(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The check sees a regular file, then a named pipe takes its place before the open:
    # open_binary opens without blocking and checks the opened file again.
    path = tmp_path / "flows.jsonl"
    path.write_text("{}\n", encoding="utf-8")
    check = input_files.checked_regular_file

    def check_then_swap(checked: Path, what: str = "file") -> os.stat_result:
        status = check(checked, what)
        checked.unlink()
        os.mkfifo(checked)
        return status

    monkeypatch.setattr(input_files, "checked_regular_file", check_then_swap)
    assert "named pipe" in str(refused_without_blocking(open_binary, path))


def test_a_device_a_folder_and_a_missing_file_are_one_line(tmp_path: Path) -> None:
    zero = tmp_path / "tools.json"
    zero.symlink_to("/dev/zero")
    assert "is a device, not a tools file" in str(refusal(load_json, zero, "tools file"))
    assert "is a folder, not a patch" in str(refusal(read_text, tmp_path, "patch"))
    missing = refusal(read_bytes, tmp_path / "nope.yaml", "flows file")
    assert missing.message == "cannot read the flows file: no such flows file; check the path"


def test_a_file_over_the_limit_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    big.write_bytes(b" " * 2048)
    assert "more than 1,024 bytes" in str(refusal(read_bytes, big, "file", 1024))
    assert read_bytes(big, "file", 2048) == b" " * 2048


def test_text_that_is_not_utf8_names_the_byte(tmp_path: Path) -> None:
    path = tmp_path / "owners.txt"
    path.write_bytes(b"model: the model\n\xff\xfe rest")
    error = refusal(read_text, path, "owners file")
    assert (error.location, error.message) == (
        "byte 17",
        "the owners file is not UTF-8 text: save it as UTF-8",
    )
    path.write_bytes(b"\xef\xbb\xbfmodel: x\n")  # a byte-order mark is no mistake
    assert read_text(path) == "model: x\n"


@pytest.mark.parametrize(
    ("name", "text", "problem"),
    [
        ("abt.toml", "a = " + "1" * 5000, "Exceeds the limit (4300 digits)"),
        ("abt.toml", "a = " + "{ b = " * 3000 + "1" + " }" * 3000, "nested more than 128 levels"),
        ("abt.toml", "a = " + "[" * 3000 + "]" * 3000, "nested more than 128 levels"),
        ("abt.toml", "[" + ".".join(["t"] * 300) + "]\nx = 1", "value too deep"),
        ("abt.toml", "a = 99999999999999999999", "an integer beyond 64 bits"),
        ("abt.toml", 'a = "x\x01y"', "Illegal character"),
        ("abt.toml", 'a = "\\ud800"', "not valid TOML"),
        ("abt.toml", "a = 1\na = 2", "Cannot overwrite a value"),
        ("patch.yaml", ALIAS_BOMB, "an alias of a node that holds aliases"),
        (
            "patch.yaml",
            "a: &x 1\n" + "".join(f"k{n}: *x\n" for n in range(101)),
            "more than 100 aliases",
        ),
        ("patch.yaml", "a: " + "[" * 300 + "]" * 300, "nested more than 128 levels"),
        ("patch.yaml", "a: " + "1" * 200, "an integer of more than 100 digits"),
        ("patch.yaml", "a: 99999999999999999999", "an integer beyond 64 bits"),
        ("patch.yaml", 'a: "\\ud800"', "a lone surrogate (\\ud800)"),
        ("patch.yaml", "a: b\x7f", "special characters are not allowed"),
        ("patch.yaml", "a: [1, 2", "not valid YAML"),
    ],
)
def test_every_toml_or_yaml_mistake_is_one_line(
    tmp_path: Path, name: str, text: str, problem: str
) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    load = load_toml if path.suffix == ".toml" else load_yaml
    assert problem in str(refusal(load, path))


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[" * 200 + "]" * 200, "value too deep: nested more than 128 levels"),
        ("[" * 5000 + "]" * 5000, "depth limit exceeded"),
        ("1" * 5000, "not valid JSON"),
        ('{"a": 18446744073709551616}', ""),  # orjson reads it as a float: no crash
        ('["\\ud800"]', "not valid JSON"),
        ('{"a": "x\x01"}', "not valid JSON"),
    ],
)
def test_json_past_the_limits_is_one_line(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "prices.json"
    path.write_text(text, encoding="utf-8")
    if not problem:
        assert load_json(path) == {"a": 1.8446744073709552e19}
        return
    assert problem in str(refusal(load_json, path))


def test_a_500_byte_alias_bomb_is_refused_in_a_patch_and_an_agent_config(tmp_path: Path) -> None:
    assert len(ALIAS_BOMB) < 500
    patch = tmp_path / "patch.yaml"
    patch.write_text(f"schema: abt.patch/1\n{ALIAS_BOMB}\nops: []\n", encoding="utf-8")
    assert "alias bomb" in str(refusal(load_patch, patch))
    config = tmp_path / "agent.yaml"
    bomb = ALIAS_BOMB.replace("\n", "\n  ")
    config.write_text(f"arg_defaults:\n  {bomb}\n", encoding="utf-8")
    assert "alias bomb" in str(refusal(load_agent_config, config))


def test_a_lone_surrogate_or_a_control_character_in_a_flow_is_one_line(tmp_path: Path) -> None:
    flows = tmp_path / "flows.yaml"
    flows.write_text('- id: a\n  family: f\n  turns:\n    - user: "hi \\ud83d"\n', encoding="utf-8")
    assert "lone surrogate" in str(refusal(read_flows, flows))
    flows.write_text("- id: a\n  family: f\x1b\n", encoding="utf-8")
    assert "not valid YAML: special characters are not allowed" in str(refusal(read_flows, flows))
    capabilities = tmp_path / "capabilities.yaml"
    capabilities.write_text("families:\x00\n", encoding="utf-8")
    error = refusal(read_capabilities, capabilities, set())
    assert "not valid YAML" in str(error) and error.location == "byte 9"


def test_tools_whose_parameters_are_no_json_schema_are_refused(tmp_path: Path) -> None:
    tools = tmp_path / "tools.json"
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": 1.5}
    tools.write_text(
        json.dumps([{"type": "function", "function": {"name": "f", "parameters": schema}}])
    )
    error = refusal(load_tools_file, tools)
    assert error.location == "$[0]"
    assert error.message == (
        "parameters of 'f': not a JSON Schema: ['required'] 1.5 is not of type 'array'"
    )
    schema["required"] = ["city"]
    tools.write_text(
        json.dumps([{"type": "function", "function": {"name": "f", "parameters": schema}}])
    )
    assert [tool.name for tool in load_tools_file(tools)] == ["f"]


def test_a_unit_holding_an_integer_beyond_64_bits_is_one_line(tmp_path: Path) -> None:
    from agent_backtest.api import build_units
    from agent_backtest.trace import dump_record
    from agent_backtest.units.io import read_units_file
    from tests.conftest import FIXTURES

    lines = [dump_record(unit) for unit in build_units(FIXTURES / "chat_log" / "example.jsonl")]
    lines[1] = lines[1].replace(b'"temperature":0.2', b'"temperature":' + b"9" * 30, 1)
    assert b"9" * 30 in lines[1]
    units = tmp_path / "units.jsonl"
    units.write_bytes(b"\n".join(lines) + b"\n")
    error = refusal(lambda: list(read_units_file(units)))
    assert error.location == "line 2 $.request.params.temperature"
    assert error.message == "an integer beyond 64 bits, which abt could not write back"
    lines[1] = lines[1].replace(b"9" * 30, b'"' + b"9" * 30 + b'"')  # text of digits is fine
    units.write_bytes(b"\n".join(lines) + b"\n")
    assert len(list(read_units_file(units))) == len(lines)


@pytest.mark.parametrize(
    ("data", "long"),
    [
        (b'{"a": 9223372036854775807}', False),  # the largest 64-bit integer: 19 digits
        (b'{"a": 18446744073709551616}', True),  # 20 digits, at any place in the text
        (b"12345678901234567890", True),
        (b'{"a": 1234567890.1234567890}', False),  # a dot splits the run
        (b'{"a": -1234567890123456789}', False),
        ("٣".encode() * 30, False),  # only ASCII digits count, not other scripts
        (b"", False),
    ],
)
def test_a_long_number_is_a_run_of_twenty_ascii_digits(data: bytes, long: bool) -> None:
    assert has_long_number(data) is long
