"""Sharded connection pools: many calls in flight to one provider, no pool larger than
``SHARD_CONNECTIONS`` (httpcore's bookkeeping per request grows with the square of a pool),
a connection kept alive per call in flight, and every place given back."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from needle_lib.net.pools import SHARD_CONNECTIONS, ShardedTransport
from needle_lib.net.tls import ca_context
from needle_lib.testing.loopback import closed_port_url
from needle_lib.testing.search_server import FakeSearchServer


async def test_calls_spread_over_small_pools_that_keep_their_connections():
    transport = ShardedTransport(20, verify=ca_context())
    assert len(transport.pool_sizes()) == 3  # ceil(20 / 8)
    with FakeSearchServer(latency={"lane": 0.1}) as server:
        async with httpx.AsyncClient(transport=transport) as client:
            for burst in range(3):
                replies = await asyncio.gather(*(
                    client.get(f"{server.url}/lane/search",
                               params={"q": f"query {burst} {i}", "format": "json"})
                    for i in range(20)))
                assert [r.status_code for r in replies] == [200] * 20
                assert all(r.json()["results"] for r in replies)
                assert transport.in_flight == 0  # every body closed gave its place back
                assert max(transport.pool_sizes()) <= 7 <= SHARD_CONNECTIONS
        # three bursts of 20 over connections kept alive: at most one per call in flight
        assert server.connections <= 20, server.connections


async def test_a_failed_request_gives_its_place_back():
    transport = ShardedTransport(4, verify=ca_context())
    async with httpx.AsyncClient(transport=transport) as client:
        with pytest.raises(httpx.ConnectError):
            await client.get(closed_port_url())
    assert transport.in_flight == 0


def test_connections_must_be_positive():
    with pytest.raises(ValueError, match="at least 1"):
        ShardedTransport(0, verify=ca_context())
