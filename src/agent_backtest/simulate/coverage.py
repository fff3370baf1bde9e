"""The coverage manifest: of a corpus of flows, which seeds runs have judged, family by family.

A seed is a flow's ``seed_id``, else its id, so retries and regenerations of one conversation
count once. A seed is judged when any of the runs reached ``pass`` or ``fail`` on a flow of that
seed, whatever target it was played through (the manifest names the targets, so a mix shows);
it is pending when no run played it or every verdict on it was ``uncertain``. The percentages
are exact counts of the corpus, not estimates, so they carry counts and no interval.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import Field

from agent_backtest.errors import UserError
from agent_backtest.record_model import StrictModel, TaggedRecord, schema_tag
from agent_backtest.runs.files import private_atomic_writer
from agent_backtest.simulate.flows import YAML_SUFFIXES, read_flows
from agent_backtest.simulate.manifest import SimulateManifest, TargetRecord
from agent_backtest.simulate.models import Flow, Verdict

COVERAGE_SCHEMA = "abt.simulate_coverage/1"
FLOW_SUFFIXES = (".jsonl", ".json", *YAML_SUFFIXES)


def target_label(target: TargetRecord) -> str:
    """A target as the manifest names it: its name @ its file's sha256 (12 digits)."""
    return f"{target.name}@{target.file.sha256[:12]}"


def seed_of(flow: Flow) -> str:
    """What ties a flow to its origin across runs: its ``seed_id``, else its id."""
    return flow.seed_id or flow.id


class FamilyCoverage(StrictModel):
    """The seeds of one family (or of the whole corpus), judged and pending."""

    family: str
    seeds: int
    judged: int = Field(description="Seeds with a pass or fail in any of the runs.")
    pending: int = Field(description="Seeds never judged, or only ever uncertain.")
    uncertain_only: int = Field(description="The pending seeds that were played: uncertain.")
    percent_covered: float = Field(description="judged / seeds × 100, to one decimal.")

    @classmethod
    def of(
        cls, family: str, seeds: set[str], judged: set[str], uncertain: set[str]
    ) -> FamilyCoverage:
        """The figures of ``seeds`` given the seeds judged and those only ever uncertain."""
        done = len(seeds & judged)
        return cls(
            family=family,
            seeds=len(seeds),
            judged=done,
            pending=len(seeds) - done,
            uncertain_only=len((seeds & uncertain) - judged),
            percent_covered=_percent(done, len(seeds)),
        )

    @classmethod
    def total(cls, families: list[FamilyCoverage]) -> FamilyCoverage:
        """The families' figures added up (a seed in two families counts in each)."""
        seeds = sum(f.seeds for f in families)
        judged = sum(f.judged for f in families)
        return cls(
            family="total",
            seeds=seeds,
            judged=judged,
            pending=seeds - judged,
            uncertain_only=sum(f.uncertain_only for f in families),
            percent_covered=_percent(judged, seeds),
        )


def _percent(part: int, whole: int) -> float:
    return round(100 * part / whole, 1) if whole else 0.0


class CoverageManifest(TaggedRecord):
    """``coverage.json``, and what ``abt simulate coverage`` prints."""

    schema_: Literal["abt.simulate_coverage/1"] = schema_tag(COVERAGE_SCHEMA)
    corpus: list[str] = Field(description="The flow files read.")
    runs: list[str] = Field(description="The runs whose verdicts count.")
    targets: list[str] = Field(description="The targets those runs played through, as name@sha256.")
    families: list[FamilyCoverage]
    total: FamilyCoverage
    judged_outside_corpus: int = Field(
        description="Seeds the runs judged that the corpus does not hold."
    )

    def save(self, path: Path) -> None:
        """Write atomically (mode 0600)."""
        with private_atomic_writer(path) as handle:
            handle.write(self.model_dump_json(by_alias=True, indent=2).encode() + b"\n")


@dataclass(frozen=True)
class JudgedRun:
    """A simulate run as its findings and coverage read it: where it is, its manifest (None
    when it has no run.json), its flows and their verdicts by flow."""

    path: Path
    manifest: SimulateManifest | None
    flows: list[Flow]
    verdicts: dict[str, Verdict]

    @property
    def target(self) -> str | None:
        """name@sha256 (its first 12 digits) of the target; None when the run has no run.json."""
        return target_label(self.manifest.target) if self.manifest is not None else None


def coverage(
    corpus: Iterable[Path], flows: Iterable[Flow], runs: Iterable[JudgedRun]
) -> CoverageManifest:
    """The coverage of ``flows`` (read from the ``corpus`` files) by the verdicts of ``runs``."""
    runs = list(runs)
    judged: set[str] = set()
    uncertain: set[str] = set()
    for run in runs:
        for flow in run.flows:
            verdict = run.verdicts.get(flow.id)
            if verdict is not None:
                (uncertain if verdict.verdict == "uncertain" else judged).add(seed_of(flow))
    by_family: dict[str, set[str]] = {}
    for flow in flows:
        by_family.setdefault(flow.family, set()).add(seed_of(flow))
    families = [
        FamilyCoverage.of(family, seeds, judged, uncertain) for family, seeds in by_family.items()
    ]
    in_corpus = set().union(*by_family.values())
    return CoverageManifest(
        corpus=[str(path) for path in corpus],
        runs=[str(run.path) for run in runs],
        targets=sorted({run.target for run in runs if run.target}),
        families=families,
        total=FamilyCoverage.total(families),
        judged_outside_corpus=len(judged - in_corpus),
    )


def read_corpus(paths: Iterable[Path]) -> tuple[list[Path], list[Flow]]:
    """The flow files of a corpus (each path a flows file, or a folder whose JSONL, JSON and YAML
    files are flows files) and their flows."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            inside = sorted(p for p in path.iterdir() if p.suffix.lower() in FLOW_SUFFIXES)
            if not inside:
                raise UserError(f"{path} holds no flows file (.jsonl, .json, .yaml)", "corpus")
            files.extend(inside)
        elif path.is_file():
            files.append(path)
        else:
            raise UserError(
                f"{path} does not exist: name a flows file or a folder of them", "corpus"
            )
    if not files:
        raise UserError("name at least one flows file or folder of them", "corpus")
    return files, [located.flow for file in files for located in read_flows(file)]
