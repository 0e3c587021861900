#!/usr/bin/python3
"""A DNS name server for tests: a table of names, each with a named behaviour.

Serves UDP and TCP on one port and prints `READY <port>`. On SIGTERM it prints
`REPORT {json}` (queries per name and per transport; max_held: the most slow answers held at once) and exits 0.
"""
from __future__ import annotations

import argparse
import asyncio
import errno
import json
import signal
import socket
import struct
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from dnslib import AAAA, CNAME, QTYPE, RCODE, RR, A, DNSError, DNSRecord

GRAMMAR = """\
zone entries: --zone NAME=SPEC (repeatable) or --zone-file PATH (one NAME=SPEC a line, # comments).
NAME is matched without regard to case or a final dot; NAME "*" answers every name not listed.
A name that is not listed, with no "*", gets NXDOMAIN.

SPEC := MODIFIER* ACTION
  actions:
    a:IP[,IP...]        A records for the IPv4 ones, AAAA records for the IPv6 ones, in this
                        order (a query of another type: NOERROR, no record)
    flip:IP[,IP...]     one A record per query, taking the list in turn (DNS rebinding)
    cname:TARGET        a CNAME to TARGET, then TARGET's own records if the table has it
    nxdomain | servfail | refused
                        that RCODE, no record
    empty               NOERROR, no record
    malformed:HEX       these octets as the answer, the query's id patched into the first two
    raw:HEX             these octets exactly ("raw:" alone: an empty answer, over TCP a 0 length)
    close               TCP: close without answering; UDP: no answer
    silent              never answer (TCP: the connection stays open until the client closes it)
  modifiers (any order, before the action):
    slow:MS:            answer after MS milliseconds; other queries are served meanwhile (REPORT max_held:
                        the most held at once, the queries a client had in flight together)
    truncated:          over UDP: TC set and no record; over TCP: the full answer
    truncated-tcp:      over TCP: TC set on the full answer, its records kept (a server whose answer
                        did not fit even a TCP message; RFC 1035 4.1.1); over UDP as without it
                        (truncated:truncated-tcp: sets TC over both)
    wrong-id:           the answer's id is the query's id + 1
    ttl:SECONDS:        TTL of the records (default --ttl)
    cut:N:              send only the first N octets of what would be sent (over TCP the
                        2-octet length counts), then close (TCP)

examples:
  --zone hooks.test=a:127.0.0.1         --zone mixed.test=a:10.0.0.1,93.184.216.34
  --zone six.test=a:::1                 --zone both.test=a:93.184.216.34,2606:4700::1111
  --zone slow.test=slow:300:a:127.0.0.1 --zone flip.test=flip:127.0.0.1,127.0.0.2
  --zone tc.test=truncated:a:127.0.0.1  --zone bad.test=malformed:00008180000100010000
  --zone tct.test=truncated-tcp:a:127.0.0.1
"""

ACTIONS_WITH_ARG = ("a", "flip", "cname", "malformed", "raw")
ACTIONS_BARE = ("nxdomain", "servfail", "refused", "empty", "close", "silent")
RCODES = {"nxdomain": RCODE.NXDOMAIN, "servfail": RCODE.SERVFAIL, "refused": RCODE.REFUSED}


class SpecError(ValueError):
    pass


@dataclass
class Behaviour:
    """One name's SPEC, parsed."""
    action: str
    addrs: list[str] = field(default_factory=list)
    target: str = ""
    octets: bytes = b""
    slow_ms: int = 0
    truncated: bool = False
    truncated_tcp: bool = False
    wrong_id: bool = False
    ttl: Optional[int] = None
    cut: Optional[int] = None


def parse_spec(spec: str) -> Behaviour:
    modifiers: dict = {}
    rest = spec
    while True:
        head, _, tail = rest.partition(":")
        if head in ("slow", "ttl", "cut"):
            number, sep, rest = tail.partition(":")
            if not number.isdigit() or not sep:
                raise SpecError(f"{head}: needs a number and a ':' after it")
            modifiers[{"slow": "slow_ms"}.get(head, head)] = int(number)
        elif head in ("truncated", "truncated-tcp", "wrong-id") and rest != head:
            modifiers[head.replace("-", "_")] = True
            rest = tail
        else:
            break
    action, sep, arg = rest.partition(":")
    if action in ACTIONS_BARE and not sep:
        return Behaviour(action, **modifiers)
    if action not in ACTIONS_WITH_ARG or not sep:
        raise SpecError(f"unknown action {rest!r}")
    if action in ("a", "flip"):
        addrs = arg.split(",")
        for addr in addrs:
            try:
                socket.inet_pton(socket.AF_INET6 if ":" in addr and action == "a" else socket.AF_INET, addr)
            except OSError:
                raise SpecError(f"{action}: not an {'IP' if action == 'a' else 'IPv4'} address: {addr!r}") from None
        return Behaviour(action, addrs=addrs, **modifiers)
    if action == "cname":
        if not arg:
            raise SpecError("cname: needs a target name")
        return Behaviour(action, target=arg, **modifiers)
    try:
        return Behaviour(action, octets=bytes.fromhex(arg), **modifiers)
    except ValueError:
        raise SpecError(f"{action}: not hex: {arg!r}") from None


def canonical(name: str) -> str:
    return name.rstrip(".").lower()


class Table:
    def __init__(self, entries: list[str], default_ttl: int):
        self.names: dict[str, Behaviour] = {}
        self.default_ttl = default_ttl
        for entry in entries:
            name, sep, spec = entry.partition("=")
            if not sep or not name:
                raise SpecError(f"{entry!r}: expected NAME=SPEC")
            try:
                self.names[canonical(name)] = parse_spec(spec)
            except SpecError as e:
                raise SpecError(f"{entry!r}: {e}") from None

    def lookup(self, name: str) -> Optional[Behaviour]:
        return self.names.get(canonical(name), self.names.get("*"))


@dataclass
class Reply:
    octets: Optional[bytes]  # None: no answer
    slow_ms: int = 0
    close: bool = False      # TCP: close after (or instead of) this reply
    cut: Optional[int] = None


class Stub:
    def __init__(self, table: Table, log: bool):
        self.table = table
        self.log = log
        self.counts: dict[str, dict[str, int]] = {}
        self.turns: dict[str, int] = {}  # flip: queries answered so far, per name
        self.held = 0          # slow answers waiting now
        self.max_held = 0      # the most at once: queries the client had in flight together (a count, not a time)

    async def hold(self, ms: int) -> None:
        """A slow answer's wait, counted while it lasts."""
        self.held += 1
        self.max_held = max(self.max_held, self.held)
        try:
            await asyncio.sleep(ms / 1000)
        finally:
            self.held -= 1

    def answer(self, query: bytes, transport: str) -> Reply:
        try:
            request = DNSRecord.parse(query)
        except (DNSError, struct.error, IndexError, ValueError):
            return Reply(None)
        if not request.questions:
            return Reply(None)
        qname = str(request.q.qname)
        per_name = self.counts.setdefault(canonical(qname) or ".", {"udp": 0, "tcp": 0})
        per_name[transport] += 1
        behaviour = self.table.lookup(qname)
        if self.log:
            print(f"{transport} {canonical(qname)} {QTYPE.get(request.q.qtype)}", file=sys.stderr, flush=True)
        if behaviour is None:
            reply = request.reply()
            reply.header.rcode = RCODE.NXDOMAIN
            return Reply(reply.pack())
        return self.reply_for(request, qname, behaviour, transport)

    def reply_for(self, request: DNSRecord, qname: str, b: Behaviour, transport: str) -> Reply:
        if b.action == "close":
            return Reply(None, b.slow_ms, close=True)
        if b.action == "silent":
            return Reply(None, b.slow_ms)
        if b.action in ("malformed", "raw"):
            octets = b.octets
            if b.action == "malformed" and len(octets) >= 2:
                octets = struct.pack(">H", request.header.id) + octets[2:]
            return Reply(self.with_id(octets, b), b.slow_ms, cut=b.cut)
        reply = request.reply()
        if b.action in RCODES:
            reply.header.rcode = RCODES[b.action]
        elif b.truncated and transport == "udp":
            reply.header.tc = 1
        else:
            self.add_records(reply, qname, request.q.qtype, b, depth=0)
            if b.truncated_tcp and transport == "tcp":
                reply.header.tc = 1
        return Reply(self.with_id(reply.pack(), b), b.slow_ms, cut=b.cut)

    def add_records(self, reply: DNSRecord, name: str, qtype: int, b: Behaviour, depth: int) -> None:
        ttl = b.ttl if b.ttl is not None else self.table.default_ttl
        if b.action == "cname":
            reply.add_answer(RR(name, QTYPE.CNAME, rdata=CNAME(b.target), ttl=ttl))
            target = self.table.names.get(canonical(b.target))
            if target is not None and depth < 8:
                self.add_records(reply, b.target, qtype, target, depth + 1)
        elif b.action == "a" and qtype == QTYPE.AAAA:
            for addr in b.addrs:
                if ":" in addr:
                    reply.add_answer(RR(name, QTYPE.AAAA, rdata=AAAA(list(socket.inet_pton(socket.AF_INET6, addr))), ttl=ttl))
        elif b.action in ("a", "flip") and qtype == QTYPE.A:
            addrs = [addr for addr in b.addrs if ":" not in addr]
            if b.action == "flip":
                turn = self.turns.get(canonical(name), 0)
                self.turns[canonical(name)] = turn + 1
                addrs = [b.addrs[turn % len(b.addrs)]]
            for addr in addrs:
                reply.add_answer(RR(name, QTYPE.A, rdata=A(addr), ttl=ttl))

    @staticmethod
    def with_id(octets: bytes, b: Behaviour) -> bytes:
        if not b.wrong_id or len(octets) < 2:
            return octets
        return struct.pack(">H", (struct.unpack(">H", octets[:2])[0] + 1) & 0xFFFF) + octets[2:]

    def report(self) -> dict:
        by_transport = {t: sum(c[t] for c in self.counts.values()) for t in ("udp", "tcp")}
        return {"queries": self.counts, "by_transport": by_transport, "total": sum(by_transport.values()),
                "max_held": self.max_held}


class UdpServer(asyncio.DatagramProtocol):
    def __init__(self, stub: Stub):
        self.stub = stub
        self.transport: Optional[asyncio.DatagramTransport] = None
        self.tasks: set[asyncio.Task] = set()

    def connection_made(self, transport) -> None:
        self.transport = transport

    def datagram_received(self, data: bytes, addr) -> None:
        task = asyncio.get_running_loop().create_task(self.respond(data, addr))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def respond(self, data: bytes, addr) -> None:
        reply = self.stub.answer(data, "udp")
        if reply.slow_ms:
            await self.stub.hold(reply.slow_ms)
        if reply.octets is not None and self.transport is not None:
            self.transport.sendto(reply.octets[:reply.cut] if reply.cut is not None else reply.octets, addr)


async def serve_tcp(stub: Stub, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while True:
            try:
                length = struct.unpack(">H", await reader.readexactly(2))[0]
                query = await reader.readexactly(length)
            except (asyncio.IncompleteReadError, ConnectionError):
                return
            reply = stub.answer(query, "tcp")
            if reply.slow_ms:
                await stub.hold(reply.slow_ms)
            if reply.close:
                return
            if reply.octets is None:
                continue
            framed = struct.pack(">H", len(reply.octets)) + reply.octets
            writer.write(framed[:reply.cut] if reply.cut is not None else framed)
            await writer.drain()
            if reply.cut is not None:
                return
    except ConnectionError:
        pass
    finally:
        writer.close()


def bind_pair(address: str, port: int) -> tuple[socket.socket, socket.socket]:
    """UDP first (port 0 picks one), then TCP on the same number; another try on a collision."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    for _ in range(50):
        udp = socket.socket(family, socket.SOCK_DGRAM)
        udp.bind((address, port))
        chosen = udp.getsockname()[1]
        tcp = socket.socket(family, socket.SOCK_STREAM)
        tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            tcp.bind((address, chosen))
        except OSError as e:
            udp.close()
            tcp.close()
            if e.errno != errno.EADDRINUSE or port != 0:
                raise
            continue
        tcp.listen(128)
        tcp.setblocking(False)
        udp.setblocking(False)
        return udp, tcp
    raise OSError(errno.EADDRINUSE, "no port free for both UDP and TCP after 50 tries")


async def serve(args: argparse.Namespace, table: Table) -> int:
    stub = Stub(table, args.log)
    udp_sock, tcp_sock = bind_pair(args.bind, args.port)
    loop = asyncio.get_running_loop()
    udp_transport, _ = await loop.create_datagram_endpoint(lambda: UdpServer(stub), sock=udp_sock)
    server = await asyncio.start_server(lambda r, w: serve_tcp(stub, r, w), sock=tcp_sock)
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    print(f"READY {tcp_sock.getsockname()[1]}", flush=True)
    await stop.wait()
    server.close()
    udp_transport.close()
    print("REPORT " + json.dumps(stub.report(), sort_keys=True), flush=True)
    return 0


class OneLineParser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line on stderr, exit 2
        print(f"{self.prog}: {message}", file=sys.stderr)
        sys.exit(2)


def main() -> int:
    parser = OneLineParser(prog="dns_stub.py", description=__doc__, epilog=GRAMMAR,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bind", default="127.0.0.1", help="address to listen on, IPv4 or IPv6 (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="port for UDP and TCP (default 0: any free one; 53 works "
                                                           "where the process may bind it)")
    parser.add_argument("--zone", action="append", default=[], metavar="NAME=SPEC", help="a name and its behaviour")
    parser.add_argument("--zone-file", type=Path, help="NAME=SPEC lines")
    parser.add_argument("--ttl", type=int, default=60, help="TTL of the records (default 60)")
    parser.add_argument("--log", action="store_true", help="one line on stderr per query")
    args = parser.parse_args()
    entries = list(args.zone)
    if args.zone_file:
        try:
            lines = args.zone_file.read_text().splitlines()
        except OSError as e:
            parser.error(f"--zone-file: {e.strerror}: {args.zone_file}")
        entries += [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]
    try:
        table = Table(entries, args.ttl)
    except SpecError as e:
        parser.error(f"zone {e}")
    try:
        return asyncio.run(serve(args, table))
    except OSError as e:
        print(f"dns_stub.py: cannot listen on {args.bind}:{args.port}: {e.strerror or e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
