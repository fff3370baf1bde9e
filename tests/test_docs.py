"""The docs site builds strictly, and its reference pages say what the code says today."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
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
    return project
