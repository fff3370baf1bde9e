"""Generated flows: a teacher model writes exactly N test conversations per capability family.

Planning (:func:`plan_generation`) reads the capability file against the tool catalogue and
checks the ``teacher`` role without calling it. Generating asks the teacher once per family
(families side by side) and checks every test it writes. A family whose answer was invalid or
short is asked again, in the same conversation, quoting what was wrong and how many tests are
still missing, at most ``MAX_ASKS`` times in all; the tests kept are those that passed. When a
family is still short after that, generation fails with :class:`GenerationError` naming the
count missing in each family, and nothing is written.

What is checked in each test, mechanically:

- it is a valid scripted :class:`~agent_backtest.simulate.models.Flow`;
- 2 to 4 user turns, each with an expectation that says something;
- ``seed`` names one of the family's seed conversations;
- ``expect_tools`` only names tools of the catalogue;
- no user message holds an id the user could not know (a UUID, ``#12``, ``id 12``,
  ``ORD-1234``), anything shaped like a secret (as :func:`~agent_backtest.redaction.redact`
  finds them), or a bulk destructive request ("delete all …", "drop table");
- it repeats no other test of the family (the same user messages).

The ambiguous follow-up and the typos in about a third of the tests are asked for but not
checked: no rule tells a follow-up that needs its context, or a typo from a name, reliably.
A test's ``mutates`` is never taken from the teacher: whether a generated flow may change the
agent's data is judged from its ``expect_tools``, as for any flow that does not say.

Every flow gets ``id`` ``<family>-<n>``, ``seed_id`` ``<family>-seed-<k>`` (the seed it grew
from: stable across regenerations) and the prompt's sha256. Every question goes through the
response cache, so the same capability file, catalogue, teacher and prompt version give the
same flows without a second paid call.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agent_backtest.errors import InputError, UserError, bounded
from agent_backtest.formats.tools_file import load_tools_file
from agent_backtest.providers import CallCounters, ModelConfig
from agent_backtest.providers.client import ModelClient
from agent_backtest.providers.config import ModelRole
from agent_backtest.providers.roles import (
    RoleModel,
    check_role,
    close_clients,
    open_clients,
    resolve_role,
)
from agent_backtest.redaction import redact
from agent_backtest.runs.files import check_writable, private_atomic_writer
from agent_backtest.scoring.prompts import PromptTemplate
from agent_backtest.scoring.verdict import json_objects
from agent_backtest.simulate.capabilities import Capabilities, Family, read_capabilities
from agent_backtest.simulate.judge import is_placeholder
from agent_backtest.simulate.models import Flow, ScriptedTurn
from agent_backtest.simulate.teacher_prompt import (
    TeacherRequest,
    load_teacher_prompt,
    render_request,
)
from agent_backtest.trace import LLMRequest, Message, ToolDef, dump_record

MAX_ASKS = 3
"""Questions per family at most: the first, and two corrections."""
MIN_TURNS, MAX_TURNS = 2, 4
TEACHER_PARAMS: dict[str, Any] = {"temperature": 0.7}
TEACHER_SEED = 0

_UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I)
_NUMBERED_ID = re.compile(r"(?:\b(?:id|ids|ref)\b\.?\s*[:#=]?\s*|#)\d+", re.I)
_CODED_ID = re.compile(r"\b[A-Z]{2,5}-\d{3,}\b")
_DESTRUCTIVE = re.compile(
    r"\b(?:delete|remove|erase|wipe|clear|purge|drop|cancel)\b[^.?!]{0,30}?"
    r"\b(?:all|every|everything|entire|whole)\b|\bdrop\s+table\b|\brm\s+-rf\b",
    re.I,
)


class GenerationError(Exception):
    """The teacher gave no complete set of flows: the model's failure, not the user's."""


@dataclass(frozen=True)
class GenerateOptions:
    """What to generate: ``per_family`` flows for each family of the ``capabilities`` file,
    with the ``tools`` file as the catalogue, written by the ``teacher`` (provider/model; else
    ``[roles.teacher]`` of the config)."""

    capabilities: Path
    tools: Path | None
    per_family: int | None
    teacher: RoleModel | None = None


@dataclass(frozen=True)
class GenerationPlan:
    """Everything generating needs, checked; nothing asked yet."""

    capabilities_file: Path
    capabilities: Capabilities
    tools: list[ToolDef]
    per_family: int
    role: ModelRole
    config: ModelConfig
    prompt: PromptTemplate

    def generate(self) -> Generated:
        """Ask the teacher for every family's flows; :class:`GenerationError` when any family's
        set is incomplete."""
        return asyncio.run(_generate(self))


@dataclass
class Generated:
    """The generated flows, family by family, and the calls they took."""

    flows: list[Flow]
    asks: dict[str, int]
    """Questions asked per family."""
    calls: dict[str, Any] = field(default_factory=dict)
    """The teacher's call counts: calls paid for, answers from the cache, tokens."""


def plan_generation(options: GenerateOptions, config: ModelConfig) -> GenerationPlan:
    """Check the count, the tool catalogue, the capability file and the teacher role."""
    if options.per_family is None:
        raise UserError("says how many flows to generate for each family", "per_family")
    if options.per_family < 1:
        raise UserError(f"must be at least 1, got {options.per_family}", "per_family")
    if options.tools is None:
        raise UserError(
            "the teacher needs the agent's tool catalogue: give its tool definitions "
            "(OpenAI function format)",
            "tools",
        )
    tools = load_tools_file(options.tools)
    if not tools:
        raise InputError(options.tools, None, "holds no tool definitions")
    capabilities = read_capabilities(options.capabilities, {tool.name for tool in tools})
    role = resolve_role("teacher", config, options.teacher)
    check_role(role, [role.ref], config)
    return GenerationPlan(
        options.capabilities,
        capabilities,
        tools,
        options.per_family,
        role,
        config,
        load_teacher_prompt(),
    )


def check_flows_out(out: Path) -> None:
    """The flows file to write must be new: a file written by hand is never replaced."""
    if out.is_dir():
        raise UserError(f"{out} is a directory: name the flows file to write", "out")
    if out.exists():
        raise UserError(f"{out} already exists: remove it, or name another file", "out")
    check_writable(out, "out")


def write_flows(out: Path, flows: list[Flow]) -> None:
    """The flows as JSON Lines, written whole (0600) or not at all."""
    with private_atomic_writer(out) as handle:
        handle.writelines(dump_record(flow) + b"\n" for flow in flows)


@dataclass
class _FamilyOutcome:
    """One family's flows kept, the questions asked, and why the set is short (if it is)."""

    family: Family
    kept: list[Flow]
    asks: int
    problems: list[str]
    error: str | None = None


async def _generate(plan: GenerationPlan) -> Generated:
    counters = CallCounters()
    clients = open_clients(plan.role, [plan.role.ref], plan.config, counters)
    client = clients[plan.role.ref]
    try:
        outcomes = await asyncio.gather(
            *(_family(plan, family, client) for family in plan.capabilities.families)
        )
    finally:
        await close_clients(clients)
    short = [o for o in outcomes if len(o.kept) < plan.per_family]
    if short:
        raise GenerationError(_incomplete(short, plan.per_family))
    flows = [flow for outcome in outcomes for flow in outcome.kept]
    asks = {outcome.family.name: outcome.asks for outcome in outcomes}
    return Generated(flows, asks, counters.as_dict())


async def _family(plan: GenerationPlan, family: Family, client: ModelClient) -> _FamilyOutcome:
    """Ask for the family's flows, and again for those missing, up to ``MAX_ASKS`` times."""
    request = render_request(family, plan.tools, plan.per_family, plan.prompt)
    messages = [
        Message(role="system", content=request.system),
        Message(role="user", content=request.user),
    ]
    outcome = _FamilyOutcome(family, [], 0, [])
    while outcome.asks < MAX_ASKS:
        outcome.asks += 1
        text, error = await _ask(client, plan.role.ref.model, messages)
        if error is not None:
            outcome.error = error
            return outcome
        found, outcome.problems = read_answer(text, family, plan, outcome.kept)
        outcome.kept += found[: plan.per_family - len(outcome.kept)]
        missing = plan.per_family - len(outcome.kept)
        if not missing:
            break
        if outcome.asks < MAX_ASKS:
            messages += _correction(request, text, outcome, missing)
    for number, flow in enumerate(outcome.kept, start=1):
        flow.id = f"{family.name}-{number}"
    return outcome


def _correction(
    request: TeacherRequest, answer: str, outcome: _FamilyOutcome, missing: int
) -> list[Message]:
    """The teacher's answer and the request that says what was wrong with it."""
    problems = outcome.problems or [f"the answer held {missing} tests fewer than asked for"]
    return [
        Message(role="assistant", content=answer or "(no text)"),
        Message(role="user", content=request.correction(problems, outcome.kept, missing)),
    ]


async def _ask(client: ModelClient, model: str, messages: list[Message]) -> tuple[str, str | None]:
    """One question: (the answer's text, None), or ('', the infrastructure error)."""
    request = LLMRequest(messages=list(messages), tools=None, params=dict(TEACHER_PARAMS))
    outcome = await client.generate(request, model, TEACHER_SEED)
    if outcome.error is not None:
        return "", redact(f"the call failed ({outcome.error})")
    message = outcome.response.message if outcome.response is not None else None
    return (message.text() if message is not None else ""), None


def read_answer(
    text: str, family: Family, plan: GenerationPlan, kept: list[Flow]
) -> tuple[list[Flow], list[str]]:
    """The usable tests of one answer, and what was wrong with the others (or the answer)."""
    answer = next((o for o in json_objects(text) if isinstance(o.get("flows"), list)), None)
    if answer is None:
        return [], ['no JSON object with a "flows" list was found in the answer']
    catalogue = {tool.name for tool in plan.tools}
    seen = {_said(flow) for flow in kept}
    flows, problems = [], []
    for number, raw in enumerate(answer["flows"], start=1):
        flow, problem = check_test(raw, family, catalogue, plan.prompt.sha256)
        if flow is not None and _said(flow) in seen:
            flow, problem = None, "repeats another test of this capability"
        if flow is None:
            problems.append(f"test {number}: {problem}")
            continue
        seen.add(_said(flow))
        flows.append(flow)
    return flows, problems


def check_test(
    raw: Any, family: Family, catalogue: set[str], prompt_sha256: str
) -> tuple[Flow | None, str | None]:
    """(the flow, None) when the teacher's test ``raw`` passes every check, else (None, what
    was wrong with it)."""
    if not isinstance(raw, dict):
        return None, "a test is a JSON object with seed, purpose, turns and expect_tools"
    seed = raw.get("seed")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 1 <= seed <= len(family.seeds):
        return None, f"seed: give the number of its seed conversation, 1 to {len(family.seeds)}"
    turns = raw.get("turns")
    if not isinstance(turns, list) or not MIN_TURNS <= len(turns) <= MAX_TURNS:
        count = len(turns) if isinstance(turns, list) else "no"
        return None, f"turns: {count} user turns; write {MIN_TURNS} to {MAX_TURNS}"
    purpose = raw.get("purpose", "")
    if not isinstance(purpose, str):
        return None, "purpose: a sentence saying what the test checks"
    problem = _turns_problem(turns) or _tools_problem(raw.get("expect_tools"), catalogue)
    if problem is not None:
        return None, problem
    try:
        flow = Flow(
            id=f"{family.name}-new",
            family=family.name,
            purpose=purpose.strip(),
            turns=[ScriptedTurn(user=t["user"].strip(), expect=t["expect"].strip()) for t in turns],
            expect_tools=list(raw.get("expect_tools") or []),
            seed_id=f"{family.name}-seed-{seed}",
            teacher_prompt_sha256=prompt_sha256,
        )
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(part) for part in error["loc"])
        return None, f"{field}: {error['msg']}"
    return flow, None


def _turns_problem(turns: list[Any]) -> str | None:
    """What is wrong with the turns: their shape, an expectation, a message's content."""
    for number, turn in enumerate(turns, start=1):
        where = f"turns[{number}]"
        if not isinstance(turn, dict) or not isinstance(turn.get("user"), str):
            return f"{where}: a turn is an object with user and expect"
        if not turn["user"].strip():
            return f"{where}.user: the user's message is empty"
        expect = turn.get("expect")
        if not isinstance(expect, str) or is_placeholder(expect):
            return f"{where}.expect: state the outcome a good answer reaches"
        problem = message_problem(turn["user"])
        if problem is not None:
            return f"{where}.user: {problem}"
    return None


def message_problem(text: str) -> str | None:
    """Why a user message cannot go in a test (an invented id, a secret, a destructive
    request), or None."""
    if _UUID.search(text) or _NUMBERED_ID.search(text) or _CODED_ID.search(text):
        return "holds an id the user could not know: refer to things by what the user sees"
    if redact(text) != text:
        return "holds something shaped like a secret: never put one in a test"
    if _DESTRUCTIVE.search(text):
        return "asks for something destructive: tests never do"
    return None


def _tools_problem(tools: Any, catalogue: set[str]) -> str | None:
    if tools is None:
        return None
    if not isinstance(tools, list) or not all(isinstance(name, str) for name in tools):
        return "expect_tools: a list of tool names"
    unknown = [name for name in tools if name not in catalogue]
    if unknown:
        return (
            f"expect_tools: {unknown[0]!r} is not a tool of the catalogue "
            f"(the tools are {', '.join(sorted(catalogue))})"
        )
    return None


def _said(flow: Flow) -> tuple[str, ...]:
    """The user's messages, as a key that tells repeated tests apart from new ones."""
    return tuple(" ".join(turn.user.lower().split()) for turn in flow.turns or [])


def _incomplete(short: list[_FamilyOutcome], wanted: int) -> str:
    """The error: the count missing in each short family, and why."""
    counts = ", ".join(
        f"{o.family.name} is missing {wanted - len(o.kept)} of {wanted}" for o in short
    )
    reasons = "; ".join(
        f"{o.family.name}: {o.error or '; '.join(o.problems[:3]) or 'too few tests'}" for o in short
    )
    return bounded(
        f"the teacher gave an incomplete set of flows after at most {MAX_ASKS} asks per "
        f"family, so none were written: {counts} ({reasons})"
    )
