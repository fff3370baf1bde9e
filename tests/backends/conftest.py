"""A real Phoenix server for the tests of this folder: started once per session on a free
127.0.0.1 port, with its SQLite database in a temporary folder, and stopped at the end."""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.optional import unavailable

START_SECONDS = 180
STOP_SECONDS = 30


@dataclass(frozen=True)
class PhoenixServer:
    """A running Phoenix: its URL and how long it took to start."""

    url: str
    start_seconds: float


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="session")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PhoenixServer]:
    """``phoenix serve`` as a separate process; the tests that use it skip without Phoenix."""
    if importlib.util.find_spec("phoenix") is None:
        unavailable("phoenix is not installed: pip install 'agent-backtest[phoenix]'")
    folder: Path = tmp_path_factory.mktemp("phoenix")
    port = free_port()
    environment = {
        **os.environ,
        "PHOENIX_WORKING_DIR": str(folder),
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(free_port()),
        "PHOENIX_SQL_DATABASE_URL": f"sqlite:///{folder / 'phoenix.db'}",
        "PHOENIX_TELEMETRY_ENABLED": "false",
    }
    log = (folder / "phoenix.log").open("wb")
    started = time.monotonic()
    process = subprocess.Popen(
        [sys.executable, "-m", "phoenix.server.main", "serve"],
        env=environment,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        while True:
            if process.poll() is not None:
                pytest.fail(f"phoenix ended with {process.returncode}: see {log.name}")
            try:
                if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() - started > START_SECONDS:
                pytest.fail(f"phoenix did not start in {START_SECONDS} s: see {log.name}")
            time.sleep(0.2)
        yield PhoenixServer(url, time.monotonic() - started)
    finally:
        process.terminate()
        try:
            process.wait(STOP_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()
