"""Every reader, fed mutations of the real fixtures, reads or refuses in one line: never a crash.

Seeded (``derandomize``): the same examples every run, so a failure here is one to fix, not
noise. ``benchmarks/fuzz_readers.py`` runs the same mutations by the ten thousand.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.formats.mutations import FIXTURE_FORMATS, fixture_bytes, mutate, read_everything

CONTENTS = fixture_bytes()


@settings(
    max_examples=250,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    seed=st.integers(min_value=0, max_value=2**32),
    fixture=st.sampled_from(sorted(FIXTURE_FORMATS)),
    forced=st.booleans(),
)
def test_a_mutated_input_is_read_or_refused_in_one_short_line(
    tmp_path: Path, seed: int, fixture: str, forced: bool
) -> None:
    case = mutate(seed, fixture, CONTENTS)
    path = tmp_path / f"case{case.suffix}"
    path.write_bytes(case.data)
    outcome = read_everything(path, case.format if forced else None)
    assert outcome == "ok" or outcome.startswith("refused: ")
    assert "\n" not in outcome and len(outcome) < 1_500, outcome[:300]


@pytest.mark.parametrize("fixture", sorted(FIXTURE_FORMATS))
def test_every_fixture_reads_clean_unmutated(tmp_path: Path, fixture: str) -> None:
    path = tmp_path / Path(fixture).name
    path.write_bytes(CONTENTS[fixture])
    assert read_everything(path, FIXTURE_FORMATS[fixture]) == "ok"
