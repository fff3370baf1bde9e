"""Every shell block of the how-to and architecture pages that is a command on the shipped data
runs here, as the page writes it, in order, and exits 0; output a page shows right after such a
block (no prose between) is what it prints; a file a page shows under its name is written first.

Left out, each listed in ``LEFT_OUT`` with its rule:

- a block that needs a key (a hosted model: OpenAI, Anthropic, a judge of the user's choice);
- a block on the user's own files (their traces, flows, target or agent config);
- a block that runs the embedded model: minutes on a CPU, and the suite runs that model in the
  README's demo and the prompt-change tutorial already;
- a block that serves, or talks to the user's running backend (``abt collect``, ``abt pull``,
  ``abt push``): tests/backends runs those against real servers it starts.

A shell block a page gains is run unless it is listed here, so no new command goes unchecked.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.test_docs import ROOT, command, fenced_blocks

DOCS = ROOT / "docs"
SHELL = {"sh", "bash"}

KEY = "needs a key"
USER_FILES = "runs on the user's own files"
EMBEDDED = "runs the embedded model"
BACKEND = "serves, or needs the user's running backend"
# (page, the block's first line) → why the block is not run
LEFT_OUT = {
    ("how-to/batches.md", "export OPENAI_API_KEY=sk-..."): KEY,
    ("how-to/collect.md", "abt collect --listen 127.0.0.1:4318 --out traces.jsonl"): BACKEND,
    (
        "how-to/collect.md",
        "export OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=http://127.0.0.1:4318/v1/traces",
    ): BACKEND,
    ("how-to/collect.md", "abt units traces.jsonl -o units.jsonl"): BACKEND,
    (
        "how-to/pull-and-push.md",
        "abt pull phoenix --endpoint http://127.0.0.1:6006 --project my-agent -o traces.jsonl",
    ): BACKEND,
    ("how-to/pull-and-push.md", "export LANGFUSE_HOST=https://cloud.langfuse.com"): BACKEND,
    ("how-to/pull-and-push.md", "abt push runs/mini --to otlp"): BACKEND,
    ("how-to/bench.md", "abt bench run tau_airline --agent local/smollm2"): EMBEDDED,
    ("how-to/bench.md", "abt bench run tau_airline --agent openai/gpt-4o"): KEY,
    ("how-to/judging-conversations.md", "abt simulate run --from runs/sim"): USER_FILES,
    ("how-to/patches.md", "abt replay runs/demo/units.jsonl --model local/smollm2"): EMBEDDED,
    ("how-to/providers-and-roles.md", "export OPENAI_API_KEY=..."): KEY,
    ("how-to/simulate.md", "python -m examples.demo_agent --db runs/demo_agent.db"): EMBEDDED,
}
# What a page's commands start from, made here without a model: patches.md works on the units of
# the README's demo run (runs/demo), which the same selection gives.
SET_UP = {
    "how-to/patches.md": [
        "abt units examples/tau_airline/gpt-4o-airline-tasks-00-24.json"
        " --tools examples/tau_airline/tools.json --recorded-model gpt-4o"
        " --per-session 2 --limit 8 -o runs/demo/units.jsonl"
    ],
}


def pages() -> list[str]:
    """The pages whose shell blocks this test reads: all but the tutorials (their own test runs
    them) and the generated reference."""
    return sorted(
        str(page.relative_to(DOCS))
        for page in DOCS.rglob("*.md")
        if page.parent.name not in ("tutorials", "reference")
    )


def left_out(page: str, body: str) -> str | None:
    """Why the block of ``page`` holding ``body`` is not run, or None when it runs."""
    first = body.splitlines()[0]
    reasons = [why for (p, start), why in LEFT_OUT.items() if p == page and first.startswith(start)]
    return reasons[0] if reasons else None


def shell_blocks(page: str) -> list[str]:
    """The bodies of the shell blocks of ``page``."""
    return [body for info, body, _ in fenced_blocks(DOCS / page) if info in SHELL]


def test_every_left_out_block_is_on_its_page() -> None:
    """A listed block that a page no longer has is a stale entry: the list shrinks with the docs."""
    for page, start in LEFT_OUT:
        firsts = [body.splitlines()[0] for body in shell_blocks(page)]
        assert any(first.startswith(start) for first in firsts), f"{page}: no block {start!r}"


RUNNABLE = [
    page for page in pages() if any(left_out(page, body) is None for body in shell_blocks(page))
]


@pytest.mark.parametrize("page", RUNNABLE)
def test_a_pages_commands_on_the_shipped_data_run(page: str, tmp_path: Path) -> None:
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    environment = {**os.environ, "COLUMNS": "100", "NO_COLOR": "1"}

    def run(line: str) -> str:
        done = subprocess.run(
            command(line), cwd=tmp_path, capture_output=True, text=True, env=environment,
            timeout=300,
        )  # fmt: skip
        assert done.returncode == 0, f"{page}: {line}\n{done.stdout}\n{done.stderr}"
        return done.stdout + done.stderr

    for line in SET_UP.get(page, []):
        run(line)
    output, ran = None, 0
    for info, body, after_prose in fenced_blocks(DOCS / page):
        if after_prose:
            output = None
        title = re.search(r'title="([^"]+)"', info)
        if title:
            (tmp_path / title[1]).write_text(body, encoding="utf-8")
        elif info in SHELL and left_out(page, body) is None:
            for line in body.splitlines():
                output, ran = run(line), ran + 1
            continue
        elif info == "text" and output is not None:
            shown = [line.rstrip() for line in body.splitlines()]
            printed = [line.rstrip() for line in output.splitlines()]
            assert printed[: len(shown)] == shown, f"{page}: the output shown is not printed"
        output = None
    assert ran, f"{page}: no command ran"
