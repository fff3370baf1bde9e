"""What the HTTP servers the tests start on 127.0.0.1 share: serving from a thread, and a stop
that returns at once."""

from __future__ import annotations

import socketserver
import threading

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
