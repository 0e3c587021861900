#!/usr/bin/python3
"""A plain TCP peer for the proxy's self-test: greets with N pattern bytes, then echoes, drains,
closes or holds. Binds 127.0.0.1 port 0, prints `READY <port>`; on SIGTERM prints one
`REPORT {json}` line and exits 0 (the lab's peer contract, servers/README.md).

    /usr/bin/python3 proxy/tests/tcp_peer.py [--greet N] [--wait-first-byte] [--then echo|drain|close|hold|reset]
"""
from __future__ import annotations

import argparse
import asyncio
import json
import signal
import socket
import struct
import sys


def pattern(n: int, start: int = 0) -> bytes:
    """Byte i is (i * 131 + 7) % 251: a shifted or dropped byte shows."""
    return bytes((i * 131 + 7) % 251 for i in range(start, start + n))


class Peer:
    def __init__(self, greet: int, then: str, wait: bool):
        self.greet, self.then, self.wait = greet, then, wait
        self.tally = {"connections": 0, "bytes_in": 0, "bytes_out": 0, "per_conn_in": [], "eofs": 0, "resets": 0}

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        conn = self.tally["connections"]
        self.tally["connections"] += 1
        self.tally["per_conn_in"].append(0)
        try:
            if self.wait:  # the client's first byte proves it is connected before anything can reset it
                first = await reader.read(1)
                self.tally["bytes_in"] += len(first)
                self.tally["per_conn_in"][conn] += len(first)
            if self.greet:
                writer.write(pattern(self.greet))
                await writer.drain()
                self.tally["bytes_out"] += self.greet
            if self.then == "hold":  # never reads, never closes: the sender's back-pressure
                await asyncio.Event().wait()
            if self.then == "close":  # a FIN, then drain so the close is never an RST
                writer.write_eof()
            if self.then == "reset":  # SO_LINGER {1, 0}: an RST right after the greeting
                writer.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                                           struct.pack("ii", 1, 0))
                writer.transport.abort()
                return
            while data := await reader.read(65536):
                self.tally["bytes_in"] += len(data)
                self.tally["per_conn_in"][conn] += len(data)
                if self.then == "echo":
                    writer.write(data)
                    await writer.drain()
                    self.tally["bytes_out"] += len(data)
            self.tally["eofs"] += 1
        except (ConnectionResetError, BrokenPipeError):
            self.tally["resets"] += 1
        finally:
            writer.close()


async def main(args: argparse.Namespace) -> None:
    peer = Peer(args.greet, args.then, args.wait_first_byte)
    server = await asyncio.start_server(peer.serve, "127.0.0.1", 0)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    print(f"READY {server.sockets[0].getsockname()[1]}", flush=True)
    await stop.wait()
    server.close()
    print("REPORT " + json.dumps(peer.tally), flush=True)


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--greet", type=int, default=0, help="pattern bytes sent on accept (default 0)")
    p.add_argument("--wait-first-byte", action="store_true", help="greet only after the client's first byte")
    p.add_argument("--then", choices=("echo", "drain", "close", "hold", "reset"), default="echo",
                   help="after the greeting: echo what arrives, drain it, close (FIN), hold (never read) or reset (RST)")
    asyncio.run(main(p.parse_args()))
    sys.exit(0)
