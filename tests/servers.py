"""What the HTTP servers the tests start on 127.0.0.1 share: serving from a thread, and a stop
that returns at once."""

from __future__ import annotations

import socketserver
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# How often ``serve_forever`` looks for a stop request. Its default, 0.5 s, was waited out by
# every test that stopped a server (a few hundred of them).
STOP_POLL_SECONDS = 0.01


def serve_in_thread(server: socketserver.BaseServer) -> threading.Thread:
    """Serve ``server`` from a daemon thread, started; it ends when ``stop_serving`` is called."""
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": STOP_POLL_SECONDS}, daemon=True
    )
    thread.start()
    return thread


def stop_serving(server: socketserver.BaseServer) -> None:
    """Stop serving and close the listening socket."""
    server.shutdown()
    server.server_close()


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """``handler`` served on 127.0.0.1 from a thread, one thread per connection, while the
    block runs; its ``http://127.0.0.1:PORT``."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    serve_in_thread(server)
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        stop_serving(server)
