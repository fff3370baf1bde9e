"""The teacher's prompt: the versioned request for test conversations of one capability.

The prompt is a package file, ``prompts/teacher.<version>.md``, in the sections the judges'
prompts use (``system``, ``user``, ``correction``); its sha256 is stored in every flow it
wrote (``Flow.teacher_prompt_sha256``). The correction request follows the teacher's answer in
the same conversation: it quotes what was wrong, lists the tests kept so far and asks for the
number still missing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agent_backtest.scoring.prompts import PromptTemplate, load_template
from agent_backtest.simulate.capabilities import Family
from agent_backtest.simulate.models import Flow
from agent_backtest.simulate.prompt_data import fill
from agent_backtest.simulate.rubric import catalogue_text
from agent_backtest.trace import ToolDef

PROMPT_DIR = Path(__file__).with_name("prompts")
TEACHER = "teacher"
TEACHER_VERSION = "v1"


def load_teacher_prompt(version: str = TEACHER_VERSION) -> PromptTemplate:
    """The teacher prompt at ``version``; its id is ``teacher@version``."""
    return load_template(TEACHER, version, PROMPT_DIR)


@dataclass(frozen=True)
class TeacherRequest:
    """The prompt filled in for one family: the first request's messages, and the data the
    correction requests are made from."""

    prompt: PromptTemplate
    system: str
    user: str
    tag: str

    def correction(self, problems: list[str], kept: list[Flow], missing: int) -> str:
        """The request after an invalid or short answer: what was wrong, what is kept."""
        lines = [f"- {problem}" for problem in problems] or ["- (none)"]
        kept_text = "No test was kept."
        if kept:
            firsts = "\n".join(f"- {flow.turns[0].user!r}" for flow in kept if flow.turns)
            kept_text = f"Kept so far ({len(kept)}), by their first message:\n{firsts}"
        return self.prompt.correction.substitute(
            problems="\n".join(lines), kept=kept_text, missing=missing
        )


def render_request(
    family: Family, tools: list[ToolDef], count: int, prompt: PromptTemplate
) -> TeacherRequest:
    """The prompt asking for ``count`` tests of ``family`` with the catalogue ``tools``."""
    system, user, tag, _ = fill(
        prompt,
        {
            "family": family_text(family),
            "seeds": seeds_text(family),
            "catalogue": catalogue_text(tools),
        },
        count=count,
    )
    return TeacherRequest(prompt, system, user, tag)


def family_text(family: Family) -> str:
    """The capability: its name, what it is, the tools it uses."""
    lines = [f"capability {family.name}: {family.description}"]
    if family.tools:
        lines.append(f"tools it uses: {', '.join(family.tools)}")
    return "\n".join(lines)


def seeds_text(family: Family) -> str:
    """Each seed: its number, the user's messages, what a good answer did."""
    parts = []
    for number, seed in enumerate(family.seeds, start=1):
        lines = [f"seed {number}:"]
        lines += [f"  user: {message}" for message in seed.turns]
        if seed.expect:
            lines.append(f"  a good answer: {seed.expect}")
        parts.append("\n".join(lines))
    return "\n".join(parts)
