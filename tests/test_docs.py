"""The docs site builds strictly, and its reference pages say what the code says today."""

from __future__ import annotations

import importlib
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent_backtest.cli.reference import PAGES, REGENERATE
from tests.optional import require

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "docs" / "reference"


@pytest.mark.parametrize("page", sorted(PAGES))
def test_reference_page_matches_the_code(page: str) -> None:
    written = (REFERENCE / page).read_text(encoding="utf-8")
    assert written == PAGES[page](), f"docs/reference/{page} is stale: run {REGENERATE}"


def build_site(project: Path, site: Path) -> subprocess.CompletedProcess[str]:
    """``mkdocs build --strict`` of ``project`` into ``site``, as CI runs it."""
    require("material", "pip install 'agent-backtest[docs]'")
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=project,
        capture_output=True,
        text=True,
        # the theme's notice about its successor is not a warning about these pages
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=300,
    )


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    """A broken link or anchor, or a page left out of the nav, is a warning that fails the build
    (mkdocs.yml turns each into one)."""
    build = build_site(ROOT, tmp_path / "site")
    assert build.returncode == 0, build.stderr
    assert "WARNING" not in build.stderr, build.stderr
    assert (tmp_path / "site" / "reference" / "commands" / "index.html").is_file()
    assert (tmp_path / "site" / "how-to" / "statistics" / "index.html").is_file()


def test_the_api_page_documents_every_public_name() -> None:
    """docs/reference/api.md renders each name of ``agent_backtest.api`` from its docstring,
    from the module that defines it: a name added to the API without the page fails here."""
    import agent_backtest.api as api

    page = (REFERENCE / "api.md").read_text(encoding="utf-8")
    rendered = re.findall(r"^::: ([\w.]+)$", page, re.M)
    assert sorted(path.rsplit(".", 1)[1] for path in rendered) == sorted(api.__all__)
    for path in rendered:  # each a function or class of that name where the page says
        module, name = path.rsplit(".", 1)
        assert getattr(importlib.import_module(module), name).__name__ == name, path


def test_a_broken_link_fails_the_build(tmp_path: Path) -> None:
    """The strict build is a real check: the same site with one link to a missing page fails."""
    project = copy_of_the_site(tmp_path)
    index = project / "docs" / "index.md"
    index.write_text(
        index.read_text(encoding="utf-8") + "\nSee [a page](how-to/no-such-page.md).\n",
        encoding="utf-8",
    )
    build = build_site(project, tmp_path / "site")
    assert build.returncode != 0
    assert "how-to/no-such-page.md" in build.stderr


def test_a_page_missing_from_the_nav_fails_the_build(tmp_path: Path) -> None:
    project = copy_of_the_site(tmp_path)
    (project / "docs" / "how-to" / "forgotten.md").write_text("# Forgotten\n", encoding="utf-8")
    build = build_site(project, tmp_path / "site")
    assert build.returncode != 0
    assert "how-to/forgotten.md" in build.stderr


def copy_of_the_site(tmp_path: Path) -> Path:
    """The docs and mkdocs.yml copied into a folder of ``tmp_path``, to break on purpose."""
    project = tmp_path / "project"
    shutil.copytree(ROOT / "docs", project / "docs")
    shutil.copy(ROOT / "mkdocs.yml", project / "mkdocs.yml")
    shutil.copytree(ROOT / "examples" / "ci", project / "examples" / "ci")  # shown by a page
    (project / "src").symlink_to(ROOT / "src")  # read by the API page
    return project


def fenced_blocks(page: Path) -> list[tuple[str, str, bool]]:
    """Every fenced block of ``page`` as (info string, body, whether prose comes before it since
    the block above), in order."""
    text = page.read_text(encoding="utf-8")
    blocks, end = [], 0
    for match in re.finditer(r"^```([^\n]*)\n(.*?)^```$", text, re.M | re.S):
        blocks.append((match[1].strip(), match[2], bool(text[end : match.start()].strip())))
        end = match.end()
    return blocks


TUTORIALS = ROOT / "docs" / "tutorials"
# The one tutorial that replays on the embedded model; the others run in seconds without it.
EMBEDDED_MODEL_TUTORIALS = {"prompt-change.md"}
# A block titled like this is a server the reader starts in another terminal and leaves running.
BACKGROUND = re.compile(r'^sh title="(\w+ terminal)"$')


def tutorial_pages() -> list[object]:
    """Every tutorial, the ones on the embedded model marked as such."""
    return [
        pytest.param(page.name, marks=pytest.mark.local_model)
        if page.name in EMBEDDED_MODEL_TUTORIALS
        else page.name
        for page in sorted(TUTORIALS.glob("*.md"))
    ]


def command(line: str) -> list[str]:
    """The program a tutorial's command line runs: ``abt`` as this checkout's CLI, ``python`` as
    this interpreter."""
    program, *args = shlex.split(line)
    if program == "abt":
        return [sys.executable, "-m", "agent_backtest.cli", *args]
    assert program == "python", f"{line!r} runs neither abt nor python"
    return [sys.executable, *args]


def start_in_background(line: str, cwd: Path) -> subprocess.Popen[bytes]:
    """A server a tutorial starts in another terminal, once its ``--port`` takes connections."""
    args = command(line)
    assert "--port" in args, f"{line!r}: a server the tutorial starts needs --port"
    port = int(args[args.index("--port") + 1])
    with (cwd / f"server-{port}.log").open("wb") as log:  # the server keeps its own copy
        server = subprocess.Popen(args, cwd=cwd, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
        except OSError:
            pass
        else:
            if server.poll() is None:  # not another process already serving on that port
                return server
        if server.poll() is not None or time.monotonic() > deadline:
            server.kill()
            output = (cwd / f"server-{port}.log").read_text(errors="replace")
            pytest.fail(f"{line!r} did not start serving on port {port}:\n{output}")
        time.sleep(0.05)


@pytest.mark.parametrize("page", tutorial_pages())
def test_a_tutorial_runs_as_written(page: str, tmp_path: Path) -> None:
    """Each file a tutorial shows (a block titled with its name) is written, each server it
    starts in another terminal (an ``sh`` block titled ``… terminal``) is started and left
    running, each ``sh`` command runs in order on the shipped data and exits 0, and output shown
    right after a command (no prose between) is what it prints."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    servers: list[subprocess.Popen[bytes]] = []
    try:
        run_tutorial(page, tmp_path, servers)
    finally:
        for server in servers:
            server.terminate()
            server.wait(timeout=10)


def run_tutorial(page: str, cwd: Path, servers: list[subprocess.Popen[bytes]]) -> None:
    """The blocks of ``page`` followed in ``cwd``; the servers started are added to ``servers``."""
    environment = {**os.environ, "COLUMNS": "100", "NO_COLOR": "1"}
    output, commands, outputs = None, 0, 0
    for info, body, after_prose in fenced_blocks(TUTORIALS / page):
        if after_prose:
            output = None
        title = re.search(r'title="([^"]+)"', info)
        if BACKGROUND.match(info):
            servers += [start_in_background(line, cwd) for line in body.splitlines()]
        elif title:
            (cwd / title[1]).write_text(body, encoding="utf-8")
        elif info == "sh":
            for line in body.splitlines():
                run = subprocess.run(
                    command(line),
                    cwd=cwd,
                    capture_output=True,
                    text=True,
                    env=environment,
                    timeout=900,
                )
                assert run.returncode == 0, f"{page}: {line}\n{run.stdout}\n{run.stderr}"
                output, commands = run.stdout + run.stderr, commands + 1
            continue
        elif info == "text" and output is not None:
            shown = [line.rstrip() for line in body.splitlines()]
            printed = [line.rstrip() for line in output.splitlines()]
            assert printed[: len(shown)] == shown, f"{page}: the output shown is not printed"
            outputs += 1
        output = None
    assert commands and outputs, f"{page}: no command, or no output shown after one"
