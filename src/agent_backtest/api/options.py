"""The groups of settings the jobs share, as plain data a Python caller or the CLI fills in.

Each group turns itself into what the library below needs (read options, a selection, a role)
and into what ``run.json`` records, so the API and every command read them the same way. A
field's name is the parameter a user error names; the CLI shows it as its flag.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

# Groups the API takes as the bench job defines them, as GateBars below.
from agent_backtest.bench.run_options import CaseOptions as CaseOptions
from agent_backtest.bench.run_options import RolloutOptions as RolloutOptions
from agent_backtest.errors import UserError
from agent_backtest.reporting.bars import GateBars as GateBars  # one of the groups the API takes
from agent_backtest.units.selection import DEFAULT_SPLIT_SALT

# The groups are plain data: the command line reads them to build its flags before any job
# runs, so what they turn into (roles, settings, the unit filter) is imported where they do.
if TYPE_CHECKING:
    from agent_backtest.executors import ExecutorKind
    from agent_backtest.formats import ReadOptions
    from agent_backtest.providers.config import ModelConfig, ModelRole
    from agent_backtest.providers.roles import RoleModel
    from agent_backtest.runs.manifest import BatchSettings, ReadSettings, SelectionSettings
    from agent_backtest.units import AgentConfig, Selection
    from agent_backtest.units.source import UnitSource

PathLike = str | Path


def _path(value: PathLike | None) -> Path | None:
    return Path(value) if value is not None else None


def _text(value: PathLike | None) -> str | None:
    return str(value) if value is not None else None


@dataclass
class ReadingOptions:
    """How trace inputs are read."""

    format: str | None = None
    """Read every input as this format instead of detecting it."""
    tools: PathLike | None = None
    """Tool definitions (OpenAI function format, JSON) for inputs that do not record them."""
    recorded_model: str | None = None
    """The model that answered, for formats that do not record it (τ-bench)."""
    strict: bool = False
    """Fail on the first record that cannot be used instead of skipping it."""

    def read_options(self) -> ReadOptions:
        """What the readers take (the tools file loaded)."""
        from agent_backtest.formats import ReadOptions
        from agent_backtest.formats.tools_file import load_tools_file

        tools = _path(self.tools)
        return ReadOptions(
            tools=load_tools_file(tools) if tools else None,
            recorded_model=self.recorded_model,
            strict=self.strict,
        )

    def source(self, inputs: Sequence[Path], agent: AgentConfig) -> UnitSource:
        """The units of ``inputs`` read with these options; options for reading traces given
        with a units file are refused rather than ignored."""
        from agent_backtest.formats.registry import local_input
        from agent_backtest.units import is_units_file
        from agent_backtest.units.source import UnitSource

        inputs = [local_input(path) for path in inputs]  # a pipe or FIFO is read once
        if len(inputs) == 1 and is_units_file(inputs[0]):
            given = (("format", self.format), ("tools", self.tools))
            for parameter, value in (*given, ("recorded_model", self.recorded_model)):
                if value is not None:
                    raise UserError("applies to trace files, not to a units file", parameter)
        return UnitSource(inputs, self.read_options(), agent, self.format)

    def settings(self) -> ReadSettings:
        """What run.json records."""
        from agent_backtest.runs.manifest import ReadSettings

        return ReadSettings(
            format=self.format,
            tools=str(self.tools) if self.tools is not None else None,
            recorded_model=self.recorded_model,
            strict=self.strict,
        )


@dataclass
class AgentOptions:
    """What the traces cannot say about the agent: router nodes, equivalent tools, …"""

    agent_config: PathLike | AgentConfig | None = None
    """An agent config file (TOML, JSON or YAML), or the config itself."""
    router_nodes: Sequence[str] = ()
    """Node names whose steps are routing decisions (added to the config's); commas split."""

    def config(self) -> AgentConfig:
        """The agent config, with the extra router nodes added."""
        from agent_backtest.units import AgentConfig, load_agent_config

        if isinstance(self.agent_config, AgentConfig):
            config = self.agent_config.model_copy(deep=True)
        elif self.agent_config is not None:
            config = load_agent_config(Path(self.agent_config))
        else:
            config = AgentConfig()
        extra = {name.strip() for names in self.router_nodes for name in names.split(",")}
        extra.discard("")
        if extra:
            config.router_nodes = sorted(set(config.router_nodes) | extra)
        return config

    @property
    def given(self) -> bool:
        """True when the caller gave any rule (so units read back are classified again)."""
        return self.agent_config is not None or bool(self.router_nodes)


@dataclass
class SelectionOptions:
    """Which units to keep."""

    steps: Literal["router", "action", "all"] = "all"
    """Keep router steps, action steps, or all."""
    nodes: Sequence[str] = ()
    """Keep only steps of these nodes."""
    from_models: Sequence[str] = ()
    """Keep only steps answered by these recorded models."""
    agent_versions: Sequence[str] = ()
    """Keep only steps served by these agent versions (as the traces recorded them)."""
    val_fraction: float | None = None
    """Label each session val with this probability (by a salted hash of its id), else test."""
    split_salt: str = DEFAULT_SPLIT_SALT
    """Salt of the split hash."""
    split: Literal["test", "val", "all"] = "all"
    """Keep only this split (needs val_fraction)."""
    exclude_sessions: PathLike | None = None
    """Leave out these sessions: a file of ids (one per line), a units or sessions JSONL, a run
    directory, a results.csv, or a JSON list of sessions or ids."""
    limit: int | None = None
    """Keep at most this many units."""
    per_session: int | None = None
    """Keep at most this many units of each session (a slice across sessions)."""

    def _as_given(self) -> dict[str, Any]:
        """The settings that the filter and its record both take as they were given."""
        given = ("steps", "val_fraction", "split_salt", "split", "limit", "per_session")
        return {name: getattr(self, name) for name in given}

    def selection(self) -> Selection:
        """The filter (the exclusion file read); an impossible combination is a user error."""
        from agent_backtest.units import Selection, read_session_ids

        excluded = _path(self.exclude_sessions)
        try:
            return Selection(
                **self._as_given(),
                nodes=frozenset(self.nodes),
                models=frozenset(self.from_models),
                agent_versions=frozenset(self.agent_versions),
                excluded_sessions=read_session_ids(excluded) if excluded else None,
            )
        except ValueError as exc:
            raise UserError(str(exc), "split") from None

    def settings(self) -> SelectionSettings:
        """What run.json records (the counts are filled in once the units are read)."""
        from agent_backtest.runs.manifest import ExclusionRecord, SelectionSettings

        excluded = self.exclude_sessions
        return SelectionSettings(
            **self._as_given(),
            nodes=sorted(self.nodes),
            from_models=sorted(self.from_models),
            agent_versions=sorted(self.agent_versions),
            excluded=ExclusionRecord(file=str(excluded), sessions=0, matched=0)
            if excluded is not None
            else None,
        )


@dataclass
class CallOptions:
    """How a role's calls are made; what is left None comes from ``[roles.NAME]`` or defaults."""

    concurrency: int | None = None
    """Calls in flight at once [default: 8; judges 16]."""
    rpm: float | None = None
    """At most this many requests per minute."""
    tpm: float | None = None
    """At most about this many prompt tokens per minute."""
    timeout: float | None = None
    """Seconds per attempt [default: 60]."""
    max_retries: int | None = None
    """Retries of a 429, 5xx, connection error or malformed answer [default: 4]."""
    max_answer_bytes: int | None = None
    """The most bytes (decoded) one answer may have; a larger one is the error
    answer_too_large, never held whole [default: the provider's max_answer_bytes, 32 MiB]."""
    base_url: str | None = None
    """Endpoint of the role's provider (any OpenAI-compatible server for openai/…)."""
    cache: bool = True
    """Read and fill the response cache."""
    cache_dir: PathLike | None = None
    """Where the response cache lives [default: the user cache dir]."""

    def role(self, name: str, model: RoleModel | None, config: ModelConfig) -> ModelRole:
        """The role ``name`` played by ``model``, with these settings over the config's and the
        defaults (over a resolved :class:`ModelRole`'s own)."""
        from agent_backtest.providers.roles import resolve_role

        return resolve_role(
            name,  # type: ignore[arg-type]
            config,
            model,
            concurrency=self.concurrency,
            rpm=self.rpm,
            tpm=self.tpm,
            timeout=self.timeout,
            max_retries=self.max_retries,
            max_answer_bytes=self.max_answer_bytes,
            base_url=self.base_url,
            cache=None if self.cache else False,
            cache_dir=_text(self.cache_dir),
        )

    def overrides(self) -> dict[str, object]:
        """The settings given, for changing a recorded role (a resume)."""
        given = {
            "concurrency": self.concurrency,
            "rpm": self.rpm,
            "tpm": self.tpm,
            "timeout": self.timeout,
            "max_retries": self.max_retries,
            "max_answer_bytes": self.max_answer_bytes,
        }
        return {key: value for key, value in given.items() if value is not None}


@dataclass
class BatchOptions:
    """Sending a replay's calls through the provider's batch API instead of live calls."""

    batch: bool = False
    """Send the calls as provider batches (OpenAI Batch API, Anthropic Message Batches): half
    the price, answers within 24 hours; a stopped run resumes by polling the same batches."""
    batch_poll: float | None = None
    """With --batch: the longest wait in seconds between two looks at a batch's status
    [default: 60]."""
    batch_size: int | None = None
    """With --batch: at most this many requests per batch [default: the provider's limit]."""

    def settings(self) -> BatchSettings | None:
        """What run.json records: None for live calls."""
        from agent_backtest.runs.manifest import BatchSettings

        if not self.batch:
            for parameter in ("batch_poll", "batch_size"):
                if getattr(self, parameter) is not None:
                    raise UserError("applies to batches: add --batch", parameter)
            return None
        poll = {"poll_seconds": self.batch_poll} if self.batch_poll is not None else {}
        return BatchSettings(size=self.batch_size, **poll)


@dataclass
class ExecutorOptions:
    """Where a replay's calls are made: in this process, or on a Ray cluster."""

    executor: ExecutorKind = "local"
    """Make the calls here (local) or on Ray workers (ray: needs the ray extra); the run
    directory is the same either way, and resumable by either."""
    ray_address: str | None = None
    """With --executor ray: the cluster to join (auto, or ray://HOST:PORT) [default: start
    one on this machine]."""

    def check(self) -> None:
        """The choice can be used (Ray installed; an address only with Ray)."""
        # Imported here: every command reads these groups, and the replay engine is not light.
        from agent_backtest.executors import check_executor

        check_executor(self.executor, self.ray_address)


@dataclass
class JudgeOptions:
    """How text answers and free-text arguments are graded (the judges themselves are roles:
    ``roles={"judge": …, "fallback_judge": …}``)."""

    judge_repeats: int = 1
    """Ask the judge N times (different seeds) and record their agreement."""
    exact_strings: bool = False
    """Compare string arguments exactly (no case, whitespace or punctuation normalisation)."""

    def __post_init__(self) -> None:
        if self.judge_repeats < 1:
            raise UserError(f"must be at least 1, got {self.judge_repeats}", "judge_repeats")
