"""What a benchmark directory holds, and what a bench run records per episode.

A **benchmark** is a directory::

    manifest.json   BenchmarkManifest: name, version, release, training_prohibited, rules
    cases.jsonl     one Case a line: the public input an agent may see
    gold.jsonl      one Gold a line (or the file the manifest names): what grading compares with

The cases and the gold are separate files so that nothing which reads a case can reach the gold:
the gold is read only after every rollout has ended, by grading.

A **bench run** appends one :class:`EpisodeRecord` to ``episodes.jsonl`` the moment an episode
ends (its trace in ``traces/EPISODE.json``), then, once every rollout has ended and the gold has
been read, one :class:`GradeRecord` per episode to ``grades.jsonl``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field

from agent_backtest.record_model import StrictModel, TaggedRecord, schema_tag
from agent_backtest.units.answer_key import CallKey

BENCHMARK_SCHEMA = "abt.benchmark/1"
EPISODE_SCHEMA = "abt.episode/1"
GRADE_SCHEMA = "abt.grade/1"


class EpisodeRules(StrictModel):
    """How an episode runs and when it ends."""

    model_config = ConfigDict(frozen=True)

    max_steps: int = Field(default=30, ge=1, description="Agent turns at most; then it ends.")
    first_tool_call_only: bool = Field(
        default=False, description="Run only the first tool call of an agent turn (τ-bench)."
    )
    stop_marker: str | None = Field(
        default="###STOP###", description="A user message holding it ends the episode."
    )
    reward_requires_end: bool = Field(
        default=True,
        description="An episode that hit max_steps without ending gets reward 0.",
    )


class BenchmarkManifest(TaggedRecord):
    """``manifest.json`` of a benchmark directory."""

    schema_: Literal["abt.benchmark/1"] = schema_tag(BENCHMARK_SCHEMA)
    name: str
    version: str
    release: str = Field(description="The kind of release: public, private, internal, …")
    training_prohibited: bool = Field(
        default=False, description="No episode of this benchmark may be exported for training."
    )
    environment: str = Field(
        description="The environment's registered name, or module:Class of a user's own."
    )
    gold: str = Field(default="gold.jsonl", description="The gold file, relative to the directory.")
    graders: list[str] = Field(
        default_factory=lambda: ["final_state", "outputs"],
        description="Reward components, in order: final_state, outputs, tool_calls, rubric, "
        "or module:function of a user's grader.",
    )
    rules: EpisodeRules = Field(default_factory=EpisodeRules)
    user_prompt: str = Field(
        default="abt",
        description="The simulated user's system prompt a run gives by default: abt (abt's own) "
        "or tau (τ-bench's user simulator, for figures comparable with τ-bench's).",
    )


class Case(StrictModel):
    """One benchmark case as the agent side may see it: never any gold."""

    id: str
    instruction: str | None = Field(
        default=None, description="What the simulated user wants, played by the user role."
    )
    messages: list[dict[str, Any]] | None = Field(
        default=None, description="Opening messages (OpenAI chat format), instead of a user."
    )
    environment: str | None = Field(default=None, description="Overrides the manifest's.")
    metadata: dict[str, Any] = Field(default_factory=dict)


class GoldAction(StrictModel):
    """One expected tool call: what a correct episode does, in order."""

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    key: CallKey | None = Field(
        default=None, description="Acceptable values per argument, for the tool_calls grader."
    )


class Gold(StrictModel):
    """What grading compares one case's episodes with. Read only after the rollouts."""

    case_id: str
    actions: list[GoldAction] = Field(
        default_factory=list,
        description="The gold actions; final_state replays them on a fresh environment.",
    )
    actions_in_order: bool = Field(default=True, description="tool_calls: order matters.")
    only_these_calls: bool = Field(
        default=False,
        description="tool_calls: a call beyond the gold actions is wrong too (as BFCL grades); "
        "else other calls (look-ups, say) are allowed.",
    )
    outputs: list[str] = Field(
        default_factory=list, description="Strings some agent message must say (outputs grader)."
    )
    final_state_hash: str | None = Field(
        default=None, description="The expected state hash, when not computed from the actions."
    )
    rubric: list[str] = Field(default_factory=list, description="Items the judge checks.")


class EpisodeError(StrictModel):
    """An engineering failure: no reward, never a zero; counted apart from the means."""

    kind: str = Field(
        description="model_<call error kind> (model_timeout, model_http_5xx, …), user_<…>, "
        "environment_error, episode_timeout."
    )
    detail: str


class EpisodeRecord(TaggedRecord):
    """One line of ``episodes.jsonl``: how one rollout of one case went, before grading."""

    schema_: Literal["abt.episode/1"] = schema_tag(EPISODE_SCHEMA)
    episode_id: str
    case_id: str
    rollout: int
    seed: int
    prompt_group: str
    ended_by: Literal["stop_marker", "terminal_tool", "step_limit", "answer", "error"] = Field(
        description="answer: the agent answered and there is no user to reply (opening messages)."
    )
    error: EpisodeError | None = None
    steps: int = Field(description="Agent turns taken.")
    tool_calls: int = Field(description="Tool calls the environment ran.")
    model_calls: int = Field(description="Calls of the agent role (the user role's not counted).")
    input_tokens: int | None = None
    output_tokens: int | None = None
    seconds: float
    state_hash: str | None = Field(default=None, description="The environment's, at the end.")
    trace: str = Field(description="The canonical session, relative to the run directory.")

    @property
    def key(self) -> tuple[str, int]:
        """(case_id, rollout): one record each."""
        return self.case_id, self.rollout


class GradeRecord(TaggedRecord):
    """One line of ``grades.jsonl``: the reward of one episode and its components."""

    schema_: Literal["abt.grade/1"] = schema_tag(GRADE_SCHEMA)
    episode_id: str
    case_id: str
    rollout: int
    reward: float | None = Field(description="None for an engineering error: no reward.")
    components: dict[str, float | None] = Field(
        default_factory=dict, description="Each grader's value; None where it could not grade."
    )
    reasons: dict[str, str] = Field(
        default_factory=dict, description="Why a component is below 1, in a few words."
    )

    @property
    def key(self) -> tuple[str, int]:
        """(case_id, rollout): the key of the episode it grades."""
        return self.case_id, self.rollout
