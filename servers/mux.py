#!/usr/bin/python3
"""A TCP peer that hands each accepted connection to the next backend in turn.

One client process then meets several peers at once (a healthy one and a failing one),
which is what a thread-wide state such as OpenSSL's error queue needs to be tested:
connection 0 goes to the first --backend, connection 1 to the second, and so on. Bytes are
copied both ways untouched; an end of stream is passed on as a half-close. A backend written
HOST:PORT+MS is dialled MS milliseconds late (its client waits), so its peer acts later.

Prints `READY <port>`; on SIGTERM prints `REPORT {"connections": N, "by_backend": [...]}`.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import signal
import socket


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backend", action="append", required=True, metavar="HOST:PORT[+MS]",
                   help="a peer to hand connections to (repeat: used in turn); +MS dials it MS ms late")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    return p.parse_args()


async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except (ConnectionError, OSError):
        writer.transport.abort()


async def main() -> None:
    ns = parse_args()
    backends = []
    for spec in ns.backend:
        address, _, late = spec.partition("+")
        host, port = address.rsplit(":", 1)
        backends.append((host, int(port), int(late or 0) / 1000))
    counts = [0] * len(backends)
    accepted = 0

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
        await asyncio.gather(pipe(c_reader, b_writer), pipe(b_reader, c_writer))
        for w in (c_writer, b_writer):
            w.close()

    server = await asyncio.start_server(serve, ns.host, 0, family=socket.AF_INET, backlog=1024)
    print(f"READY {server.sockets[0].getsockname()[1]}", flush=True)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    async with server:
        await stop.wait()
    print("REPORT " + json.dumps({"connections": accepted, "by_backend": counts}), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
