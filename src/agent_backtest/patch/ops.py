"""Patches: edit operations applied to each unit's request before it is sent.

A patch file (``abt.patch/1``, JSON or YAML) lists ops. Each op has an ``id``, a ``target``
(``system``/``developer``/``instructions`` messages, ``messages``, a ``tool``, a tool
``parameter``, request ``params`` or the ``model``), an ``action``, and an optional scope that
narrows the units it applies to (``nodes``, ``kind``, ``tools_present``, ``split``).

Applying a patch never changes the unit: the edited request is a new object, and a unit that no
op changed is sent with the very request production recorded, so its payload (and cache key) is
the one an unpatched run sends.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    Discriminator,
    Field,
    Tag,
    ValidationError,
    field_validator,
    model_validator,
)

from agent_backtest.errors import InputError
from agent_backtest.input_files import parse_json, parse_yaml, read_text
from agent_backtest.providers import parse_model_ref
from agent_backtest.record_model import StrictModel, TaggedRecord
from agent_backtest.trace import ContentPart, LLMRequest, Message, ToolDef
from agent_backtest.units import Unit

PATCH_SCHEMA = "abt.patch/1"
PromptTarget = Literal["system", "developer", "instructions"]
PROMPT_ROLES: dict[str, frozenset[str]] = {
    "system": frozenset({"system"}),
    "developer": frozenset({"developer"}),
    "instructions": frozenset({"system", "developer"}),
}
# Set by the replay itself or by other targets: a params op on them would be silently lost.
RESERVED_PARAMS = {
    "seed": "the seed comes from --seed",
    "model": "use target model",
    "messages": "use the message targets",
    "tools": "use target tool",
}


@dataclass(frozen=True)
class Edit:
    """What an op did to one request: the edited request, or None and why nothing changed."""

    request: LLMRequest | None
    note: str | None = None


class OpBase(StrictModel):
    """Fields every op has: its id and the scope that narrows which units it applies to."""

    id: str = Field(min_length=1, description="Names the op in coverage reports and results.")
    nodes: list[str] | None = Field(default=None, description="Only units of these nodes.")
    kind: Literal["router", "action"] | None = Field(
        default=None, description="Only units of this kind."
    )
    tools_present: list[str] | None = Field(
        default=None, description="Only units whose recorded request offers all these tools."
    )
    split: Literal["test", "val"] | None = Field(
        default=None, description="Only units of this split."
    )

    def in_scope(self, unit: Unit) -> bool:
        """True when the unit passes the op's narrowing (judged on production's request)."""
        if self.nodes is not None and unit.node not in self.nodes:
            return False
        if self.kind is not None and unit.kind != self.kind:
            return False
        if self.split is not None and unit.split != self.split:
            return False
        if self.tools_present:
            offered = {tool.name for tool in unit.request.tools or []}
            return set(self.tools_present) <= offered
        return True

    def has_target(self, request: LLMRequest) -> bool:
        """True when the request holds what the op edits."""
        raise NotImplementedError

    def edit(self, request: LLMRequest) -> Edit:
        """The request with the op applied; never mutates ``request``."""
        raise NotImplementedError

    def target_label(self) -> str:
        """The target as the coverage report names it."""
        return str(getattr(self, "target", ""))

    def target_phrase(self) -> str:
        """The target in a sentence: what a unit must have for the op to apply."""
        raise NotImplementedError


# -- messages -----------------------------------------------------------------------------------


class PromptOp(OpBase):
    """An op on system and/or developer messages."""

    target: PromptTarget

    def has_target(self, request: LLMRequest) -> bool:
        """True when the request has a message of the target's role."""
        return any(m.role in PROMPT_ROLES[self.target] for m in request.messages)

    def target_phrase(self) -> str:
        """E.g. 'a system message'."""
        roles = " or ".join(sorted(PROMPT_ROLES[self.target]))
        return f"a {roles} message"

    def first_index(self, request: LLMRequest) -> int:
        """Index of the first message of the target's role (the prompt an append edits)."""
        return next(
            i for i, m in enumerate(request.messages) if m.role in PROMPT_ROLES[self.target]
        )


class ReplaceText(PromptOp):
    """Replace text in every system/developer message, literally or by regular expression."""

    action: Literal["replace"]
    find: str = Field(min_length=1, description="The text (or pattern, with regex) to find.")
    replace: str = Field(description="What replaces each match (regex: may use \\1 groups).")
    regex: bool = False
    count: int | None = Field(
        default=None,
        ge=1,
        description="Matches expected per message; a message with another "
        "number of matches is left unchanged and reported.",
    )

    @model_validator(mode="after")
    def _regex_compiles(self) -> ReplaceText:
        """A regex that does not compile is an error in the file, not a no-match."""
        if self.regex:
            try:
                re.compile(self.find)
            except re.error as exc:
                raise ValueError(f"find is not a valid regular expression: {exc}") from None
        return self

    def edit(self, request: LLMRequest) -> Edit:
        """Replace in each target message whose match count is as expected."""
        pattern = re.compile(self.find if self.regex else re.escape(self.find))
        messages = list(request.messages)
        counts: list[int] = []
        changed = False
        for index, message in enumerate(messages):
            if message.role not in PROMPT_ROLES[self.target]:
                continue
            found = sum(len(pattern.findall(text)) for text in _texts(message))
            counts.append(found)
            if found == 0 or (self.count is not None and found != self.count):
                continue
            messages[index] = _map_texts(message, lambda text: self._sub(pattern, text))
            changed = True
        if changed:
            return Edit(request.model_copy(update={"messages": messages}))
        wrong = [n for n in counts if n]
        if wrong:
            return Edit(None, f"found {wrong[0]} times in a message, expected {self.count}")
        return Edit(None, f"{self.find!r} not found")

    def _sub(self, pattern: re.Pattern[str], text: str) -> str:
        """The text with every match replaced."""
        if self.regex:
            return pattern.sub(self.replace, text)
        return text.replace(self.find, self.replace)


class EdgeText(PromptOp):
    """Add a paragraph at one edge of the first system/developer message."""

    action: str
    """Each edge's own word (a literal in the subclass)."""
    text: str = Field(min_length=1)
    at_end: ClassVar[bool]
    """After the message's text, or before it."""

    def edit(self, request: LLMRequest) -> Edit:
        """The first target message with the paragraph at its edge."""
        index = self.first_index(request)
        message = _with_edge_text(request.messages[index], self.text, at_end=self.at_end)
        return Edit(_replace_message(request, index, message))


class AppendText(EdgeText):
    """Add a paragraph at the end of the first system/developer message."""

    action: Literal["append"]
    at_end = True


class PrependText(EdgeText):
    """Add a paragraph at the start of the first system/developer message."""

    action: Literal["prepend"]
    at_end = False


class SetText(PromptOp):
    """Replace the whole text of the first system/developer message."""

    action: Literal["set"]
    text: str

    def edit(self, request: LLMRequest) -> Edit:
        """The first target message with ``text`` as its only content."""
        index = self.first_index(request)
        message = request.messages[index]
        if message.content == self.text:
            return Edit(None, "the prompt already is this text")
        return Edit(
            _replace_message(request, index, message.model_copy(update={"content": self.text}))
        )


class NewMessage(StrictModel):
    """A message an insert op adds."""

    role: Literal["system", "developer", "user", "assistant"]
    content: str


class InsertMessage(OpBase):
    """Insert a message: at the start, after the leading system/developer messages, or last."""

    target: Literal["messages"]
    action: Literal["insert"]
    message: NewMessage
    position: Literal["start", "after_instructions", "end"] = "after_instructions"

    def has_target(self, request: LLMRequest) -> bool:
        """Every request has a conversation."""
        return True

    def target_phrase(self) -> str:
        """What an insert needs."""
        return "a conversation"

    def edit(self, request: LLMRequest) -> Edit:
        """The conversation with the message inserted."""
        index = {"start": 0, "end": len(request.messages)}.get(self.position)
        if index is None:
            index = 0
            while (
                index < len(request.messages)
                and request.messages[index].role in PROMPT_ROLES["instructions"]
            ):
                index += 1
        new = Message(role=self.message.role, content=self.message.content)
        messages = [*request.messages[:index], new, *request.messages[index:]]
        return Edit(request.model_copy(update={"messages": messages}))


# -- tools --------------------------------------------------------------------------------------


class ToolOp(OpBase):
    """An op on one offered tool, named by ``tool``."""

    target: Literal["tool"]
    tool: str = Field(min_length=1, description="The tool's name.")

    def has_target(self, request: LLMRequest) -> bool:
        """True when the request offers the tool."""
        return any(t.name == self.tool for t in request.tools or [])

    def target_label(self) -> str:
        """E.g. 'tool get_user_details'."""
        return f"tool {self.tool}"

    def target_phrase(self) -> str:
        """E.g. 'tool get_user_details'."""
        return f"tool {self.tool!r}"

    def replace_tool(self, request: LLMRequest, tool: ToolDef) -> LLMRequest:
        """The request with the named tool replaced by ``tool``."""
        tools = [tool if t.name == self.tool else t for t in request.tools or []]
        return request.model_copy(update={"tools": tools})

    def current(self, request: LLMRequest) -> ToolDef:
        """The named tool as the request offers it."""
        return next(t for t in request.tools or [] if t.name == self.tool)


class SetToolDescription(ToolOp):
    """Set a tool's description."""

    action: Literal["set_description"]
    description: str

    def edit(self, request: LLMRequest) -> Edit:
        """The tool with the new description."""
        tool = self.current(request)
        if tool.description == self.description:
            return Edit(None, "the description already is this text")
        return Edit(
            self.replace_tool(request, tool.model_copy(update={"description": self.description}))
        )


class RemoveTool(ToolOp):
    """Stop offering a tool."""

    action: Literal["remove"]

    def edit(self, request: LLMRequest) -> Edit:
        """The request without the tool."""
        tools = [t for t in request.tools or [] if t.name != self.tool]
        return Edit(request.model_copy(update={"tools": tools}))


class AddTool(OpBase):
    """Offer one more tool (in units whose trace recorded the tools offered)."""

    target: Literal["tool"]
    action: Literal["add"]
    definition: ToolDef = Field(description="name, description, parameters (JSON Schema).")

    def has_target(self, request: LLMRequest) -> bool:
        """A tool list must have been recorded: adding to an unknown list would invent one."""
        return request.tools is not None

    def target_label(self) -> str:
        """E.g. 'tool lookup_policy'."""
        return f"tool {self.definition.name}"

    def target_phrase(self) -> str:
        """What an add needs."""
        return "a recorded tool list"

    def edit(self, request: LLMRequest) -> Edit:
        """The request with the tool appended to its tools."""
        tools = request.tools or []
        if any(t.name == self.definition.name for t in tools):
            return Edit(None, f"tool {self.definition.name!r} is already offered")
        return Edit(request.model_copy(update={"tools": [*tools, self.definition]}))


class ParameterOp(OpBase):
    """An op on one parameter of a tool's JSON Schema; ``a.b`` names a nested property."""

    target: Literal["parameter"]
    tool: str = Field(min_length=1)
    parameter: str = Field(
        min_length=1, description="Property name; dots walk into nested objects (and array items)."
    )

    def has_target(self, request: LLMRequest) -> bool:
        """True when the tool is offered and its schema has the parameter."""
        tool = next((t for t in request.tools or [] if t.name == self.tool), None)
        return tool is not None and _find_property(tool.parameters, self.parameter) is not None

    def target_label(self) -> str:
        """E.g. 'parameter book_reservation.cabin'."""
        return f"parameter {self.tool}.{self.parameter}"

    def target_phrase(self) -> str:
        """E.g. "parameter 'cabin' of tool 'book_reservation'"."""
        return f"parameter {self.parameter!r} of tool {self.tool!r}"

    def edit(self, request: LLMRequest) -> Edit:
        """The tool with an edited copy of its schema."""
        tool = next(t for t in request.tools or [] if t.name == self.tool)
        schema = copy.deepcopy(tool.parameters)
        found = _find_property(schema, self.parameter)
        assert found is not None  # has_target checked it
        parent, name = found
        note = self.edit_schema(parent, name)
        if note is not None or schema == tool.parameters:
            return Edit(None, note or "the schema already says this")
        tools = [
            tool.model_copy(update={"parameters": schema}) if t.name == self.tool else t
            for t in request.tools or []
        ]
        return Edit(request.model_copy(update={"tools": tools}))

    def edit_schema(self, parent: dict[str, Any], name: str) -> str | None:
        """Edit ``parent`` (the object schema holding the property) in place; a note if not."""
        raise NotImplementedError


class SetParameterDescription(ParameterOp):
    """Set a tool parameter's description."""

    action: Literal["set_description"]
    description: str

    def edit_schema(self, parent: dict[str, Any], name: str) -> str | None:
        """Set the property's description."""
        parent["properties"][name]["description"] = self.description
        return None


class EditParameter(ParameterOp):
    """Edit a tool parameter's schema: its enum values, whether it is required, its default."""

    action: Literal["edit"]
    enum: list[Any] | None = Field(
        default=None, min_length=1, description="The allowed values, replacing any enum."
    )
    required: bool | None = Field(
        default=None, description="Add to (true) or remove from (false) the tool's required list."
    )
    default: Any = Field(default=None, description="Set the default (null is a value too).")
    unset: list[Literal["enum", "default"]] = Field(
        default_factory=list, description="Schema keys to remove from the parameter."
    )

    @model_validator(mode="after")
    def _does_something(self) -> EditParameter:
        """An edit that asks for nothing is a mistake in the file."""
        asked = {"enum", "required", "default", "unset"} & self.model_fields_set
        if not asked:
            raise ValueError("give at least one of enum, required, default, unset")
        if set(self.unset) & asked:
            raise ValueError("a key cannot be both set and unset")
        return self

    def edit_schema(self, parent: dict[str, Any], name: str) -> str | None:
        """Apply the asked edits to the property and its parent's required list."""
        prop = parent["properties"][name]
        if self.enum is not None:
            prop["enum"] = list(self.enum)
        if "default" in self.model_fields_set:
            prop["default"] = self.default
        for key in self.unset:
            prop.pop(key, None)
        if self.required is not None:
            required = [n for n in parent.get("required", []) if n != name]
            if self.required:
                required.append(name)
            if required or "required" in parent:
                parent["required"] = required
        return None


# -- request parameters and model ----------------------------------------------------------------


class ParamsOp(OpBase):
    """An op on one request parameter; ``tool_choice`` is one of them."""

    target: Literal["params"]
    name: str = Field(
        min_length=1,
        description="temperature, max_tokens, tool_choice, reasoning_effort, …, as in the request.",
    )

    @field_validator("name")
    @classmethod
    def _not_reserved(cls, value: str) -> str:
        """Refuse names the replay or another target sets."""
        if value in RESERVED_PARAMS:
            raise ValueError(
                f"{value} is not a request parameter a patch can set: {RESERVED_PARAMS[value]}"
            )
        return value

    def target_label(self) -> str:
        """E.g. 'params temperature'."""
        return f"params {self.name}"

    def current(self, request: LLMRequest) -> tuple[bool, Any]:
        """(present, value) of the parameter in the request."""
        if self.name == "tool_choice":
            return request.tool_choice is not None, request.tool_choice
        return self.name in request.params, request.params.get(self.name)


class SetParam(ParamsOp):
    """Set a request parameter."""

    action: Literal["set"]
    value: Any = Field(description="The value to send.")

    def has_target(self, request: LLMRequest) -> bool:
        """Any request can take a parameter."""
        return True

    def target_phrase(self) -> str:
        """What a set needs."""
        return "a request"

    def edit(self, request: LLMRequest) -> Edit:
        """The request with the parameter set."""
        present, value = self.current(request)
        if present and value == self.value:
            return Edit(None, f"{self.name} already is {self.value!r}")
        if self.name == "tool_choice":
            return Edit(request.model_copy(update={"tool_choice": self.value}))
        return Edit(
            request.model_copy(update={"params": {**request.params, self.name: self.value}})
        )


class RemoveParam(ParamsOp):
    """Stop sending a request parameter."""

    action: Literal["remove"]

    def has_target(self, request: LLMRequest) -> bool:
        """True when the request sets the parameter."""
        return self.current(request)[0]

    def target_phrase(self) -> str:
        """E.g. 'parameter temperature'."""
        return f"parameter {self.name!r}"

    def edit(self, request: LLMRequest) -> Edit:
        """The request without the parameter."""
        if self.name == "tool_choice":
            return Edit(request.model_copy(update={"tool_choice": None}))
        params = {k: v for k, v in request.params.items() if k != self.name}
        return Edit(request.model_copy(update={"params": params}))


class SetModel(OpBase):
    """Send the units in scope to another model (provider/model), whatever --model says."""

    target: Literal["model"]
    action: Literal["set"]
    model: str = Field(description="provider/model, as --model takes it.")

    @field_validator("model")
    @classmethod
    def _is_model_ref(cls, value: str) -> str:
        """The model must be provider/model, as --model takes it."""
        provider, slash, name = value.partition("/")
        if not (provider and slash and name):
            raise ValueError(f"{value!r} is not provider/model (e.g. openai/gpt-4.1-mini)")
        return value

    def has_target(self, request: LLMRequest) -> bool:
        """Any request goes to some model."""
        return True

    def target_phrase(self) -> str:
        """What a model swap needs."""
        return "a request"

    def edit(self, request: LLMRequest) -> Edit:
        """The request naming the new model (the run sends it there)."""
        return Edit(request.model_copy(update={"model": parse_model_ref(self.model).model}))


# -- the patch ----------------------------------------------------------------------------------

OPS: dict[str, type[OpBase]] = {
    "prompt.replace": ReplaceText,
    "prompt.append": AppendText,
    "prompt.prepend": PrependText,
    "prompt.set": SetText,
    "messages.insert": InsertMessage,
    "tool.set_description": SetToolDescription,
    "tool.remove": RemoveTool,
    "tool.add": AddTool,
    "parameter.set_description": SetParameterDescription,
    "parameter.edit": EditParameter,
    "params.set": SetParam,
    "params.remove": RemoveParam,
    "model.set": SetModel,
}
TARGETS = (
    "system",
    "developer",
    "instructions",
    "messages",
    "tool",
    "parameter",
    "params",
    "model",
)


def _op_tag(value: Any) -> str | None:
    """The union tag of an op: its target family and action (e.g. 'prompt.replace')."""
    if isinstance(value, dict):
        target, action = value.get("target"), value.get("action")
    else:
        target, action = getattr(value, "target", None), getattr(value, "action", None)
    if not isinstance(target, str):  # a list or a table: no op's target, said as one
        return None
    family = "prompt" if target in PROMPT_ROLES else target
    return f"{family}.{action}"


Op = Annotated[
    Annotated[ReplaceText, Tag("prompt.replace")]
    | Annotated[AppendText, Tag("prompt.append")]
    | Annotated[PrependText, Tag("prompt.prepend")]
    | Annotated[SetText, Tag("prompt.set")]
    | Annotated[InsertMessage, Tag("messages.insert")]
    | Annotated[SetToolDescription, Tag("tool.set_description")]
    | Annotated[RemoveTool, Tag("tool.remove")]
    | Annotated[AddTool, Tag("tool.add")]
    | Annotated[SetParameterDescription, Tag("parameter.set_description")]
    | Annotated[EditParameter, Tag("parameter.edit")]
    | Annotated[SetParam, Tag("params.set")]
    | Annotated[RemoveParam, Tag("params.remove")]
    | Annotated[SetModel, Tag("model.set")],
    Discriminator(_op_tag),
]


@dataclass(frozen=True)
class OpOutcome:
    """What one op did to one unit: out_of_scope, no_target, unchanged or changed."""

    op_id: str
    state: Literal["out_of_scope", "no_target", "unchanged", "changed"]
    note: str | None = None
    before: LLMRequest | None = None
    after: LLMRequest | None = None


@dataclass(frozen=True)
class PatchedRequest:
    """A unit's request after the patch, and what the patch did to it."""

    request: LLMRequest  # the unit's own request object when no op changed it
    ops: tuple[str, ...] = ()
    removed_tools: tuple[str, ...] = ()
    model: str | None = None
    outcomes: tuple[OpOutcome, ...] = ()

    @property
    def changed(self) -> bool:
        """True when some op changed the request."""
        return bool(self.ops)


class Patch(TaggedRecord):
    """A patch file: edit ops applied in order to every unit's request."""

    schema_: Literal["abt.patch/1"] = Field(alias="schema")
    description: str | None = None
    ops: list[Op] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique_ids(self) -> Patch:
        """Ids name ops in coverage and results: each must be unique."""
        seen: set[str] = set()
        for op in self.ops:
            if op.id in seen:
                raise ValueError(f"op id {op.id!r} is used twice: ids name ops in results")
            seen.add(op.id)
        return self

    def op_ids(self) -> list[str]:
        """The ops' ids, in order."""
        return [op.id for op in self.ops]

    def models(self) -> set[str]:
        """Every model a model op may send units to."""
        return {op.model for op in self.ops if isinstance(op, SetModel)}

    def apply(self, unit: Unit) -> PatchedRequest:
        """The unit's request with every op in scope applied in order."""
        request = unit.request
        outcomes: list[OpOutcome] = []
        changed: list[str] = []
        model: str | None = None
        for op in self.ops:
            outcome = _apply_op(op, unit, request)
            outcomes.append(outcome)
            if outcome.state == "changed" and outcome.after is not None:
                request = outcome.after
                changed.append(op.id)
                if isinstance(op, SetModel):
                    model = op.model
        if not changed:
            return PatchedRequest(unit.request, outcomes=tuple(outcomes))
        kept = {t.name for t in request.tools or []}
        removed = tuple(t.name for t in unit.request.tools or [] if t.name not in kept)
        return PatchedRequest(request, tuple(changed), removed, model, tuple(outcomes))

    def to_json(self) -> bytes:
        """The patch as loaded, as JSON (only the fields the file gave, so it loads the same)."""
        data = self.model_dump(mode="json", by_alias=True, exclude_unset=True)
        return json.dumps(data, indent=2, ensure_ascii=False).encode() + b"\n"


def _apply_op(op: OpBase, unit: Unit, request: LLMRequest) -> OpOutcome:
    """What one op does to the unit's request as the earlier ops left it."""
    if not op.in_scope(unit):
        return OpOutcome(op.id, "out_of_scope")
    if not op.has_target(request):
        return OpOutcome(op.id, "no_target")
    edit = op.edit(request)
    if edit.request is None or edit.request == request:
        return OpOutcome(op.id, "unchanged", edit.note or "the op changed nothing")
    return OpOutcome(op.id, "changed", before=request, after=edit.request)


# -- loading ------------------------------------------------------------------------------------


def load_patch(path: Path) -> Patch:
    """Read and validate a patch file; any problem is one InputError naming file and place."""
    text = read_text(path, "patch")
    data = _parse(path, text)
    if not isinstance(data, dict):
        raise InputError(
            path, None, 'not a patch: expected an object {"schema": "abt.patch/1", "ops": [...]}'
        )
    try:
        return Patch.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors()
        # An unknown field is usually a misspelt one, which also shows up as "missing": say that.
        first = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
        location, message = describe_error(first, data)
        raise InputError(path, location, message) from None


def _parse(path: Path, text: str) -> Any:
    """The file's data: YAML for .yaml/.yml, JSON otherwise."""
    if path.suffix.lower() in (".yaml", ".yml"):
        return parse_yaml(text, path)
    return parse_json(text, path, hint=" (a .yaml/.yml file is read as YAML)")


def describe_error(error: Any, data: dict[str, Any]) -> tuple[str | None, str]:
    """(location, message) of a validation error: the op (by index and id) and the field."""
    loc = list(error["loc"])
    if len(loc) < 2 or loc[0] != "ops" or not isinstance(loc[1], int):
        field_name = ".".join(str(part) for part in loc) or None
        return field_name, _message(error)
    index = loc[1]
    raw = data["ops"][index] if isinstance(data.get("ops"), list) else None
    op_id = raw.get("id") if isinstance(raw, dict) else None
    where = f"ops[{index}]" + (f" (id {op_id!r})" if op_id else "")
    rest = [str(part) for part in loc[2:] if part not in OPS]
    if error["type"] in ("union_tag_invalid", "union_tag_not_found"):
        return where, _tag_message(raw)
    if error["type"] == "model_attributes_type":
        return where, "an op is an object with id, target and action"
    if rest:
        where += f" field {'.'.join(rest)}"
    return where, _message(error)


def _message(error: Any) -> str:
    """A validation error's message in the words of a patch file."""
    if error["type"] == "extra_forbidden":
        return "unknown field (a typo?)"
    if error["type"] == "missing":
        return "required field missing"
    return str(error["msg"]).removeprefix("Value error, ")


def _tag_message(raw: Any) -> str:
    """Why an op's target and action pair is not one the patch knows."""
    if not isinstance(raw, dict):
        return "an op is an object with id, target and action"
    target, action = raw.get("target"), raw.get("action")
    if target not in TARGETS:
        return f"target {target!r} is not one of: {', '.join(TARGETS)}"
    family = "prompt" if target in PROMPT_ROLES else target
    actions = sorted(tag.split(".", 1)[1] for tag in OPS if tag.startswith(f"{family}."))
    return f"target {target!r} takes action {', '.join(actions)}; not {action!r}"


# -- message text helpers -----------------------------------------------------------------------


def _texts(message: Message) -> list[str]:
    """The texts of a message: its string, or its text parts."""
    if isinstance(message.content, str):
        return [message.content]
    if isinstance(message.content, list):
        return [part.text for part in message.content if part.text is not None]
    return []


def _map_texts(message: Message, change: Callable[[str], str]) -> Message:
    """A copy of the message with ``change`` applied to each text (parts keep their types)."""
    if isinstance(message.content, str):
        return message.model_copy(update={"content": change(message.content)})
    if isinstance(message.content, list):
        parts = [
            part.model_copy(update={"text": change(part.text)}) if part.text is not None else part
            for part in message.content
        ]
        return message.model_copy(update={"content": parts})
    return message


def _with_edge_text(message: Message, paragraph: str, at_end: bool) -> Message:
    """The message with a paragraph added after (or before) its text, a blank line between."""
    content = message.content
    if isinstance(content, list):
        indexes = [i for i, part in enumerate(content) if part.text is not None]
        if indexes:
            i = indexes[-1] if at_end else indexes[0]
            parts = list(content)
            parts[i] = parts[i].model_copy(
                update={"text": _join(parts[i].text or "", paragraph, at_end)}
            )
            return message.model_copy(update={"content": parts})
        new = ContentPart(type="text", text=paragraph)
        return message.model_copy(
            update={"content": [*content, new] if at_end else [new, *content]}
        )
    return message.model_copy(update={"content": _join(content or "", paragraph, at_end)})


def _join(text: str, paragraph: str, at_end: bool) -> str:
    """Text and a paragraph with one blank line between them."""
    if not text:
        return paragraph
    if at_end:
        gap = "" if text.endswith("\n\n") else "\n" if text.endswith("\n") else "\n\n"
        return text + gap + paragraph
    return paragraph + "\n\n" + text


def _replace_message(request: LLMRequest, index: int, message: Message) -> LLMRequest:
    """A copy of the request with one message replaced."""
    messages = list(request.messages)
    messages[index] = message
    return request.model_copy(update={"messages": messages})


def _find_property(schema: dict[str, Any] | None, path: str) -> tuple[dict[str, Any], str] | None:
    """(the object schema holding the property, its name) for a dotted path, or None."""
    node: Any = schema
    names = path.split(".")
    for depth, name in enumerate(names):
        if not isinstance(node, dict):
            return None
        if "properties" not in node and isinstance(node.get("items"), dict):
            node = node["items"]  # a list of objects: walk into its items
        properties = node.get("properties")
        if not isinstance(properties, dict) or not isinstance(properties.get(name), dict):
            return None
        if depth == len(names) - 1:
            return node, name
        node = properties[name]
    return None
