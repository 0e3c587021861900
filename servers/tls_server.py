#!/usr/bin/python3
"""The lab's TLS receiver: an HTTP/1.1 server and its deliberate misbehaviours.

Each misbehaviour is a named --behaviour, documented in one line (BEHAVIOURS
below), in the spirit of BoringSSL's runner ProtocolBugs: the client stays
clean and the bug lives in the peer. Binds port 0 unless told, prints
`READY <port>`, and on SIGTERM prints one `REPORT {json}` line and exits 0.

    /usr/bin/python3 servers/tls_server.py --chain leaf+int.pem --key leaf.key
    /usr/bin/python3 servers/tls_server.py ... --behaviour close-without-notify
    /usr/bin/python3 servers/tls_server.py ... --workers 2 --host 127.0.0.1 --host 127.0.0.2
"""
from __future__ import annotations

import argparse
import asyncio
import asyncio.sslproto
import ctypes
import errno
import http
import json
import logging
import os
import signal
import socket
import ssl
import struct
import sys
import warnings
from dataclasses import dataclass, field
from typing import Awaitable, Callable, Optional

# name -> what the peer does; the --help text and the dispatch both read this table.
BEHAVIOURS: dict[str, str] = {
    "normal": "HTTP/1.1 keep-alive: every request gets --status and a --body-size body with Content-Length",
    "silent": "accept TCP, never send a byte, never close (reads and drops what the client sends)",
    "close-before-handshake": "accept TCP and send FIN at once (no TLS byte); drain the client until it closes",
    "reset": "accept TCP and close with SO_LINGER {1,0}: the client gets RST before any TLS byte",
    "fin-then-reset": "accept TCP, wait for the first client byte, send FIN then RST at once: the client "
                      "reads EOF and its next write (OpenSSL's alert) fails with EPIPE, the SIGPIPE reproducer",
    "reset-during-body": "complete the handshake, read the request's head only, then FIN and RST at once (as "
                         "fin-then-reset): a client still sending a body larger than the loopback buffers writes "
                         "into the reset socket (EPIPE; SIGPIPE on a write(2) without MSG_NOSIGNAL) whatever the "
                         "scheduling, since a client that is only sending never reads the FIN first",
    "plaintext-http": "accept TCP and answer with a plain-text HTTP 400 before any TLS byte (wrong version number)",
    "close-after-handshake": "complete the handshake, then close with close_notify before reading anything",
    "stall-response": "complete the handshake, read one request, never answer (until the client closes)",
    "slow-response": "like normal, but wait --delay-ms before each response",
    "reset-mid-response": "complete the handshake, read one request, send the status line, headers and half "
                          "the body, then RST",
    "close-without-notify": "complete the handshake, read one request, send the headers and half the body, "
                            "then FIN without close_notify (truncation)",
    "chunked": "like normal, but answer with Transfer-Encoding: chunked (two chunks and the last chunk)",
    "trickle": "like normal, but send each response one byte per TLS record",
    "ignore-close-notify": "complete the handshake, answer one request, then read nothing more: the client's "
                           "close_notify is never read nor answered; the connection is held --hold-s, then dropped "
                           "without a byte (a peer that never answers close_notify: bpo-29406)",
    "early-response": "complete the handshake, read the request's head only, answer at once (Content-Length), then "
                      "read nothing more and hold the connection --hold-s: a large POST body stays queued in the "
                      "client when its response is complete (close with data queued: FLUSHING)",
    "length-and-chunked": "like chunked, with a Content-Length (of the decoded body) before the Transfer-Encoding "
                          "header: both framings in one response (RFC 9112 6.3)",
    "identity-and-length": "like normal, with Transfer-Encoding: identity before its Content-Length: both "
                           "framings in one response, the body as Content-Length says",
    "stall-mid-response": "complete the handshake, read one request, send the headers and half the body, then "
                          "nothing more (until the client closes)",
}

VERSIONS: dict[str, ssl.TLSVersion] = {
    "1.0": ssl.TLSVersion.TLSv1, "1.1": ssl.TLSVersion.TLSv1_1,
    "1.2": ssl.TLSVersion.TLSv1_2, "1.3": ssl.TLSVersion.TLSv1_3,
}

MAX_HEAD = 64 * 1024
HANDSHAKE_TIMEOUT_S = 30.0
LINGER_RESET = struct.pack("ii", 1, 0)


def body_pattern(size: int, seed: int) -> bytes:
    """The lab's body pattern (the client's POST bodies): byte i = (i * 131 + seed) % 251."""
    period = bytes((i * 131 + seed) % 251 for i in range(251))
    return (period * (size // 251 + 1))[:size]


# --- counters -------------------------------------------------------------------------------

@dataclass
class Tally:
    """What one process saw; workers' tallies are summed by the parent into the REPORT."""
    connections: int = 0
    handshakes: int = 0
    handshake_failures: int = 0
    requests: int = 0
    bad_bodies: int = 0
    bytes_in: int = 0
    resumed: int = 0
    errors_after_handshake: int = 0
    internal_errors: int = 0
    connections_by_addr: dict[str, int] = field(default_factory=dict)
    tls_versions: dict[str, int] = field(default_factory=dict)
    ciphers: dict[str, int] = field(default_factory=dict)
    sni: dict[str, int] = field(default_factory=dict)
    handshake_errors: dict[str, int] = field(default_factory=dict)
    methods: dict[str, int] = field(default_factory=dict)  # each request's method as read: its first bytes intact

    @staticmethod
    def bump(counts: dict[str, int], key: str) -> None:
        counts[key] = counts.get(key, 0) + 1

    def to_json(self) -> dict:
        return dict(self.__dict__)

    def add(self, other: dict) -> None:
        for name, value in other.items():
            mine = getattr(self, name, None)
            if isinstance(mine, int):
                setattr(self, name, mine + value)
            elif isinstance(mine, dict):
                for key, n in value.items():
                    mine[key] = mine.get(key, 0) + n


# --- configuration and TLS context ----------------------------------------------------------

@dataclass
class Config:
    chain: str
    key: str
    hosts: list[str]
    port: int
    behaviour: str
    min_version: Optional[str]
    max_version: Optional[str]
    ciphers: Optional[str]
    num_tickets: Optional[int]
    body_size: int
    status: int
    delay_ms: int
    hold_s: float
    verify_body_seed: Optional[int]
    workers: int
    refuse_resumption: bool
    drop_handshake_alerts: bool
    record_sni: bool
    verbose: bool
    client_ca: Optional[str] = None   # ask for a client certificate, verified against this CA file
    client_optional: bool = False     # ... without requiring one


def make_context(cfg: Config, tally: Tally) -> ssl.SSLContext:
    """One server context: its session ticket keys are made here, so workers forked after share them."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cfg.chain, cfg.key)
    with warnings.catch_warnings():  # TLS 1.0/1.1 are deprecated in Python; the lab needs them on purpose
        warnings.simplefilter("ignore", DeprecationWarning)
        if cfg.min_version:
            ctx.minimum_version = VERSIONS[cfg.min_version]
        if cfg.max_version:
            ctx.maximum_version = VERSIONS[cfg.max_version]
    if cfg.ciphers:
        ctx.set_ciphers(cfg.ciphers)
    if cfg.num_tickets is not None:
        ctx.num_tickets = cfg.num_tickets
    if cfg.client_ca:  # Python's ssl sends no CA names in the request (no SSL_CTX_set_client_CA_list)
        ctx.load_verify_locations(cfg.client_ca)
        ctx.verify_mode = ssl.CERT_OPTIONAL if cfg.client_optional else ssl.CERT_REQUIRED

    def record_sni(_obj: ssl.SSLObject, name: Optional[str], _ctx: ssl.SSLContext) -> None:
        Tally.bump(tally.sni, name if name is not None else "(none)")

    if cfg.record_sni:  # opt-in: Python decodes the name as ASCII before the callback (see --record-sni)
        ctx.sni_callback = record_sni
        sys.unraisablehook = lambda raw: record_undecodable_sni(tally, raw)
    return ctx


def record_undecodable_sni(tally: Tally, raw) -> None:
    """Python reports a non-ASCII SNI as an unraisable UnicodeDecodeError: count the name instead of a traceback."""
    if isinstance(raw.exc_value, UnicodeDecodeError) and isinstance(raw.object, bytes):
        Tally.bump(tally.sni, raw.object.decode("utf-8", "backslashreplace"))
    else:
        sys.__unraisablehook__(raw)


def send_handshake_alerts() -> None:
    """asyncio (CPython 3.11 sslproto._do_handshake) drops the alert OpenSSL writes when the server side
    fails the handshake, and just closes; flush it first, as openssl s_server and real servers do."""
    proto = asyncio.sslproto.SSLProtocol
    again = asyncio.sslproto.SSLAgainErrors

    def do_handshake(self) -> None:
        try:
            self._sslobj.do_handshake()
        except again:
            self._process_outgoing()
        except ssl.SSLError as exc:
            self._process_outgoing()  # the alert for this failure, written before the transport is closed
            self._on_handshake_complete(exc)
        else:
            self._on_handshake_complete(None)

    proto._do_handshake = do_handshake


def bind_all(hosts: list[str], port: int) -> list[socket.socket]:
    """Bind every host on one port: the first gets the port (0: the kernel's pick), the rest reuse it."""
    socks: list[socket.socket] = []
    for host in hosts:
        family, kind, proto, _, addr = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                                          flags=socket.AI_PASSIVE)[0]
        sock = socket.socket(family, kind, proto)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(addr)
        sock.listen(1024)
        sock.setblocking(False)
        port = sock.getsockname()[1]
        socks.append(sock)
    return socks


# --- one connection -------------------------------------------------------------------------

class PeerClosed(Exception):
    """The client ended the connection cleanly between requests."""


@dataclass
class Request:
    method: str
    headers: dict[str, str]
    body: bytes
    keep_alive: bool


@dataclass
class Conn:
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    cfg: Config
    tally: Tally
    ctx: ssl.SSLContext
    response: bytes  # status line + headers + body, made once per process
    handshaken: bool = False  # the SSL transport's extra info is gone once it closes: remember here

    def raw_socket(self):
        return self.writer.get_extra_info("socket")

    def abort_with_reset(self) -> None:
        """RST: linger {1,0}, then close the descriptor without close_notify."""
        self.raw_socket().setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, LINGER_RESET)
        self.writer.transport.abort()

    async def drain_until_eof(self) -> None:
        """Read and drop whatever the client sends until it closes or fails."""
        try:
            while await self.reader.read(65536):
                pass
        except (ConnectionError, ssl.SSLError, OSError):
            pass

    async def handshake(self) -> None:
        await self.writer.start_tls(self.ctx, ssl_handshake_timeout=HANDSHAKE_TIMEOUT_S)
        obj = self.writer.get_extra_info("ssl_object")
        self.handshaken = True
        self.tally.handshakes += 1
        self.tally.resumed += int(obj.session_reused)
        Tally.bump(self.tally.tls_versions, obj.version() or "?")
        Tally.bump(self.tally.ciphers, (obj.cipher() or ("?",))[0])

    async def read_request(self) -> Request:
        """One HTTP/1.1 request, its body read by Content-Length; PeerClosed on a clean end between requests."""
        try:
            head = await self.reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError as e:
            if not e.partial:
                raise PeerClosed() from None
            raise
        lines = head.decode("latin-1").split("\r\n")
        method, _, rest = lines[0].partition(" ")
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if sep:
                headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0"))
        body = await self.reader.readexactly(length) if length else b""
        http10 = rest.endswith("HTTP/1.0")
        connection = headers.get("connection", "").lower()
        keep_alive = connection == "keep-alive" if http10 else connection != "close"
        self.count_request(body)
        self.tally.bump(self.tally.methods, method[:16])
        return Request(method, headers, body, keep_alive)

    def count_request(self, body: bytes) -> None:
        self.tally.requests += 1
        self.tally.bytes_in += len(body)
        seed = self.cfg.verify_body_seed
        if seed is not None and body != body_pattern(len(body), seed):
            self.tally.bad_bodies += 1

    async def send(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def send_partial_response(self) -> None:
        """Headers (full Content-Length) and half the body, all on the wire before we return."""
        head_len = len(self.response) - self.cfg.body_size
        self.writer.transport.set_write_buffer_limits(high=0)  # drain() returns only once all of it is written
        await self.send(self.response[:head_len + self.cfg.body_size // 2])

    def close_with_notify(self) -> None:
        self.writer.close()


def make_response(cfg: Config) -> bytes:
    """The response of every request: Content-Length framing, or what the behaviour names."""
    body = body_pattern(cfg.body_size, 0)
    status = f"HTTP/1.1 {cfg.status} {reason_phrase(cfg.status)}\r\n"
    length = f"Content-Length: {len(body)}\r\n"
    if cfg.behaviour == "identity-and-length":
        return f"{status}Transfer-Encoding: identity\r\n{length}\r\n".encode() + body
    if cfg.behaviour not in ("chunked", "length-and-chunked"):
        return f"{status}{length}\r\n".encode() + body
    half = len(body) // 2
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in (body[:half], body[half:]) if part)
    both = length if cfg.behaviour == "length-and-chunked" else ""
    return f"{status}{both}Transfer-Encoding: chunked\r\n\r\n".encode() + chunks + b"0\r\n\r\n"


def reason_phrase(status: int) -> str:
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return "Lab"


# --- behaviours: one coroutine each ---------------------------------------------------------

async def serve_silent(c: Conn) -> None:
    await c.drain_until_eof()


async def serve_close_before_handshake(c: Conn) -> None:
    # FIN now, then drain: closing with the ClientHello unread would send RST instead of FIN.
    c.raw_socket().shutdown(socket.SHUT_WR)
    await c.drain_until_eof()


async def serve_reset(c: Conn) -> None:
    c.abort_with_reset()


async def serve_fin_then_reset(c: Conn) -> None:
    # The ClientHello is awaited first: a client that finds the connection already reset when
    # connect() completes reports it without writing, and nothing would raise SIGPIPE.
    try:
        await asyncio.wait_for(c.reader.read(1), HANDSHAKE_TIMEOUT_S)
    except (ConnectionError, OSError, asyncio.TimeoutError):
        pass
    fin_then_reset_now(c)


async def serve_reset_during_body(c: Conn) -> None:
    await c.handshake()
    await c.reader.readuntil(b"\r\n\r\n")
    c.tally.requests += 1
    fin_then_reset_now(c)


def fin_then_reset_now(c: Conn) -> None:
    # RST landing after FIN puts the client's socket in CLOSE_WAIT with EPIPE pending (tcp_reset).
    # FIN and RST leave microseconds apart: shutdown(), then dup2() over the descriptor drops the
    # socket's last reference at once (linger {1,0}: RST). Going through transport.abort() would
    # close it a loop turn later, long enough for a reading client to read the FIN and write its
    # alert before the RST lands (no SIGPIPE then). asyncio later closes /dev/null in its place.
    sock = c.raw_socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, LINGER_RESET)
    fd = sock.fileno()
    devnull = os.open(os.devnull, os.O_RDONLY)
    try:
        sock.shutdown(socket.SHUT_WR)
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)
    c.writer.transport.abort()


async def serve_plaintext_http(c: Conn) -> None:
    await c.send(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
    c.raw_socket().shutdown(socket.SHUT_WR)
    await c.drain_until_eof()


async def serve_close_after_handshake(c: Conn) -> None:
    await c.handshake()
    c.close_with_notify()


async def serve_http(c: Conn) -> None:
    """normal, slow-response, chunked, trickle and the two-framing ones: answer every request until the client closes."""
    await c.handshake()
    while True:
        try:
            request = await c.read_request()
        except PeerClosed:
            break
        if c.cfg.behaviour == "slow-response":
            await asyncio.sleep(c.cfg.delay_ms / 1000)
        if c.cfg.behaviour == "trickle":
            for i in range(len(c.response)):
                c.writer.write(c.response[i:i + 1])  # one write, one TLS record
            await c.writer.drain()
        else:
            await c.send(c.response)
        if not request.keep_alive:
            break
    c.close_with_notify()


async def serve_stall_response(c: Conn) -> None:
    await c.handshake()
    await c.read_request()
    await c.drain_until_eof()


async def serve_stall_mid_response(c: Conn) -> None:
    await c.handshake()
    await c.read_request()
    await c.send_partial_response()
    await c.drain_until_eof()


async def serve_reset_mid_response(c: Conn) -> None:
    await c.handshake()
    await c.read_request()
    await c.send_partial_response()
    c.abort_with_reset()


async def serve_close_without_notify(c: Conn) -> None:
    await c.handshake()
    await c.read_request()
    await c.send_partial_response()
    c.writer.transport.abort()  # the SSL transport's abort closes TCP without close_notify


async def hold_unread(c: Conn) -> None:
    """Read nothing more (what the client sends stays in the SSL transport's buffers, then the kernel's),
    send nothing, and drop the connection after --hold-s without close_notify."""
    c.writer.transport.pause_reading()
    await asyncio.sleep(c.cfg.hold_s)
    c.writer.transport.abort()


async def serve_ignore_close_notify(c: Conn) -> None:
    await c.handshake()
    await c.read_request()
    await c.send(c.response)
    await hold_unread(c)


async def serve_early_response(c: Conn) -> None:
    await c.handshake()
    await c.reader.readuntil(b"\r\n\r\n")
    c.tally.requests += 1
    await c.send(c.response)
    await hold_unread(c)


SERVE: dict[str, Callable[[Conn], Awaitable[None]]] = {
    "normal": serve_http, "slow-response": serve_http, "chunked": serve_http, "trickle": serve_http,
    "length-and-chunked": serve_http, "identity-and-length": serve_http, "stall-mid-response": serve_stall_mid_response,
    "silent": serve_silent, "close-before-handshake": serve_close_before_handshake,
    "reset": serve_reset, "fin-then-reset": serve_fin_then_reset, "reset-during-body": serve_reset_during_body, "plaintext-http": serve_plaintext_http,
    "close-after-handshake": serve_close_after_handshake, "stall-response": serve_stall_response,
    "reset-mid-response": serve_reset_mid_response, "close-without-notify": serve_close_without_notify,
    "ignore-close-notify": serve_ignore_close_notify, "early-response": serve_early_response,
}
assert SERVE.keys() == BEHAVIOURS.keys()


def error_name(exc: BaseException) -> str:
    """A short, stable name for why a handshake failed: the OpenSSL reason, 'timeout', or the errno's name."""
    if isinstance(exc, ssl.SSLError):
        return exc.reason or type(exc).__name__
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError)):
        return "timeout"
    if isinstance(exc, OSError) and exc.errno in errno.errorcode:
        return errno.errorcode[exc.errno]
    if isinstance(exc, ConnectionResetError):  # asyncio's name for EOF during the handshake (sslproto)
        return "eof"
    if isinstance(exc, ConnectionAbortedError):  # asyncio's handshake timeout (sslproto)
        return "timeout"
    return type(exc).__name__


# What a misbehaving client can cause: counted in the REPORT, never a traceback.
EXPECTED = (ConnectionError, ssl.SSLError, OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError,
            asyncio.TimeoutError, ValueError)


class Receiver:
    """One process's server: its sockets, its context, its tally."""

    def __init__(self, cfg: Config, socks: list[socket.socket], ctx: ssl.SSLContext, tally: Tally):
        self.cfg, self.socks, self.ctx, self.tally = cfg, socks, ctx, tally
        self.response = make_response(cfg)
        self.serve = SERVE[cfg.behaviour]
        self.reported_internal = False

    def log(self, msg: str) -> None:
        if self.cfg.verbose:
            print(f"tls_server[{os.getpid()}]: {msg}", file=sys.stderr, flush=True)

    async def on_connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.tally.connections += 1
        local = writer.get_extra_info("sockname")[0]
        peer = writer.get_extra_info("peername")
        Tally.bump(self.tally.connections_by_addr, local)
        ctx = make_context(self.cfg, self.tally) if self.cfg.refuse_resumption else self.ctx
        conn = Conn(reader, writer, self.cfg, self.tally, ctx, self.response)
        try:
            await self.serve(conn)
            self.log(f"{peer} -> {local}: done")
        except EXPECTED as exc:
            self.count_failure(conn, exc)
            self.log(f"{peer} -> {local}: {'after' if conn.handshaken else 'in'} handshake: {exc!r}")
            writer.transport.abort()
        except Exception as exc:  # a bug in this file
            self.internal_error(repr(exc))
            writer.transport.abort()
        finally:
            if not writer.transport.is_closing():  # asyncio 3.11 leaves a finished stream open
                writer.close()

    def count_failure(self, conn: Conn, exc: BaseException) -> None:
        if conn.handshaken:
            self.tally.errors_after_handshake += 1
        else:
            self.tally.handshake_failures += 1
            Tally.bump(self.tally.handshake_errors, error_name(exc))

    def internal_error(self, what: str) -> None:
        """A bug here, not the client's doing: counted in internal_errors, and said on stderr once."""
        self.tally.internal_errors += 1
        if not self.reported_internal or self.cfg.verbose:
            print(f"tls_server: internal error: {what}", file=sys.stderr, flush=True)
            self.reported_internal = True

    def on_loop_error(self, loop: asyncio.AbstractEventLoop, context: dict) -> None:
        # asyncio reports a client's I/O errors (OSError) at debug level only; what reaches here is unexpected.
        self.internal_error(f"asyncio: {context.get('message')} {context.get('exception')!r}")

    def quiet_asyncio_logger(self) -> None:
        """asyncio logs what clients cause (writes after a reset; 'returning true from eof_received()' when a
        close_notify shares a read with the client's Finished, before start_tls has swapped the writer):
        on stderr only with --verbose. Its errors go through on_loop_error."""
        log = logging.getLogger("asyncio")
        log.propagate = False
        if self.cfg.verbose:
            log.addHandler(logging.StreamHandler(sys.stderr))
        else:
            log.addHandler(logging.NullHandler())

    async def run(self, on_stop: Callable[[], None]) -> None:
        """Serve until SIGTERM, then call on_stop (which reports and exits) from inside the loop."""
        loop = asyncio.get_running_loop()
        loop.set_exception_handler(self.on_loop_error)
        self.quiet_asyncio_logger()
        stop = asyncio.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
        for sock in self.socks:
            await asyncio.start_server(self.on_connection, sock=sock, backlog=1024, limit=MAX_HEAD)
        await stop.wait()
        on_stop()


# --- processes ------------------------------------------------------------------------------

def die_with_parent() -> None:
    """A worker must not outlive the parent even when the parent is SIGKILLed (prctl PR_SET_PDEATHSIG)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)
    except (OSError, AttributeError):
        pass


def hand_over(tally: Tally, out_fd: int):
    """What a forked worker does on SIGTERM: hand its tally to the parent through the pipe, and end."""
    def done() -> None:
        with os.fdopen(out_fd, "wb") as pipe:
            pipe.write(json.dumps(tally.to_json()).encode())
        os._exit(0)  # no teardown of open connections: the parent is reporting
    return done


def run_worker(cfg: Config, socks: list[socket.socket], ctx: ssl.SSLContext, tally: Tally, out_fd: int) -> None:
    """A forked worker: serve until SIGTERM, then hand the tally to the parent through the pipe."""
    die_with_parent()
    asyncio.run(Receiver(cfg, socks, ctx, tally).run(hand_over(tally, out_fd)))


def read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 65536):
        chunks.append(chunk)
    os.close(fd)
    return b"".join(chunks)


def run_parent(cfg: Config, socks: list[socket.socket], ctx: ssl.SSLContext, tally: Tally,
               worker: Optional[Callable[..., None]] = None) -> dict:
    """Fork the workers (each runs WORKER, default run_worker, with the pipe its tally goes into), say
    READY, wait for SIGTERM, stop them, and sum what they saw. bulk_server.py passes its own worker."""
    workers: list[tuple[int, int]] = []
    for _ in range(cfg.workers):
        rfd, wfd = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(rfd)
            for _, other in workers:
                os.close(other)
            (worker or run_worker)(cfg, socks, ctx, tally, wfd)
        os.close(wfd)
        workers.append((pid, rfd))
    say_ready(socks)
    signal.sigwait({signal.SIGTERM, signal.SIGINT})
    for pid, _ in workers:
        os.kill(pid, signal.SIGTERM)
    total, per_worker, lost = Tally(), [], 0
    for pid, rfd in workers:
        raw = read_all(rfd)
        os.waitpid(pid, 0)
        if not raw:
            lost += 1
            continue
        part = json.loads(raw)
        per_worker.append(part["connections"])
        total.add(part)
    return {**total.to_json(), "workers": cfg.workers, "per_worker_connections": per_worker,
            "workers_lost": lost}


def say_ready(socks: list[socket.socket]) -> None:
    print(f"READY {socks[0].getsockname()[1]}", flush=True)


def say_report(report: dict) -> None:
    print("REPORT " + json.dumps(report, sort_keys=True), flush=True)
    os._exit(0)  # open connections are not torn down one by one: the report is out


def serve_forever(cfg: Config) -> None:
    tally = Tally()
    ctx = make_context(cfg, tally)
    socks = bind_all(cfg.hosts, cfg.port)
    # Blocked until each process has its handler: a SIGTERM right after READY is held, not fatal.
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
    if cfg.workers > 1:
        say_report(run_parent(cfg, socks, ctx, tally))
    say_ready(socks)  # the sockets listen already: the kernel queues connections until the loop runs
    single = {"workers": 1, "workers_lost": 0}
    asyncio.run(Receiver(cfg, socks, ctx, tally).run(
        lambda: say_report({**tally.to_json(), **single, "per_worker_connections": [tally.connections]})))


# --- command line ---------------------------------------------------------------------------

def parse_args(argv: Optional[list[str]] = None) -> Config:
    behaviours = "\n".join(f"  {name:24} {text}" for name, text in BEHAVIOURS.items())
    p = argparse.ArgumentParser(
        description="The lab's TLS receiver (HTTP/1.1) and its deliberate misbehaviours. Prints `READY <port>`; "
                    "on SIGTERM prints one `REPORT {json}` line and exits 0.",
        epilog=f"behaviours:\n{behaviours}\n\nREPORT fields: connections, handshakes, handshake_failures, "
               "handshake_errors {reason: n}, requests, bad_bodies, bytes_in, resumed, errors_after_handshake, "
               "internal_errors, connections_by_addr {local addr: n}, tls_versions, ciphers, sni (--record-sni), workers, "
               "per_worker_connections, workers_lost.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--chain", required=True, help="PEM: the leaf certificate first, then intermediates")
    p.add_argument("--key", required=True, help="PEM: the leaf's private key")
    p.add_argument("--host", action="append", help="address to bind (repeatable; all share the first's port; "
                                                   "default 127.0.0.1)")
    p.add_argument("--port", type=int, default=0, help="port for the first --host (default 0: the kernel's pick)")
    p.add_argument("--behaviour", choices=BEHAVIOURS, default="normal", metavar="NAME",
                   help="what the peer does (see below; default normal)")
    p.add_argument("--min-version", choices=VERSIONS, help="lowest TLS version offered")
    p.add_argument("--max-version", choices=VERSIONS, help="highest TLS version offered")
    p.add_argument("--ciphers", help="TLS 1.2 and below cipher list, OpenSSL syntax; add @SECLEVEL=0 for TLS "
                                     "1.0/1.1 or weak ciphers (Debian's default level 2 refuses them)")
    p.add_argument("--num-tickets", type=int, help="TLS 1.3 session tickets per handshake (default Python's, 2)")
    p.add_argument("--refuse-resumption", action="store_true",
                   help="a fresh SSLContext per connection: tickets are issued but never accepted on reuse")
    p.add_argument("--body-size", type=int, default=16, help="response body bytes (default 16)")
    p.add_argument("--status", type=int, default=200, help="response status code (default 200)")
    p.add_argument("--delay-ms", type=int, default=1000, help="slow-response: wait before each response "
                                                               "(default 1000)")
    p.add_argument("--hold-s", type=float, default=10.0,
                   help="ignore-close-notify, early-response: how long the unread connection is held (default 10)")
    p.add_argument("--verify-body-seed", type=int, metavar="S",
                   help="check each request body: byte i = (i * 131 + S) %% 251; count misses in bad_bodies")
    p.add_argument("--workers", type=int, default=1, help="worker processes sharing the listening sockets and "
                                                          "the ticket keys (default 1: no fork)")
    p.add_argument("--drop-handshake-alerts", action="store_true",
                   help="when the server side fails the handshake, close without the alert OpenSSL wrote "
                        "(asyncio's own behaviour; default: the alert is sent)")
    p.add_argument("--record-sni", action="store_true",
                   help="count the SNI names in the REPORT (sni); Python then aborts the handshake of a "
                        "non-ASCII SNI (internal_error alert), so it is off by default")
    p.add_argument("--verbose", action="store_true", help="log each connection and error on stderr")
    p.add_argument("--client-ca", help="ask every client for a certificate and verify it against this CA file "
                                       "(PEM); the handshake fails without one unless --client-optional")
    p.add_argument("--client-optional", action="store_true", help="with --client-ca: ask, do not require")
    a = p.parse_args(argv)
    if a.workers < 1 or a.body_size < 0 or not 0 <= a.hold_s <= 600:
        p.error("--workers must be >= 1, --body-size >= 0 and --hold-s within 0..600")
    return Config(chain=a.chain, key=a.key, hosts=a.host or ["127.0.0.1"], port=a.port, behaviour=a.behaviour,
                  min_version=a.min_version, max_version=a.max_version, ciphers=a.ciphers,
                  num_tickets=a.num_tickets, body_size=a.body_size, status=a.status, delay_ms=a.delay_ms, hold_s=a.hold_s,
                  verify_body_seed=a.verify_body_seed, workers=a.workers, refuse_resumption=a.refuse_resumption,
                  drop_handshake_alerts=a.drop_handshake_alerts, record_sni=a.record_sni, verbose=a.verbose,
                  client_ca=a.client_ca, client_optional=a.client_optional)


def run_server(program: str, serve, cfg: Config, refusal: str = "") -> None:
    """SERVE(CFG), a refusal of the flags or an error of the set-up as one line and exit 2."""
    try:
        if refusal:
            raise ValueError(refusal)
        serve(cfg)
    except (OSError, ssl.SSLError, ValueError) as exc:  # unreadable PEM, bad cipher string, address in use
        print(f"{program}: {exc}", file=sys.stderr)
        sys.exit(2)


def main() -> None:
    cfg = parse_args()
    if not cfg.drop_handshake_alerts:
        send_handshake_alerts()
    run_server("tls_server", serve_forever, cfg)


if __name__ == "__main__":
    sys.exit(main())
