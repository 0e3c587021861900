#!/usr/bin/python3
"""A TCP peer that hands each accepted connection to the next backend in turn.

One client process then meets several peers at once (a healthy one and a failing one),
which is what a thread-wide state such as OpenSSL's error queue needs to be tested:
connection 0 goes to the first --backend, connection 1 to the second, and so on. Bytes are
copied both ways untouched; an end of stream is passed on as a half-close. A backend written
HOST:PORT+MS is dialled MS milliseconds late (its client waits), so its peer acts later.
With --count-tickets it reads the PSK identities (TLS 1.3 tickets) each ClientHello offers
and counts every identity offered again: a single-use ticket (RFC 8446 C.4) offered twice.

Prints `READY <port>`; on SIGTERM prints `REPORT {"connections": N, "by_backend": [...]}`
(with --count-tickets also "tickets_offered" and "tickets_reused").
"""
from __future__ import annotations

import argparse
import asyncio
import json
import signal
import socket
import struct
import sys

PRE_SHARED_KEY = 41  # the ClientHello extension that carries TLS 1.3 ticket identities


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backend", action="append", required=True, metavar="HOST:PORT[+MS]",
                   help="a peer to hand connections to (repeat: used in turn); +MS dials it MS ms late")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--count-tickets", action="store_true",
                   help="count the TLS 1.3 ticket identities each ClientHello offers, and those offered again")
    return p.parse_args()


def psk_identities(hello: bytes) -> list[bytes]:
    """The pre_shared_key identities of one ClientHello record (RFC 8446 4.2.11); [] when it offers none."""
    try:
        at = 5 + 4 + 2 + 32                                       # record and handshake headers, version, random
        at += 1 + hello[at]                                       # legacy_session_id
        at += 2 + struct.unpack_from("!H", hello, at)[0]          # cipher_suites
        at += 1 + hello[at]                                       # legacy_compression_methods
        end = at + 2 + struct.unpack_from("!H", hello, at)[0]
        at += 2
        while at + 4 <= end:
            kind, size = struct.unpack_from("!HH", hello, at)
            at += 4
            if kind == PRE_SHARED_KEY:
                return identities(hello[at:at + size])
            at += size
    except (IndexError, struct.error):
        pass
    return []


def identities(psk: bytes) -> list[bytes]:
    found, at = [], 2
    end = 2 + struct.unpack_from("!H", psk, 0)[0]
    while at + 2 <= end:
        size = struct.unpack_from("!H", psk, at)[0]
        found.append(psk[at + 2:at + 2 + size])
        at += 2 + size + 4                                        # the identity, its obfuscated_ticket_age
    return found


async def first_record(reader: asyncio.StreamReader) -> bytes:
    """The client's first TLS record whole (its ClientHello), or what came before the stream ended."""
    try:
        head = await reader.readexactly(5)
        return head + await reader.readexactly(struct.unpack_from("!H", head, 3)[0])
    except asyncio.IncompleteReadError as e:
        return e.partial


async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except (ConnectionError, OSError):
        writer.transport.abort()


async def serve() -> None:
    ns = parse_args()
    backends = []
    for spec in ns.backend:
        address, _, late = spec.partition("+")
        host, port = address.rsplit(":", 1)
        backends.append((host, int(port), int(late or 0) / 1000))
    counts = [0] * len(backends)
    accepted = 0
    offered: dict[bytes, int] = {}

    async def serve(c_reader: asyncio.StreamReader, c_writer: asyncio.StreamWriter) -> None:
        nonlocal accepted
        index = accepted % len(backends)
        accepted += 1
        counts[index] += 1
        host, port, late = backends[index]
        try:
            await asyncio.sleep(late)
            b_reader, b_writer = await asyncio.open_connection(host, port)
        except OSError:
            c_writer.transport.abort()
            return
        if ns.count_tickets:
            hello = await first_record(c_reader)
            for identity in psk_identities(hello):
                offered[identity] = offered.get(identity, 0) + 1
            b_writer.write(hello)
        await asyncio.gather(pipe(c_reader, b_writer), pipe(b_reader, c_writer))
        for w in (c_writer, b_writer):
            w.close()

    server = await asyncio.start_server(serve, ns.host, 0, family=socket.AF_INET, backlog=1024)
    print(f"READY {server.sockets[0].getsockname()[1]}", flush=True)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    async with server:
        await stop.wait()
    report: dict[str, object] = {"connections": accepted, "by_backend": counts}
    if ns.count_tickets:
        report.update(tickets_offered=sum(offered.values()), tickets_reused=sum(n - 1 for n in offered.values()))
    print("REPORT " + json.dumps(report), flush=True)


def main() -> int:
    asyncio.run(serve())
    return 0


if __name__ == "__main__":
    sys.exit(main())
