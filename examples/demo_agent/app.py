"""The demo agent: a small chat app with notes and a calendar, for trying ``abt simulate`` on.

    python -m examples.demo_agent --db demo.db --model-base-url http://127.0.0.1:8000/v1 \\
        --model my-model            # any OpenAI-compatible server
    python -m examples.demo_agent --db demo.db --model local/smollm2   # the embedded model

``POST /sessions`` starts a conversation, ``POST /sessions/{id}/messages`` with
``{"message": "..."}`` streams the turn as server-sent events, ``DELETE /sessions/{id}`` ends it.
With ``--otlp-file FILE`` the app writes its own traces there as OTLP/JSON, and with
``--otlp-endpoint URL`` sends them to an OTLP/HTTP receiver such as ``abt collect``
(``telemetry.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import uvicorn
from fastapi import FastAPI, HTTPException, Request, Response
from fastapi.responses import StreamingResponse
from pydantic import BaseModel

from .agent import Model, model_from, turn
from .store import open_db

if TYPE_CHECKING:
    from .telemetry import Telemetry


class UserMessage(BaseModel):
    """What the user says in one turn."""

    message: str


def create_app(db_path: Path, model: Model, telemetry: Telemetry | None = None) -> FastAPI:
    """The app over the database at ``db_path``, its agent asking ``model``; each turn traced
    by ``telemetry`` when given."""
    app = FastAPI(title="demo agent")
    sessions: dict[str, list[dict[str, Any]]] = {}
    open_db(db_path).close()  # the tables (and sample rows) exist before the first turn

    @app.get("/health")
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.post("/sessions", status_code=201)
    async def create_session() -> dict[str, str]:
        session_id = uuid.uuid4().hex
        sessions[session_id] = []
        return {"id": session_id}

    @app.delete("/sessions/{session_id}", status_code=204)
    async def delete_session(session_id: str) -> Response:
        if sessions.pop(session_id, None) is None:
            raise HTTPException(404, f"no session {session_id}")
        return Response(status_code=204)

    @app.post("/sessions/{session_id}/messages")
    async def send(session_id: str, body: UserMessage, request: Request) -> StreamingResponse:
        history = sessions.get(session_id)
        if history is None:
            raise HTTPException(404, f"no session {session_id}")
        turn_model, span = model, None
        if telemetry is not None:
            span = telemetry.turn_span(request.headers, session_id)
            turn_model = telemetry.traced(model, span)
        return StreamingResponse(
            stream(turn_model, db_path, history, body.message, span),
            media_type="text/event-stream",
        )

    return app


async def stream(
    model: Model, db_path: Path, history: list[dict[str, Any]], message: str, span: Any = None
) -> AsyncIterator[str]:
    """The turn's events as server-sent events; one connection per turn, so that the file can
    be restored between conversations while the app runs. The turn's span, if traced, ends
    with the stream."""
    db = open_db(db_path)
    try:
        async for event, data in turn(model, db, history, message):
            yield f"event: {event}\ndata: {json.dumps(data)}\n\n"
    finally:
        db.close()
        if span is not None:
            span.end()


def main() -> None:
    """Serve the app on 127.0.0.1 (flags, else DEMO_AGENT_* environment variables)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, default=os.environ.get("DEMO_AGENT_DB", "demo_agent.db"))
    parser.add_argument("--model", default=os.environ.get("DEMO_AGENT_MODEL", "local/smollm2"))
    parser.add_argument("--model-base-url", default=os.environ.get("DEMO_AGENT_BASE_URL"))
    parser.add_argument(
        "--api-key-env", default="DEMO_AGENT_API_KEY", help="variable holding the model's key"
    )
    parser.add_argument("--port", type=int, default=8011)
    parser.add_argument("--fd", type=int, help="serve on this open socket (tests pass one)")
    parser.add_argument(
        "--otlp-file",
        type=Path,
        default=os.environ.get("DEMO_AGENT_OTLP_FILE"),
        help="append the app's own traces to this file as OTLP/JSON",
    )
    parser.add_argument(
        "--otlp-endpoint",
        default=os.environ.get("DEMO_AGENT_OTLP_ENDPOINT"),
        help="send the app's own traces to this OTLP/HTTP endpoint (e.g. abt collect's "
        "http://127.0.0.1:4318/v1/traces)",
    )
    args = parser.parse_args()
    model = model_from(args.model, args.model_base_url, os.environ.get(args.api_key_env))
    telemetry = None
    if args.otlp_file is not None or args.otlp_endpoint is not None:
        from .telemetry import Telemetry  # the OpenTelemetry SDK only when traces are asked for

        telemetry = Telemetry.exporting(args.model, args.otlp_file, args.otlp_endpoint)
    app = create_app(args.db, model, telemetry)
    if args.fd is not None:
        uvicorn.run(app, fd=args.fd, log_level="warning")
    else:
        uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
