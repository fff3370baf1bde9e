"""The demo agent: a small chat app with notes and a calendar, for trying ``abt simulate`` on.

    python -m examples.demo_agent --db demo.db --model-base-url http://127.0.0.1:8000/v1 \\
        --model my-model            # any OpenAI-compatible server
    python -m examples.demo_agent --db demo.db --model local/smollm2   # the embedded model

``POST /sessions`` starts a conversation, ``POST /sessions/{id}/messages`` with
``{"message": "..."}`` streams the turn as server-sent events, ``DELETE /sessions/{id}`` ends it.
"""

from __future__ import annotations

import argparse
import json
import os
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import uvicorn
from fastapi import FastAPI, HTTPException, Response
from fastapi.responses import StreamingResponse
from pydantic import BaseModel

from .agent import Model, model_from, turn
from .store import open_db


class UserMessage(BaseModel):
    """What the user says in one turn."""

    message: str


def create_app(db_path: Path, model: Model) -> FastAPI:
    """The app over the database at ``db_path``, its agent asking ``model``."""
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
    async def send(session_id: str, body: UserMessage) -> StreamingResponse:
        history = sessions.get(session_id)
        if history is None:
            raise HTTPException(404, f"no session {session_id}")
        return StreamingResponse(
            stream(model, db_path, history, body.message), media_type="text/event-stream"
        )

    return app


async def stream(
    model: Model, db_path: Path, history: list[dict[str, Any]], message: str
) -> AsyncIterator[str]:
    """The turn's events as server-sent events; one connection per turn, so that the file can
    be restored between conversations while the app runs."""
    db = open_db(db_path)
    try:
        async for event, data in turn(model, db, history, message):
            yield f"event: {event}\ndata: {json.dumps(data)}\n\n"
    finally:
        db.close()


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
    args = parser.parse_args()
    model = model_from(args.model, args.model_base_url, os.environ.get(args.api_key_env))
    app = create_app(args.db, model)
    if args.fd is not None:
        uvicorn.run(app, fd=args.fd, log_level="warning")
    else:
        uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
