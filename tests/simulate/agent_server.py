"""A small real agent over HTTP on 127.0.0.1 for the simulate tests, with a log of every request.

Endpoints: ``GET /health``, ``POST /sessions`` (an agent session: ``{"id": ...}``),
``DELETE /sessions/ID``,
``POST /chat`` (JSON ``{session, message}``, answered in JSON), ``POST /form`` (the same as a
form), ``POST /stream`` (answered with server-sent events, the connection closed after each
answer). What the agent does is decided by the message: ``note: TEXT`` saves a note in its
SQLite database (a mutating tool), ``delete note N`` deletes one (another), ``notes`` lists them
(a read-only tool), ``slow`` answers after ``slow_seconds``, ``boom`` is an HTTP 500, ``fail``
(streamed) sends an error event, ``cut`` (streamed) stops mid-answer by closing the connection;
anything else is echoed. ``key`` makes every request need ``Authorization: Bearer KEY``; while
``outage`` is set every turn is answered 503 (sessions still open). Every request is appended
to ``log`` as one JSON line, so a test can prove which conversations were played, and how
often.

Run as ``python -m tests.simulate.agent_server --log FILE [--db FILE] [--delay S]``: it prints
its port on the first line of stdout.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sqlite3
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from tests.servers import serve_in_thread, stop_serving


class AgentServer:
    """The server and its settings; use as a context manager (or ``serve_forever``)."""

    def __init__(
        self,
        log: Path,
        db: Path | None = None,
        delay: float = 0.0,
        slow_seconds: float = 3.0,
        key: str | None = None,
        port: int = 0,
    ) -> None:
        self.log = log
        self.db = db
        self.delay = delay
        self.slow_seconds = slow_seconds
        self.key = key
        self.outage = False
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", port), self._handler())
        self.server.daemon_threads = True

    @property
    def base_url(self) -> str:
        """Where the agent listens."""
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> AgentServer:
        serve_in_thread(self.server)
        return self

    def __exit__(self, *exc: object) -> None:
        stop_serving(self.server)

    def record(self, entry: dict[str, Any]) -> None:
        """One line of the request log."""
        with self._lock, self.log.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(entry, sort_keys=True) + "\n")

    def new_session(self) -> str:
        with self._lock:
            return f"s-{next(self._ids)}"

    def act(self, message: str) -> dict[str, Any]:
        """What the agent does with a message: its reply and the tools it ran."""
        lowered = message.lower()
        if lowered.startswith("note:"):
            text = message.split(":", 1)[1].strip()
            self._execute("INSERT INTO notes (text) VALUES (?)", (text,))
            call = {"name": "add_note", "arguments": {"text": text}, "result": "saved"}
            return {"reply": f"Saved the note {text!r}.", "tools": [call]}
        if lowered.startswith("delete note "):
            number = int(lowered.removeprefix("delete note ").strip())
            self._execute("DELETE FROM notes WHERE id = ?", (number,))
            call = {"name": "delete_note", "arguments": {"id": number}, "result": "deleted"}
            return {"reply": f"Deleted note {number}.", "tools": [call]}
        if "notes" in lowered:
            rows = self._execute("SELECT text FROM notes ORDER BY id", ())
            listed = json.dumps([row[0] for row in rows])
            call = {"name": "list_notes", "arguments": {}, "result": listed}
            return {"reply": f"You have {len(rows)} notes.", "tools": [call]}
        return {"reply": f"You said: {message}", "tools": []}

    def _execute(self, sql: str, values: tuple[Any, ...]) -> list[Any]:
        assert self.db is not None, "this server has no database"
        with self._lock:
            connection = sqlite3.connect(self.db)
            try:
                rows = connection.execute(sql, values).fetchall()
                connection.commit()
            finally:
                connection.close()
        return rows

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        agent = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                """Quiet: the request log is the record."""

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if not self._authorised():
                    return
                if self.path == "/sessions":
                    session = agent.new_session()
                    agent.record({"path": self.path, "session": session})
                    return self._json(200, {"id": session})
                if self.path == "/form":
                    fields = {k: v[0] for k, v in parse_qs(body.decode()).items()}
                else:
                    fields = json.loads(body or b"{}")
                message = str(fields.get("message", ""))
                agent.record({"path": self.path, "session": fields.get("session"),
                              "message": message})  # fmt: skip
                if agent.delay:
                    time.sleep(agent.delay)
                if "slow" in message:
                    time.sleep(agent.slow_seconds)
                if "boom" in message:
                    return self._json(500, {"error": "internal error"})
                if agent.outage:
                    return self._json(503, {"error": "down for maintenance"})
                if self.path == "/stream":
                    return self._stream(message)
                done = agent.act(message)
                done["usage"] = {"in": len(message), "out": len(done["reply"])}
                self._json(200, done)

            def do_GET(self) -> None:
                if not self._authorised():
                    return
                agent.record({"path": self.path})
                if self.path != "/health":
                    return self._json(404, {"error": f"no {self.path}"})
                self._json(200, {"status": "ok"})

            def do_DELETE(self) -> None:
                if not self._authorised():
                    return
                agent.record({"path": self.path, "teardown": self.path.rsplit("/", 1)[-1]})
                self.send_response(204)
                self.end_headers()

            def _authorised(self) -> bool:
                if agent.key is None or self.headers.get("Authorization") == f"Bearer {agent.key}":
                    return True
                self._json(401, {"error": "unauthorised"})
                return False

            def _stream(self, message: str) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                if "fail" in message:
                    self._event("error", {"message": "backend unavailable"})
                    return self._event("done", {})
                if "cut" in message:  # part of the answer, then the connection closes
                    return self._event("token", {"delta": "The first half "})
                done = agent.act(message)
                self.wfile.write(b": a comment the client ignores\n\n")
                self._event("tools", {"offered": [{"name": "add_note"}, {"name": "list_notes"}]})
                for n, call in enumerate(done["tools"]):
                    self._event("tool_start", {"id": f"c{n}", "tool": call["name"],
                                               "input": json.dumps(call["arguments"])})  # fmt: skip
                    self._event("tool_end", {"id": f"c{n}", "output": call["result"]})
                for word in done["reply"].split(" "):
                    self._event("token", {"delta": word + " "})
                self._event("usage", {"in": len(message), "out": len(done["reply"])})
                self._event("done", {})

            def _event(self, name: str, data: dict[str, Any]) -> None:
                self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
                self.wfile.flush()

            def _json(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler


def create_notes_db(path: Path, notes: list[str]) -> Path:
    """A SQLite database of notes, in rollback-journal mode."""
    connection = sqlite3.connect(path)
    connection.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL)")
    connection.executemany("INSERT INTO notes (text) VALUES (?)", [(n,) for n in notes])
    connection.commit()
    connection.close()
    return path


def read_log(path: Path) -> list[dict[str, Any]]:
    """The request log's entries."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--log", type=Path, required=True)
    parser.add_argument("--db", type=Path)
    parser.add_argument("--delay", type=float, default=0.0)
    arguments = parser.parse_args()
    server = AgentServer(arguments.log, arguments.db, arguments.delay)
    print(server.server.server_address[1], flush=True)
    try:
        server.server.serve_forever()
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
