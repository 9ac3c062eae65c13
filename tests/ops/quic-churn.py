"""A hostile HTTP/3 client that is not quinn (aioquic), for tests/http3.rs:
CONNECTIONS connections from one address that each, for SECONDS, open
request streams and end them before any head (half with an empty FIN,
half with a reset), as many as the server's stream limit lets at a time,
and send one real GET every 5 s, which keeps a connection from being
closed as idle. A connection the server closes is opened again.

    python3 quic-churn.py PORT CA_FILE CONNECTIONS SECONDS

Prints one line, `churned {json}`: the bare streams sent, the GETs
answered, and how often the server closed a connection.
"""

import asyncio
import json
import ssl
import sys
import time

from aioquic.asyncio import connect
from aioquic.asyncio.protocol import QuicConnectionProtocol
from aioquic.h3.connection import H3Connection
from aioquic.h3.events import HeadersReceived
from aioquic.quic.configuration import QuicConfiguration

GET_EVERY = 5.0


class Client(QuicConnectionProtocol):
    """An HTTP/3 client whose streams are mostly not HTTP/3's."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.h3 = H3Connection(self._quic)
        self.answered = {}
        self.woken = asyncio.Event()

    def quic_event_received(self, event):
        for h3_event in self.h3.handle_event(event):
            if isinstance(h3_event, HeadersReceived):
                status = dict(h3_event.headers).get(b":status", b"")
                waiter = self.answered.pop(h3_event.stream_id, None)
                if waiter is not None and not waiter.done():
                    waiter.set_result(status.decode())
        self.woken.set()

    def get(self, port):
        sid = self._quic.get_next_available_stream_id()
        self.h3.send_headers(
            sid,
            [
                (b":method", b"GET"),
                (b":scheme", b"https"),
                (b":authority", f"localhost:{port}".encode()),
                (b":path", b"/healthz"),
            ],
            end_stream=True,
        )
        answer = asyncio.get_running_loop().create_future()
        self.answered[sid] = answer
        self.transmit()
        return answer


async def churn(port, ca, until, tally):
    config = QuicConfiguration(
        is_client=True, alpn_protocols=["h3"], server_name="localhost"
    )
    config.load_verify_locations(ca)
    config.verify_mode = ssl.CERT_REQUIRED
    async with connect(
        "127.0.0.1", port, configuration=config, create_protocol=Client
    ) as client:
        quic = client._quic
        pending_get = client.get(port)
        next_get = time.monotonic() + GET_EVERY
        n = 0
        while time.monotonic() < until and quic._close_event is None:
            if pending_get is not None and pending_get.done():
                tally["gets_answered"] += 1
                pending_get = None
            if time.monotonic() >= next_get:
                pending_get = client.get(port)
                next_get += GET_EVERY
            # As many bare streams as the server's limit lets open now.
            while quic._local_next_stream_id_bidi // 4 < quic._remote_max_streams_bidi:
                sid = quic.get_next_available_stream_id()
                if n % 2 == 0:
                    quic.send_stream_data(sid, b"", end_stream=True)
                else:
                    quic.reset_stream(sid, 0x10C)
                n += 1
            client.transmit()
            client.woken.clear()
            try:
                await asyncio.wait_for(client.woken.wait(), 0.05)
            except asyncio.TimeoutError:
                pass
        tally["bare_streams"] += n
        if quic._close_event is not None:
            tally["closed_by_server"] += 1
            reason = quic._close_event.reason_phrase or str(quic._close_event.error_code)
            tally["reasons"][reason] = tally["reasons"].get(reason, 0) + 1


async def one(port, ca, until, tally):
    while time.monotonic() < until:
        try:
            await churn(port, ca, until, tally)
        except Exception as e:  # noqa: BLE001 (counted; the connection is opened again)
            tally["failed"].append(repr(e))
            await asyncio.sleep(0.1)


async def main():
    port, ca, connections, seconds = (
        int(sys.argv[1]),
        sys.argv[2],
        int(sys.argv[3]),
        float(sys.argv[4]),
    )
    tally = {
        "bare_streams": 0,
        "gets_answered": 0,
        "closed_by_server": 0,
        "reasons": {},
        "failed": [],
    }
    until = time.monotonic() + seconds
    await asyncio.gather(*(one(port, ca, until, tally) for _ in range(connections)))
    tally["failed"] = tally["failed"][:3]
    print("churned " + json.dumps(tally), flush=True)


asyncio.run(main())
