#!/usr/bin/python3
"""The lab's many-connection receiver: tls_server.py's `normal` behaviour for less CPU.

A row that makes thousands of connections (leaks/leaks.toml's longrun rows, the allocation sweeps) spends
more CPU in its server than in the client it judges: tls_server.py's asyncio streams move every TLS
record through Python (sslproto's memory BIOs). This one serves the same HTTP/1.1 answers from one
selectors loop a worker over non-blocking ssl.SSLSocket objects, so that the handshake and every
record stay in OpenSSL's socket BIO: a quarter less CPU a full handshake, two fifths less a resumed
connection (bench/servers.py measures both; the figures are in servers/README.md).

It takes tls_server.py's flags, its TLS context (make_context: the same certificates, versions,
ciphers, tickets and --client-ca), its response (make_response), its REPORT fields for what it
counts, and its workers' protocol (forked after the context is made, so they share the ticket
keys; each hands its tally to the parent on SIGTERM). It refuses what it does not do: any
--behaviour but normal, --refuse-resumption, --record-sni, --verify-body-seed, --delay-ms and
--hold-s (exit 2, one line). Behaviour per connection, as serve_http's for `normal`: the handshake
(its failure counted by reason, the alert OpenSSL writes sent), then every request (its head up to
CRLF CRLF, its body by Content-Length) answered with the response, until the client closes
(close_notify answered with close_notify) or a request says Connection: close.

    /usr/bin/python3 servers/bulk_server.py --chain leaf.pem --key leaf.key [--workers 2] [--client-ca ca.pem]
"""
from __future__ import annotations

import errno
import selectors
import signal
import socket
import ssl
import sys

from tls_server import (Config, Tally, bind_all, die_with_parent, error_name, hand_over, make_context,
                        make_response, parse_args, run_parent, run_server, say_report)

REFUSED = {"refuse_resumption": "--refuse-resumption", "record_sni": "--record-sni",
           "verify_body_seed": "--verify-body-seed", "drop_handshake_alerts": "--drop-handshake-alerts"}
DEFAULTS = {"delay_ms": 1000, "hold_s": 10.0}   # tls_server.py's, which this server never uses
EXPECTED = (ssl.SSLError, OSError, ValueError)  # what a client can cause: counted, never raised
TCP_CLOSE = 7   # include/net/tcp_states.h: the state a reset leaves
# Connections taken a wake-up. The workers wait on one listening socket and wake together; one that
# drained the backlog took every connection of a quiet burst (servers_bulk_server's resume/across_workers
# skipped: [13, 0]). One a wake-up, and the socket still readable, they share them.
ACCEPTS_A_WAKEUP = 1


class Connection:
    __slots__ = ("sock", "local", "handshaken", "inbox", "outbox", "closing")

    def __init__(self, sock: ssl.SSLSocket, local: str):
        self.sock, self.local = sock, local
        self.handshaken = self.closing = False
        self.inbox = self.outbox = b""


class Loop:
    """One worker's connections, each a small state machine stepped when its socket is ready."""

    def __init__(self, cfg: Config, socks: list[socket.socket], ctx: ssl.SSLContext, tally: Tally):
        self.cfg, self.ctx, self.tally = cfg, ctx, tally
        self.response = make_response(cfg)
        self.selector = selectors.DefaultSelector()
        for sock in socks:
            self.selector.register(sock, selectors.EVENT_READ, None)

    def run(self, hand_over) -> None:
        """Serves until SIGTERM; then steps what is ready once more (a failure the client has already
        seen is counted) and calls HAND_OVER. The handler only wakes the loop: a tally is never handed
        over half way through a step."""
        wake_r, wake_w = socket.socketpair()
        wake_r.setblocking(False)
        wake_w.setblocking(False)
        stopping = []
        signal.set_wakeup_fd(wake_w.fileno())
        signal.signal(signal.SIGTERM, lambda *_: stopping.append(1))
        self.selector.register(wake_r, selectors.EVENT_READ, "wake")
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
        while True:
            for key, _ in self.selector.select(0 if stopping else None):
                if key.data is None:
                    self.accept(key.fileobj)
                elif key.data != "wake":
                    self.step(key.data)
            if stopping and not [k for k, _ in self.selector.select(0) if k.data != "wake"]:
                hand_over()

    def accept(self, listener: socket.socket) -> None:
        for _ in range(ACCEPTS_A_WAKEUP):
            try:
                raw, _ = listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as e:   # EMFILE and the like: the client sees a refused or reset connection
                self.tally.internal_errors += 1
                print(f"bulk_server: accept: {errno.errorcode.get(e.errno, e.errno)}", file=sys.stderr, flush=True)
                return
            self.tally.connections += 1
            try:
                local = raw.getsockname()[0]
                Tally.bump(self.tally.connections_by_addr, local)
                raw.setblocking(False)
                conn = Connection(self.ctx.wrap_socket(raw, server_side=True, do_handshake_on_connect=False,
                                                      suppress_ragged_eofs=False), local)
            except OSError as exc:   # reset before we looked at it
                self.tally.handshake_failures += 1
                Tally.bump(self.tally.handshake_errors, error_name(exc))
                raw.close()
                continue
            self.selector.register(conn.sock, selectors.EVENT_READ, conn)
            self.step(conn)

    def step(self, c: Connection) -> None:
        try:
            if not c.handshaken:
                c.sock.do_handshake()
                c.handshaken = True
                self.handshaken(c.sock)
            self.pump(c)
        except ssl.SSLWantReadError:
            self.selector.modify(c.sock, selectors.EVENT_READ, c)
        except ssl.SSLWantWriteError:
            self.selector.modify(c.sock, selectors.EVENT_WRITE, c)
        except EXPECTED as exc:
            if c.handshaken:
                self.tally.errors_after_handshake += 1
            else:
                self.tally.handshake_failures += 1
                Tally.bump(self.tally.handshake_errors, "eof" if isinstance(exc, (ssl.SSLEOFError, ssl.SSLZeroReturnError)) else error_name(exc))
            self.drain(c)
            self.drop(c)
        except Exception as exc:   # a bug here, not the client's doing: counted, said once, the worker lives on
            self.tally.internal_errors += 1
            if self.tally.internal_errors == 1:
                print(f"bulk_server: internal error: {exc!r}", file=sys.stderr, flush=True)
            self.drop(c)

    @staticmethod
    def drain(c: Connection) -> None:
        """Reads what the kernel holds of a connection that failed: closed with unread bytes, it would
        answer with RST where tls_server.py (asyncio reads all there is at once) sends FIN."""
        try:
            for _ in range(64):   # what is there now, not a peer that keeps sending
                if not socket.socket.recv(c.sock, 65536):   # the raw socket's bytes, not TLS's
                    return
        except OSError:
            pass

    def handshaken(self, sock: ssl.SSLSocket) -> None:
        self.tally.handshakes += 1
        self.tally.resumed += int(sock.session_reused)
        Tally.bump(self.tally.tls_versions, sock.version() or "?")
        Tally.bump(self.tally.ciphers, (sock.cipher() or ("?",))[0])

    def pump(self, c: Connection) -> None:
        """Writes what is owed, answers every whole request read, until the socket would block."""
        while True:
            while c.outbox:
                c.outbox = c.outbox[c.sock.send(c.outbox):]
            if c.closing:
                self.close_with_notify(c)
                return
            try:
                data = c.sock.recv(65536)
            except ssl.SSLEOFError:   # no close_notify: OpenSSL says EOF for a FIN and for a reset alike
                self.tally.errors_after_handshake += bool(c.inbox) or reset(c.sock)
                self.drop(c)
                return
            if not data:   # close_notify, or what Python makes of a reset that ate what was unread
                self.tally.errors_after_handshake += bool(c.inbox) or reset(c.sock)
                self.close_with_notify(c)
                return
            c.inbox += data
            self.answer(c)

    def answer(self, c: Connection) -> None:
        while not c.closing:
            head, sep, rest = c.inbox.partition(b"\r\n\r\n")
            if not sep:
                return
            lines = head.decode("latin-1").split("\r\n")
            method, _, version = lines[0].partition(" ")
            headers = {}
            for line in lines[1:]:
                name, colon, value = line.partition(":")
                if colon:
                    headers[name.strip().lower()] = value.strip()
            length = int(headers.get("content-length", "0"))
            if len(rest) < length:
                return
            c.inbox = rest[length:]
            self.tally.requests += 1
            self.tally.bytes_in += length
            Tally.bump(self.tally.methods, method[:16])
            connection = headers.get("connection", "").lower()
            keep_alive = connection == "keep-alive" if version.endswith("HTTP/1.0") else connection != "close"
            c.outbox += self.response
            c.closing = not keep_alive

    def close_with_notify(self, c: Connection) -> None:
        try:
            c.sock.unwrap()   # our close_notify; theirs, if it has not come, is not waited for
        except ssl.SSLWantReadError:
            pass
        except EXPECTED:
            pass
        self.drop(c)

    def drop(self, c: Connection) -> None:
        if c.sock.fileno() >= 0:
            self.selector.unregister(c.sock)
            c.sock.close()


def reset(sock: socket.socket) -> bool:
    """Whether the peer reset the connection (TCP_INFO's state CLOSE; a FIN leaves CLOSE_WAIT). A reset
    is an error where a FIN between requests is an end, as tls_server.py (asyncio reads the socket
    itself and gets ECONNRESET) counts them; a reset also throws away what the kernel held unread,
    so what was read of a request cannot tell them apart."""
    try:
        return socket.socket.getsockopt(sock, socket.IPPROTO_TCP, socket.TCP_INFO, 1)[0] == TCP_CLOSE
    except OSError:
        return True


def refused(cfg: Config) -> str:
    if cfg.behaviour != "normal":
        return f"--behaviour {cfg.behaviour}: only normal (use servers/tls_server.py)"
    for name, flag in REFUSED.items():
        if getattr(cfg, name):
            return f"{flag}: not done here (use servers/tls_server.py)"
    for name, default in DEFAULTS.items():
        if getattr(cfg, name) != default:
            return f"--{name.replace('_', '-')}: not used by normal (use servers/tls_server.py)"
    return ""


def worker(cfg: Config, socks: list[socket.socket], ctx: ssl.SSLContext, tally: Tally, out_fd: int) -> None:
    """A forked worker: serve until SIGTERM, then hand the tally to the parent through the pipe."""
    die_with_parent()
    Loop(cfg, socks, ctx, tally).run(hand_over(tally, out_fd))


def serve(cfg: Config) -> None:
    tally = Tally()
    ctx = make_context(cfg, tally)
    socks = bind_all(cfg.hosts, cfg.port)
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})  # each worker unblocks its own
    say_report(run_parent(cfg, socks, ctx, tally, worker))   # tls_server.py's parent: fork, READY, sum


def main() -> None:
    cfg = parse_args()
    run_server("bulk_server", serve, cfg, refused(cfg))


if __name__ == "__main__":
    sys.exit(main())
