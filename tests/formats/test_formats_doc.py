"""docs/formats.md and the README's input table agree with the readers."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from agent_backtest.formats import ReadOptions, SessionStream
from agent_backtest.formats.dialects import CALL_DIALECTS

ROOT = Path(__file__).parents[2]
DOC = (ROOT / "docs" / "formats.md").read_text()
CORPUS = ROOT / "tests" / "fixtures" / "frameworks"


def framework_rows() -> list[list[str]]:
    section = DOC.split("## Frameworks")[1].split("\n## ")[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and "`" in line]
    return [[cell.strip() for cell in row.strip("|").split("|")] for row in rows]


def reasons() -> set[str]:
    """The reasons the doc's last table names."""
    section = DOC.split("## Reasons an LLM step gives no unit")[1]
    return set(re.findall(r"^\| `([^`]+)` \|", section, flags=re.MULTILINE))


def test_every_dialect_is_in_the_doc_and_the_readme() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "docs/formats.md" in readme
    for name, _ in CALL_DIALECTS:
        assert f"(`{name}`" in DOC or f"`{name}`)" in DOC, name
    for family in ("OTel GenAI", "OpenInference", "OpenLLMetry", "Vercel AI SDK", "Google ADK"):
        assert family in readme and family in DOC


def test_the_framework_table_says_what_the_readers_do() -> None:
    rows = framework_rows()
    assert {row[1].strip("`") for row in rows} == {
        f"{path.parent.name}/{path.name.removesuffix('.trace.json')}"
        for path in CORPUS.glob("*/*.trace.json")
    }
    for _, sample, read_by, units, why in rows:
        stream = SessionStream(
            [CORPUS / f"{sample.strip('`')}.trace.json"], ReadOptions(explain=True)
        )
        list(stream)
        readings = stream.summaries[0].skips.readings or []
        usable = Counter(r.dialect for r in readings if r.kind == "llm" and r.reason is None)
        blocked = {r.reason for r in readings if r.kind == "llm" and r.reason is not None}
        assert sum(usable.values()) == int(units), sample
        assert set(usable) == ({read_by} if read_by else set()), sample
        assert blocked == set(re.findall(r"`([a-z_:A-Z]+)`", why)) & reasons(), sample
