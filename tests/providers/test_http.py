"""The hosted providers' connections: lanes of the connection limit, and TLS only where used."""

from __future__ import annotations

import ssl

from agent_backtest.providers.http import LANE_CONNECTIONS, lane_sizes, tls_context


def test_lanes_hold_the_limit_exactly_and_at_most_a_lane_each() -> None:
    for limit in (1, 7, 8, 9, 20, 64, 65, 100):
        sizes = lane_sizes(limit)
        assert sum(sizes) == limit
        assert max(sizes) <= LANE_CONNECTIONS and max(sizes) - min(sizes) <= 1


def test_plain_http_gets_a_context_that_verifies_and_trusts_nothing() -> None:
    plain = tls_context("http://127.0.0.1:8000/v1")
    assert plain.verify_mode == ssl.CERT_REQUIRED and plain.check_hostname
    assert plain.get_ca_certs() == []
    hosted = tls_context("https://api.example.com/v1")
    assert hosted.verify_mode == ssl.CERT_REQUIRED and hosted.check_hostname
    assert hosted.get_ca_certs()
