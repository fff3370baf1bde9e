"""Every patch op on real τ-bench requests: what it changes, what it leaves, and that the unit's
own request is never touched."""

from __future__ import annotations

from typing import Any

import pytest

from agent_backtest.patch.ops import PatchedRequest
from agent_backtest.trace import ContentPart, LLMRequest, Message, ToolDef, dump_record
from agent_backtest.units import Unit
from tests.patch.tau_units import first_unit, patch_of

POLICY_LINE = "All reservations can be cancelled within 24 hours of booking"


def apply(*ops: dict[str, Any], unit: Unit | None = None) -> PatchedRequest:
    """Apply the ops to a unit (the first τ-bench unit by default), checking it stays intact."""
    unit = unit or first_unit()
    before = dump_record(unit)
    patched = patch_of(*ops).apply(unit)
    assert dump_record(unit) == before, "the patch changed the unit's stored request"
    return patched


def system_text(request: LLMRequest) -> str:
    return request.messages[0].text()


def tool(request: LLMRequest, name: str) -> ToolDef:
    return next(t for t in request.tools or [] if t.name == name)


def op(**fields: Any) -> dict[str, Any]:
    return {"id": "op", **fields}


# -- messages -----------------------------------------------------------------------------------


def test_replace_literal_changes_the_policy_sentence_only() -> None:
    patched = apply(
        op(target="system", action="replace", find="within 24 hours", replace="within 48 hours")
    )
    original = system_text(first_unit().request)
    assert patched.ops == ("op",)
    assert system_text(patched.request) == original.replace("within 24 hours", "within 48 hours")
    assert patched.request.messages[1:] == first_unit().request.messages[1:]
    assert patched.request.tools == first_unit().request.tools


def test_replace_regex_uses_groups() -> None:
    patched = apply(
        op(
            target="system",
            action="replace",
            regex=True,
            find=r"within (\d+) hours of booking",
            replace=r"within \1 days of booking",
        )
    )
    assert "within 24 days of booking" in system_text(patched.request)


def test_replace_with_an_expected_count_leaves_a_message_with_another_count() -> None:
    # The sentence opens three sections of the policy: an expected count of 1 must not apply.
    text = system_text(first_unit().request)
    assert text.count("The agent must first obtain the user id") == 3
    patched = apply(
        op(
            target="system",
            action="replace",
            count=1,
            find="The agent must first obtain the user id",
            replace="X",
        )
    )
    assert not patched.changed
    assert patched.outcomes[0].note == "found 3 times in a message, expected 1"
    exact = apply(
        op(
            target="system",
            action="replace",
            count=3,
            find="The agent must first obtain the user id",
            replace="X",
        )
    )
    assert system_text(exact.request).count("X") - text.count("X") == 3


def test_replace_not_found_is_unchanged_with_a_note() -> None:
    patched = apply(op(target="system", action="replace", find="within 42 hours", replace="x"))
    assert not patched.changed and patched.request is first_unit().request
    assert patched.outcomes[0].state == "unchanged"
    assert patched.outcomes[0].note == "'within 42 hours' not found"


def test_replace_edits_text_parts_and_keeps_other_parts() -> None:
    unit = first_unit()
    parts = [
        ContentPart(type="text", text="Refunds within 24 hours."),
        ContentPart(type="image_url", image_url={"url": "https://x/y.png"}),
    ]
    request = unit.request.model_copy(
        update={"messages": [Message(role="developer", content=parts), *unit.request.messages[1:]]}
    )
    patched = apply(
        op(target="instructions", action="replace", find="24", replace="48"),
        unit=unit.model_copy(update={"request": request}),
    )
    content = patched.request.messages[0].content
    assert isinstance(content, list)
    assert content[0].text == "Refunds within 48 hours." and content[1] == parts[1]


def test_target_role_decides_which_messages_change() -> None:
    developer_only = apply(op(target="developer", action="replace", find="24 hours", replace="x"))
    assert developer_only.outcomes[0].state == "no_target"  # τ-bench has a system message only


def test_append_and_prepend_add_a_paragraph() -> None:
    original = system_text(first_unit().request)
    assert original.endswith(".\n")  # one newline already there: one more makes the blank line
    appended = apply(op(target="system", action="append", text="Always answer in French."))
    assert system_text(appended.request) == original + "\nAlways answer in French."
    prepended = apply(op(target="system", action="prepend", text="You are Ada."))
    assert system_text(prepended.request) == "You are Ada.\n\n" + original


def test_set_replaces_the_whole_system_prompt() -> None:
    patched = apply(op(target="system", action="set", text="Be brief."))
    assert patched.request.messages[0] == Message(role="system", content="Be brief.")
    again = apply(
        op(target="system", action="set", text="Be brief."),
        unit=first_unit().model_copy(update={"request": patched.request}),
    )
    assert not again.changed


@pytest.mark.parametrize(
    ("position", "index"), [("start", 0), ("after_instructions", 1), ("end", -1)]
)
def test_insert_message_at_each_position(position: str, index: int) -> None:
    patched = apply(
        op(
            target="messages",
            action="insert",
            position=position,
            message={"role": "developer", "content": "Mind the 48-hour rule."},
        )
    )
    messages = patched.request.messages
    assert len(messages) == len(first_unit().request.messages) + 1
    assert messages[index] == Message(role="developer", content="Mind the 48-hour rule.")


# -- tools --------------------------------------------------------------------------------------


def test_set_tool_description() -> None:
    patched = apply(
        op(
            target="tool",
            action="set_description",
            tool="get_user_details",
            description="Look a user up by user id.",
        )
    )
    assert tool(patched.request, "get_user_details").description == "Look a user up by user id."
    assert tool(patched.request, "calculate") == tool(first_unit().request, "calculate")


def test_remove_tool_reports_the_removed_tool() -> None:
    patched = apply(op(target="tool", action="remove", tool="cancel_reservation"))
    names = [t.name for t in patched.request.tools or []]
    assert "cancel_reservation" not in names and len(names) == 13
    assert patched.removed_tools == ("cancel_reservation",)


def test_add_tool_appends_it_and_refuses_a_duplicate() -> None:
    definition = {
        "name": "lookup_policy",
        "description": "Read a policy section.",
        "parameters": {"type": "object", "properties": {"section": {"type": "string"}}},
    }
    patched = apply(op(target="tool", action="add", definition=definition))
    assert (patched.request.tools or [])[-1] == ToolDef.model_validate(definition)
    duplicate = apply(
        op(target="tool", action="add", definition={"name": "calculate", "description": "x"})
    )
    assert not duplicate.changed
    assert duplicate.outcomes[0].note == "tool 'calculate' is already offered"


def test_add_tool_needs_a_recorded_tool_list() -> None:
    unit = first_unit()
    unit = unit.model_copy(update={"request": unit.request.model_copy(update={"tools": None})})
    patched = apply(op(target="tool", action="add", definition={"name": "x"}), unit=unit)
    assert patched.outcomes[0].state == "no_target"


def test_set_parameter_description_including_a_nested_one() -> None:
    patched = apply(
        op(
            target="parameter",
            action="set_description",
            tool="book_reservation",
            parameter="cabin",
            description="Cabin class.",
        ),
        {
            "id": "nested",
            "target": "parameter",
            "action": "set_description",
            "tool": "book_reservation",
            "parameter": "passengers.dob",
            "description": "ISO date.",
        },
    )
    schema = tool(patched.request, "book_reservation").parameters or {}
    assert schema["properties"]["cabin"]["description"] == "Cabin class."
    assert schema["properties"]["passengers"]["items"]["properties"]["dob"] == {
        "type": "string",
        "description": "ISO date.",
    }
    original = tool(first_unit().request, "book_reservation").parameters or {}
    assert "description" not in original["properties"]["cabin"]


def test_edit_parameter_enum_default_and_unset() -> None:
    patched = apply(
        op(
            target="parameter",
            action="edit",
            tool="book_reservation",
            parameter="cabin",
            enum=["economy", "business"],
            default="economy",
        )
    )
    cabin = (tool(patched.request, "book_reservation").parameters or {})["properties"]["cabin"]
    assert cabin == {"type": "string", "enum": ["economy", "business"], "default": "economy"}
    unset = apply(
        op(
            target="parameter",
            action="edit",
            tool="book_reservation",
            parameter="cabin",
            unset=["enum"],
        )
    )
    assert (tool(unset.request, "book_reservation").parameters or {})["properties"]["cabin"] == {
        "type": "string"
    }


def test_edit_parameter_required_list() -> None:
    optional = apply(
        op(
            target="parameter",
            action="edit",
            tool="book_reservation",
            parameter="insurance",
            required=False,
        )
    )
    required = (tool(optional.request, "book_reservation").parameters or {})["required"]
    assert "insurance" not in required and len(required) == 10
    back = apply(
        op(
            target="parameter",
            action="edit",
            tool="book_reservation",
            parameter="insurance",
            required=True,
        ),
        unit=first_unit().model_copy(update={"request": optional.request}),
    )
    assert (tool(back.request, "book_reservation").parameters or {})["required"][-1] == "insurance"
    already = apply(
        op(
            target="parameter",
            action="edit",
            tool="book_reservation",
            parameter="insurance",
            required=True,
        )
    )
    assert not already.changed


def test_parameter_op_on_a_missing_parameter_has_no_target() -> None:
    patched = apply(
        op(
            target="parameter",
            action="set_description",
            tool="book_reservation",
            parameter="seat",
            description="x",
        )
    )
    assert patched.outcomes[0].state == "no_target"


# -- params and model ---------------------------------------------------------------------------


def test_set_and_remove_request_parameters() -> None:
    patched = apply(
        op(target="params", action="set", name="temperature", value=0),
        {
            "id": "effort",
            "target": "params",
            "action": "set",
            "name": "reasoning_effort",
            "value": "low",
        },
        {
            "id": "choice",
            "target": "params",
            "action": "set",
            "name": "tool_choice",
            "value": "required",
        },
    )
    assert patched.request.params == {"temperature": 0, "reasoning_effort": "low"}
    assert patched.request.tool_choice == "required"
    removed = apply(
        op(target="params", action="remove", name="temperature"),
        {"id": "choice", "target": "params", "action": "remove", "name": "tool_choice"},
        unit=first_unit().model_copy(update={"request": patched.request}),
    )
    assert removed.request.params == {"reasoning_effort": "low"}
    assert removed.request.tool_choice is None


def test_remove_of_an_absent_parameter_has_no_target() -> None:
    patched = apply(op(target="params", action="remove", name="max_tokens"))
    assert patched.outcomes[0].state == "no_target"


def test_set_model_names_where_the_unit_goes() -> None:
    patched = apply(op(target="model", action="set", model="openai/gpt-4.1-mini"))
    assert patched.model == "openai/gpt-4.1-mini"
    assert patched.request.model == "gpt-4.1-mini"


def test_ops_apply_in_order_on_each_others_output() -> None:
    patched = apply(
        op(target="tool", action="add", definition={"name": "lookup_policy"}),
        {
            "id": "describe",
            "target": "tool",
            "action": "set_description",
            "tool": "lookup_policy",
            "description": "Read the policy.",
        },
    )
    assert patched.ops == ("op", "describe")
    assert tool(patched.request, "lookup_policy").description == "Read the policy."
