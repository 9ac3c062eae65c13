"""A hostile HTTP/3 client that is not quinn (aioquic), for tests/http3.rs:
CONNECTIONS connections from one address, each pushing data the server
never asked for and never reads:

- DATAGRAMS DATAGRAM frames of 1,100 bytes each (RFC 9221), sent whether
  or not the server said it takes them;
- the QPACK encoder and decoder streams and a request stream whose HEADERS
  frame never ends, each filled as far as the server's flow control lets.

    python3 quic-flood.py PORT CA_FILE CONNECTIONS DATAGRAMS

Prints `pushed {json}` once everything is sent (or the server closed the
connection), then holds the connections open until stdin closes.
"""

import asyncio
import json
import ssl
import sys

from aioquic.asyncio import connect
from aioquic.quic.configuration import QuicConfiguration

STREAM_FILL = 4 * 1024 * 1024


async def one(port, ca, datagrams, pushed, release):
    try:
        await push(port, ca, datagrams, pushed, release)
    except Exception as e:  # noqa: BLE001 (reported, not raised: the others go on)
        pushed.put_nowait({"error": repr(e)})


async def push(port, ca, datagrams, pushed, release):
    config = QuicConfiguration(
        is_client=True,
        alpn_protocols=["h3"],
        server_name="localhost",
        # Offered so that the client's own stack does not refuse to send.
        max_datagram_frame_size=65536,
    )
    config.load_verify_locations(ca)
    config.verify_mode = ssl.CERT_REQUIRED
    async with connect("127.0.0.1", port, configuration=config) as client:
        quic = client._quic
        # The client's control stream, then its QPACK streams, then a
        # request whose HEADERS frame announces 1 MiB and never ends.
        control = quic.get_next_available_stream_id(is_unidirectional=True)
        quic.send_stream_data(control, b"\x00\x04\x00")
        for kind in (b"\x02", b"\x03"):
            sid = quic.get_next_available_stream_id(is_unidirectional=True)
            quic.send_stream_data(sid, kind + bytes(STREAM_FILL))
        request = quic.get_next_available_stream_id()
        quic.send_stream_data(request, b"\x01\x80\x10\x00\x00" + bytes(STREAM_FILL))
        for _ in range(datagrams):
            quic.send_datagram_frame(bytes(1100))
        client.transmit()
        # Until every datagram has left (congestion control paces them) or
        # the server has closed the connection.
        for _ in range(600):
            if not quic._datagrams_pending or quic._close_event is not None:
                break
            await asyncio.sleep(0.05)
            client.transmit()
        await asyncio.sleep(1)
        ended = quic._close_event is not None
        reason = getattr(quic._close_event, "reason_phrase", "") if ended else ""
        pushed.put_nowait({"closed_by_server": ended, "reason": reason})
        # Held open, unread, until the test has measured.
        await release.wait()


async def main():
    port, ca, connections, datagrams = (
        int(sys.argv[1]),
        sys.argv[2],
        int(sys.argv[3]),
        int(sys.argv[4]),
    )
    pushed, release = asyncio.Queue(), asyncio.Event()
    clients = asyncio.gather(
        *(one(port, ca, datagrams, pushed, release) for _ in range(connections)),
        return_exceptions=True,
    )
    outcomes = [await pushed.get() for _ in range(connections)]
    closed = sum(1 for o in outcomes if o.get("closed_by_server"))
    failed = [o["error"] for o in outcomes if "error" in o]
    reasons = sorted({o["reason"] for o in outcomes if o.get("reason")})
    print("pushed " + json.dumps({"connections": connections, "closed_by_server": closed, "reasons": reasons, "failed": failed[:3]}), flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    release.set()
    await clients


asyncio.run(main())
