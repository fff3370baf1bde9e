"""The bars ``abt gate`` checks a run against, one flag each (``--min-agreement F``, …)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any


@dataclass
class GateBars:
    """A scored run's agreement bars, and a simulate run's pass-rate bar; None is not asked."""

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

    def given(self) -> dict[str, Any]:
        """The bars by name, as ``api.gate`` takes them."""
        return dataclasses.asdict(self)
