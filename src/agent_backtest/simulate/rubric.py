"""The judge's rubric for a simulated conversation: the versioned prompt and the owner taxonomy.

The prompt is a package file, ``prompts/conversation.<version>.md``, in the sections the replay
judge's prompts use (``system``, ``user``, ``correction``); its sha256 is recorded with the
verdicts. The correction request quotes the invalid answer and leaves out the tool catalogue,
which is the longest part of the first request and adds nothing to fixing an answer's shape.

Owners say who should fix a failure. The default taxonomy is
:data:`~agent_backtest.simulate.models.DEFAULT_OWNERS`; a file replaces it, one owner a line
(``name`` or ``name: what they own``, ``#`` starts a comment). ``none`` is the owner of a pass
and is never the owner of a failure.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from agent_backtest.errors import InputError
from agent_backtest.input_files import read_text
from agent_backtest.scoring.prompts import (
    ANSWER_QUOTE_CHARS,
    PromptTemplate,
    block,
    clip,
    load_template,
)
from agent_backtest.simulate.models import DEFAULT_OWNERS, ConversationRecord, Flow, TurnRecord
from agent_backtest.simulate.prompt_data import fill
from agent_backtest.trace import ToolDef

PROMPT_DIR = Path(__file__).with_name("prompts")
RUBRIC = "conversation"
RUBRIC_VERSION = "v1"
NOBODY = "none"

TEXT_CHARS = 2_000
RESULT_CHARS = 800
ARGUMENTS_CHARS = 1_000
DESCRIPTION_CHARS = 300

_OWNER_NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
DEFAULT_DESCRIPTIONS: dict[str, str] = {
    "agent_routing": "the harness chose or offered the wrong tools or capabilities for the turn",
    "agent_execution": "the harness ran a tool wrongly, lost its result or looped",
    "agent_rendering": "the answer was produced but shown to the user empty, cut or garbled",
    "model": "the model chose badly among what it was offered, or answered wrongly",
    "backend_data": "a tool's data or service gave wrong or missing results",
    "user_simulator": "the simulated user broke its instructions: it asked for something else, "
    "said what it was not given, or stopped before its task was done",
    "environment": "the target or its tools failed outside the agent: a service down, a "
    "fixture or test set-up that was wrong",
    "none": "no one has anything to fix: the conversation passed",
}


@dataclass(frozen=True)
class Owners:
    """The owners a failure can be given, each with what it owns."""

    descriptions: dict[str, str]

    @property
    def names(self) -> list[str]:
        """The owners in their order."""
        return list(self.descriptions)

    def of_failures(self) -> list[str]:
        """The owners a failure can have (all but ``none``)."""
        return [name for name in self.descriptions if name != NOBODY]

    def text(self) -> str:
        """The list the judge reads: one ``- name: description`` line each."""
        return "\n".join(
            f"- {name}: {text}" if text else f"- {name}" for name, text in self.descriptions.items()
        )


DEFAULT_TAXONOMY = Owners({name: DEFAULT_DESCRIPTIONS[name] for name in DEFAULT_OWNERS})


def load_owners(path: Path) -> Owners:
    """The taxonomy of an owners file (module docstring); a bad line names its number."""
    lines = read_text(path, "owners file").splitlines()
    descriptions: dict[str, str] = {}
    for number, line in enumerate(lines, start=1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        name, _, description = (part.strip() for part in text.partition(":"))
        if not _OWNER_NAME.match(name):
            raise InputError(
                path, f"line {number}", f"{name!r} is not an owner name: use snake_case letters"
            )
        if name in descriptions:
            raise InputError(path, f"line {number}", f"owner {name!r} is listed twice")
        descriptions[name] = description
    if not [name for name in descriptions if name != NOBODY]:
        raise InputError(path, None, "no owners: list one a line, as name: what they own")
    descriptions.setdefault(NOBODY, DEFAULT_DESCRIPTIONS[NOBODY])
    return Owners(descriptions)


def load_rubric(version: str = RUBRIC_VERSION) -> PromptTemplate:
    """The rubric at ``version`` from the package's prompt files; its id is
    ``conversation@version``, as verdicts record it."""
    return load_template(RUBRIC, version, PROMPT_DIR)


@dataclass(frozen=True)
class RenderedRubric:
    """The rubric filled in for one conversation: the messages of the first request and the
    data the correction request is made from."""

    rubric: PromptTemplate
    system: str
    user: str
    tag: str
    blocks: dict[str, str]
    owners: Owners

    def correction(self, answer: str, problem: str) -> str:
        """The correction request: the test and the conversation (no catalogue), the invalid
        ``answer`` quoted, and what was wrong with it."""
        return self.rubric.correction.substitute(
            tag=self.tag,
            problem=problem,
            flow=self.blocks["flow"],
            conversation=self.blocks["conversation"],
            answer=block("previous_answer", clip(answer, ANSWER_QUOTE_CHARS), self.tag),
            owner_names=", ".join(self.owners.of_failures()),
        )


def render(
    flow: Flow,
    conversation: ConversationRecord,
    tools: list[ToolDef] | None,
    owners: Owners,
    rubric: PromptTemplate | None = None,
) -> RenderedRubric:
    """The rubric filled in with one flow, its recorded conversation and the tool catalogue."""
    rubric = rubric or load_rubric()
    system, user, tag, blocks = fill(
        rubric,
        {
            "catalogue": catalogue_text(tools),
            "flow": flow_text(flow),
            "conversation": conversation_text(conversation),
        },
        owners=owners.text(),
    )
    return RenderedRubric(rubric, system, user, tag, blocks, owners)


def catalogue_text(tools: list[ToolDef] | None) -> str:
    """One line per tool: its name, what it does, its required arguments."""
    if not tools:
        return "(no tool catalogue was given: the tools offered are listed per turn)"
    lines = []
    for tool in tools:
        required = (tool.parameters or {}).get("required") or []
        line = f"- {tool.name}"
        if tool.description:
            line += f": {clip(' '.join(tool.description.split()), DESCRIPTION_CHARS)}"
        if required:
            line += f" (requires {', '.join(map(str, required))})"
        lines.append(line)
    return "\n".join(lines)


def flow_text(flow: Flow) -> str:
    """What the test's author wrote: purpose, the user's part, expected outcomes and tools."""
    lines = [f"flow {flow.id} (family {flow.family})"]
    if flow.purpose:
        lines.append(f"purpose: {flow.purpose}")
    if flow.turns is not None:
        for index, turn in enumerate(flow.turns, start=1):
            expect = f" — a good answer: {turn.expect}" if turn.expect else ""
            lines.append(f"turn {index}: the user says {turn.user!r}{expect}")
    elif flow.user is not None:
        lines.append(f"a simulated user with these instructions: {flow.user.instructions}")
        if flow.user.known_info:
            lines.append(f"the user can tell: {flow.user.known_info}")
        if flow.user.unknown_info:
            lines.append(f"the user does not know: {flow.user.unknown_info}")
    if flow.expect_tools:
        lines.append(f"tools a good conversation calls: {', '.join(flow.expect_tools)}")
    return "\n".join(lines)


def conversation_text(conversation: ConversationRecord) -> str:
    """Every turn as recorded, each text clipped (start and end kept)."""
    if not conversation.turns:
        return "(no turn was recorded)"
    return "\n\n".join(turn_text(turn) for turn in conversation.turns)


def turn_text(turn: TurnRecord) -> str:
    """One turn: the user's message, the tools offered, each call and its result, the answer."""
    lines = [f"turn {turn.index}", f"user: {clip(turn.user, TEXT_CHARS)}"]
    if turn.tools_offered is not None:
        lines.append(f"tools offered: {', '.join(turn.tools_offered) or '(none)'}")
    for call in turn.tool_calls:
        arguments = call.arguments
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments, ensure_ascii=False, sort_keys=True)
        lines.append(f"tool call {call.name} with {clip(arguments, ARGUMENTS_CHARS)}")
        if call.error is not None:
            lines.append(f"  error: {clip(call.error, RESULT_CHARS)}")
        if call.result is not None:
            cut = ""
            if call.result_length is not None and call.result_length > len(call.result):
                cut = f" (first {len(call.result)} of {call.result_length} characters)"
            lines.append(f"  result{cut}: {clip(call.result, RESULT_CHARS)}")
    if turn.error is not None:
        lines.append(f"agent error: {clip(turn.error, TEXT_CHARS)}")
    final = turn.final_text
    lines.append(f"final answer: {clip(final, TEXT_CHARS) if final else '(empty)'}")
    return "\n".join(lines)
