"""Reading patch files: JSON and YAML, and one-line errors naming the file, the op and the field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_backtest.errors import InputError
from agent_backtest.patch.ops import EditParameter, ReplaceText, load_patch

REFUND = {
    "id": "refund-rule",
    "target": "system",
    "action": "replace",
    "find": "within 24 hours",
    "replace": "within 48 hours",
}


def write(tmp_path: Path, data: Any, name: str = "patch.json") -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def error_of(tmp_path: Path, data: Any, name: str = "patch.json") -> str:
    path = write(tmp_path, data, name)
    with pytest.raises(InputError) as caught:
        load_patch(path)
    text = str(caught.value)
    assert text.startswith(str(path)) and "\n" not in text
    return text.removeprefix(f"{path}: ")


def test_json_and_yaml_give_the_same_patch(tmp_path: Path) -> None:
    from_json = load_patch(write(tmp_path, {"schema": "abt.patch/1", "ops": [REFUND]}))
    from_yaml = load_patch(
        write(
            tmp_path,
            (
                "schema: abt.patch/1\n"
                "ops:\n"
                "  - id: refund-rule\n"
                "    target: system\n"
                "    action: replace\n"
                "    find: within 24 hours\n"
                "    replace: within 48 hours\n"
            ),
            "patch.yaml",
        )
    )
    assert from_json == from_yaml
    assert isinstance(from_json.ops[0], ReplaceText)


def test_the_written_copy_loads_as_the_same_patch(tmp_path: Path) -> None:
    edit = {
        "id": "e",
        "target": "parameter",
        "action": "edit",
        "tool": "t",
        "parameter": "p",
        "default": None,
    }
    patch = load_patch(write(tmp_path, {"schema": "abt.patch/1", "ops": [REFUND, edit]}))
    copy = load_patch(write(tmp_path, patch.to_json().decode(), "copy.json"))
    assert copy == patch
    # A null default was given: it must stay "given", not become "absent", in the copy.
    assert isinstance(copy.ops[1], EditParameter) and "default" in copy.ops[1].model_fields_set


@pytest.mark.parametrize(
    ("op", "expected"),
    [
        (
            {**REFUND, "target": "sytem"},
            "ops[0] (id 'refund-rule'): target 'sytem' is not one of: system, developer, "
            "instructions, "
            "messages, tool, parameter, params, model",
        ),
        (
            {**REFUND, "action": "replac"},
            "ops[0] (id 'refund-rule'): target 'system' takes action append, prepend, replace, "
            "set; "
            "not 'replac'",
        ),
        (
            {k: v for k, v in {**REFUND, "fnd": "x"}.items() if k != "find"},
            "ops[0] (id 'refund-rule') field fnd: unknown field (a typo?)",
        ),
        (
            {**REFUND, "find": "(", "regex": True},
            "ops[0] (id 'refund-rule'): find is not a valid regular expression: missing ), "
            "unterminated subpattern at position 0",
        ),
        (
            {**REFUND, "count": 0},
            "ops[0] (id 'refund-rule') field count: Input should be greater than or equal to 1",
        ),
        (
            {"id": "m", "target": "model", "action": "set", "model": "gpt-4o"},
            "ops[0] (id 'm') field model: 'gpt-4o' is not provider/model "
            "(e.g. openai/gpt-4.1-mini)",
        ),
        (
            {"id": "s", "target": "params", "action": "set", "name": "seed", "value": 1},
            "ops[0] (id 's') field name: seed is not a request parameter a patch can set: the seed "
            "comes from --seed",
        ),
        (
            {"id": "e", "target": "parameter", "action": "edit", "tool": "t", "parameter": "p"},
            "ops[0] (id 'e'): give at least one of enum, required, default, unset",
        ),
        (
            {"id": "a", "target": "tool", "action": "add", "definition": {"nam": "x"}},
            "ops[0] (id 'a') field definition.nam: unknown field (a typo?)",
        ),
        ("remove get_user", "ops[0]: an op is an object with id, target and action"),
    ],
)
def test_op_errors_name_the_op_and_field(tmp_path: Path, op: Any, expected: str) -> None:
    assert error_of(tmp_path, {"schema": "abt.patch/1", "ops": [op]}) == expected


def test_patch_level_errors(tmp_path: Path) -> None:
    assert error_of(tmp_path, {"ops": [REFUND]}) == "schema: required field missing"
    assert (
        error_of(tmp_path, {"schema": "abt.patch/1", "ops": []})
        == "ops: List should have at least 1 item after validation, not 0"
    )
    assert (
        error_of(tmp_path, {"schema": "abt.patch/1", "ops": [REFUND, REFUND]})
        == "op id 'refund-rule' is used twice: ids name ops in results"
    )
    assert error_of(tmp_path, [REFUND]).startswith("not a patch: expected an object")


def test_syntax_errors_give_line_and_column(tmp_path: Path) -> None:
    assert (
        error_of(tmp_path, '{"schema": "abt.patch/1",\n "ops": [,]}')
        == "line 2, column 10: not valid JSON: unexpected character, expected a JSON value "
        "(a .yaml/.yml file is read as YAML)"
    )
    assert (
        error_of(tmp_path, "schema: abt.patch/1\nops:\n  - id: [x\n", "p.yml")
        == "line 4, column 1: not valid YAML: expected ',' or ']', but got '<stream end>'"
    )


def test_a_missing_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read the patch"):
        load_patch(tmp_path / "nope.json")
