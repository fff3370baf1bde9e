"""The bars a CI gate asks of a run, as plain data a Python caller or ``abt gate`` fills in.

Kept apart from the checks (``reporting/gate.py``) so that the command line can offer them as
flags without loading the run models.
"""

from __future__ import annotations

from dataclasses import dataclass, fields


@dataclass(frozen=True)
class GateBars:
    """The bars asked of a run; None is not asked. A scored replay run takes the agreement
    bars (every one but ``min_pass_rate``), a simulate run ``min_pass_rate``."""

    min_agreement: float | None = None
    """Agreement must be at least F."""
    min_strict: float | None = None
    """Strict agreement must be at least F."""
    min_decided: float | None = None
    """At least this share of answers must be decided (by the matcher, the judge or the same
    text) [default: more than none]."""
    max_infra_errors: int | None = None
    """At most N answers may end in an infrastructure error of the candidate's call."""
    max_infra_error_rate: float | None = None
    """At most this share of answers may end in an infrastructure error of the candidate's
    call."""
    max_undecided: float | None = None
    """At most this share of answers may be undecided for infrastructure: the candidate's call
    or the judge's failed [default: 0.05]."""
    min_pass_rate: float | None = None
    """A simulate run's pass rate (over its flows judged pass or fail) must be at least F."""

    def run_bars_given(self) -> list[str]:
        """The names of the scored replay run's bars that are set."""
        return [
            bar.name
            for bar in fields(self)
            if bar.name != "min_pass_rate" and getattr(self, bar.name) is not None
        ]
