"""The plain path reads an answer's head exactly as h11 reads it, or hands it to h11."""

from __future__ import annotations

from typing import Any, cast

import h11
import pytest

from agent_backtest.providers import wire

REQUEST = wire.Request(target=b"/v1", fields=[], head=b"", body=b"", keep_alive=True)

READ_ALIKE = [
    b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n",
    b"HTTP/1.1 200 \r\nContent-Length:2\r\nX-Empty:\r\nX-Blank: \t \r\n\r\n",
    b"HTTP/1.1 201 Created\r\nX-Inner: a  b\tc \t\r\nx-inner: d\r\nContent-Length: 12\r\n\r\n",
    b"HTTP/1.1 429 Too Many\r\nRetry-After: 3\r\nConnection: keep-alive, Close\r\n"
    b"Content-Length: 0\r\n\r\n",
    b"HTTP/1.1 200\r\ncontent-length: 5\r\nx-odd-name!#$%&'*+.^_`|~: v\r\n\r\n",
]
HANDED_TO_H11 = [
    b"HTTP/1.1 200 OK\r\n\r\n",  # no length: the close ends the body
    b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nX-Bad: a\x00b\r\nContent-Length: 2\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nX Space: a\r\nContent-Length: 2\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nX-Folded: a\r\n b\r\nContent-Length: 2\r\n\r\n",
    b"HTTP/1.1 204 No Content\r\nContent-Length: 2\r\n\r\n",
    b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n",
]


def read_by_h11(head: bytes) -> tuple[int, dict[str, str]]:
    """The status and headers h11 reads from ``head``, after a POST."""
    protocol = h11.Connection(h11.CLIENT)
    protocol.send(h11.Request(method="POST", target="/v1", headers=[("host", "x")]))
    protocol.receive_data(head)
    event = protocol.next_event()
    assert isinstance(event, h11.Response)
    return event.status_code, wire.joined(event.headers)


@pytest.mark.parametrize("head", READ_ALIKE)
def test_a_plain_head_reads_as_h11_reads_it(head: bytes) -> None:
    answer = wire.plain_answer(head, cast(Any, None), REQUEST, 1.0)
    assert answer is not None
    assert (answer.status, answer.headers) == read_by_h11(head)
    assert answer.length == int(answer.headers["content-length"])
    assert answer.keep_alive is ("close" not in answer.headers.get("connection", "").lower())


@pytest.mark.parametrize("head", HANDED_TO_H11)
def test_any_other_head_is_handed_to_h11(head: bytes) -> None:
    assert wire.plain_answer(head, cast(Any, None), REQUEST, 1.0) is None
