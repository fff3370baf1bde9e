"""A run's verdicts as Phoenix span annotations on the production spans they judge.

Each verdict is one ``abt.agreement`` annotation (label: the bucket, score: the agreement,
explanation: the candidate's answer in short, metadata: run, candidate model, unit) sent to
``POST /v1/span_annotations``. Its identifier names the run, and Phoenix keeps one annotation
per (name, span, identifier): pushing a run again updates its annotations, never adds more,
while another run's verdicts sit beside them.
"""

from __future__ import annotations

import re
from typing import Any

from agent_backtest.backends.rest_client import RestClient, shown_url
from agent_backtest.backends.run_verdicts import RunVerdicts, UnitVerdict, batches
from agent_backtest.errors import UserError

ANNOTATION_NAME = "abt.agreement"
ANNOTATIONS_PATH = "/v1/span_annotations"
BATCH = 100
MISSING_SPANS = re.compile(r"[0-9a-f]{16}")


def annotation(verdict: UnitVerdict, verdicts: RunVerdicts) -> dict[str, Any]:
    """The Phoenix annotation of one verdict."""
    return {
        "span_id": verdict.span_id,
        "name": ANNOTATION_NAME,
        "annotator_kind": "CODE",
        "identifier": f"abt:{verdicts.run_id}",
        "result": {
            "label": verdict.bucket,
            "score": verdict.score,
            "explanation": verdict.explanation,
        },
        "metadata": {
            "run_id": verdicts.run_id,
            "candidate_model": verdicts.candidate,
            "unit_id": verdict.unit_id,
            "repeats": verdict.repeats,
        },
    }


def push_annotations(client: RestClient, verdicts: RunVerdicts) -> int:
    """Write every verdict as an annotation; how many were written."""
    written = 0
    for batch in batches(verdicts.verdicts, BATCH):
        body = {"data": [annotation(verdict, verdicts) for verdict in batch]}
        response = client.post(ANNOTATIONS_PATH, body, params={"sync": "true"})
        if response.status_code == 404:
            missing = MISSING_SPANS.findall(response.text)
            raise UserError(
                f"Phoenix at {shown_url(client.endpoint)} does not hold the run's production "
                f"spans ({len(missing) or 'some'} missing, such as {', '.join(missing[:3])}): "
                "push to the Phoenix the traces were pulled from",
                "endpoint",
            )
        written += len(response.json().get("data") or batch)
    return written
