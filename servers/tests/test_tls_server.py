#!/usr/bin/python3
"""Self-test of servers/tls_server.py: every behaviour, checked with Python's own ssl client.

Certificates are made here with trustme in a temporary folder, so this gate does not
depend on the certs/ build. Prints PASS/FAIL per case and `N passed, N failed`.

    /usr/bin/python3 -m servers.tests.test_tls_server [--only CASE...]
"""
from __future__ import annotations

import argparse
import errno
import functools
import select
import socket
import ssl
import struct
import subprocess
import sys
import tempfile
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from harness import PY, SERVERS, Gate, Server

import trustme

TIMEOUT_S = 10.0  # no case waits this long unless the server under test hangs


def pattern(size: int, seed: int) -> bytes:
    """The lab's body pattern: byte i = (i * 131 + seed) % 251 (the server answers with seed 0).
    Written again here on purpose: the oracle must not share the server's code."""
    return bytes((i * 131 + seed) % 251 for i in range(size))


# --- certificates and the server under test -------------------------------------------------

@dataclass
class Certs:
    ca: str          # trusts the server
    other_ca: str    # another PKI: a client trusting only this rejects the server
    chain: str
    key: str


def make_certs(folder: Path) -> Certs:
    ca, other = trustme.CA(), trustme.CA()
    leaf = ca.issue_cert("localhost", "127.0.0.1")
    ca.cert_pem.write_to_path(str(folder / "ca.pem"))
    other.cert_pem.write_to_path(str(folder / "other_ca.pem"))
    leaf.private_key_pem.write_to_path(str(folder / "key.pem"))
    (folder / "chain.pem").write_bytes(b"".join(blob.bytes() for blob in leaf.cert_chain_pems))
    return Certs(*(str(folder / n) for n in ("ca.pem", "other_ca.pem", "chain.pem", "key.pem")))


class Lab:
    """What every case gets: the gate, the certificates, and a way to start the server."""

    def __init__(self, gate: Gate, certs: Certs):
        self.gate, self.certs = gate, certs
        self.started: list[Server] = []

    def server(self, *args) -> Server:
        srv = Server.script("tls_server.py", "--chain", self.certs.chain, "--key", self.certs.key, *args)
        self.started.append(srv)
        return srv

    def stop_leftovers(self) -> None:
        """Servers a case left running because it failed half way."""
        for srv in self.started:
            if srv.proc.returncode is None:
                srv.stop()
        self.started.clear()

    def stop(self, case: str, srv: Server) -> dict:
        """Stop the server; a traceback or an internal error on the way fails the case."""
        report = srv.stop()
        quiet = not srv.stderr.strip() and report.get("internal_errors", 1) == 0
        if not quiet:
            self.gate.check(f"{case}/quiet", False, f"stderr={srv.stderr.strip()[-400:]!r} report={report}")
        return report

    def client_context(self, cafile: Optional[str] = None) -> ssl.SSLContext:
        ctx = ssl.create_default_context(cafile=cafile or self.certs.ca)
        # Python 3.11 sets this by default; the lab's C client does not, so a FIN without close_notify must raise
        ctx.options &= ~ssl.OP_IGNORE_UNEXPECTED_EOF
        return ctx

    @functools.cached_property
    def trusting(self) -> ssl.SSLContext:
        """One client context for the lab's CA: a saved session resumes only through the context that made it."""
        return self.client_context()

    def tls(self, port: int, ctx: Optional[ssl.SSLContext] = None, host: str = "127.0.0.1",
            session: Optional[ssl.SSLSession] = None, timeout: float = TIMEOUT_S) -> ssl.SSLSocket:
        raw = socket.create_connection((host, port), timeout=timeout)
        try:
            # suppress_ragged_eofs=False: a FIN without close_notify must raise, as it does for the C client
            return (ctx or self.trusting).wrap_socket(raw, server_hostname="localhost", session=session,
                                                     suppress_ragged_eofs=False)
        except BaseException:
            raw.close()
            raise


def tcp(port: int, timeout: float = TIMEOUT_S) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=timeout)


def request(body: bytes = b"", close: bool = False) -> bytes:
    method = "POST" if body else "GET"
    extra = f"Content-Length: {len(body)}\r\n" if body else ""
    extra += "Connection: close\r\n" if close else ""
    return f"{method} / HTTP/1.1\r\nHost: localhost\r\n{extra}\r\n".encode() + body


# --- reading responses ----------------------------------------------------------------------

@dataclass
class Response:
    status_line: str
    headers: dict[str, str]
    body: bytes


class Wire:
    """A buffered reader over a socket that keeps what arrived before an error."""

    def __init__(self, sock: socket.socket):
        self.sock, self.buf = sock, b""

    def fill(self) -> None:
        chunk = self.sock.recv(65536)
        if not chunk:
            raise EOFError("peer closed")
        self.buf += chunk

    def take_until(self, mark: bytes) -> bytes:
        while mark not in self.buf:
            self.fill()
        head, _, self.buf = self.buf.partition(mark)
        return head

    def take(self, n: int) -> bytes:
        while len(self.buf) < n:
            self.fill()
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def response(self) -> Response:
        lines = self.take_until(b"\r\n\r\n").decode("latin-1").split("\r\n")
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
        if headers.get("transfer-encoding") == "chunked":
            body = b""
            while size := int(self.take_until(b"\r\n"), 16):
                body += self.take(size)
                self.take(2)
            self.take(2)
        else:
            body = self.take(int(headers["content-length"]))
        return Response(lines[0], headers, body)

    def until_error(self) -> Optional[BaseException]:
        """Read until EOF or an error; return the error (None for a clean EOF)."""
        try:
            while True:
                self.fill()
        except EOFError:
            return None
        except (OSError, ssl.SSLError) as exc:
            return exc


def fetch(sock: socket.socket, body: bytes = b"") -> Response:
    sock.sendall(request(body))
    return Wire(sock).response()


def subset(report: dict, *keys: str) -> dict:
    return {k: report.get(k) for k in keys}


def error_name(exc: Optional[BaseException]) -> str:
    """'none', the exception's class, or class:REASON for an OpenSSL error."""
    if exc is None:
        return "none"
    reason = getattr(exc, "reason", None)
    return f"{type(exc).__name__}:{reason}" if reason else type(exc).__name__


def error_of(fn: Callable[[], object]) -> str:
    """error_name of what fn raises."""
    try:
        fn()
    except BaseException as exc:  # noqa: BLE001 - the type is the result
        return error_name(exc)
    return "none"


class BioClient:
    """TLS over memory BIOs: what the socket did (EOF, RST) is seen apart from what TLS made of it,
    and no alert is written back (a kernel RST answering it would blur a FIN into a reset)."""

    def __init__(self, sock: socket.socket, ctx: ssl.SSLContext):
        self.sock, self.incoming, self.outgoing = sock, ssl.MemoryBIO(), ssl.MemoryBIO()
        self.obj = ctx.wrap_bio(self.incoming, self.outgoing, server_hostname="localhost")
        self.socket_end = "open"  # then "eof" or an errno name

    def pull(self) -> None:
        try:
            data = self.sock.recv(65536)
        except OSError as exc:
            self.socket_end = errno.errorcode.get(exc.errno or 0, type(exc).__name__)
            self.incoming.write_eof()
            return
        if data:
            self.incoming.write(data)
        else:
            self.socket_end = "eof"
            self.incoming.write_eof()

    def handshake(self) -> None:
        while True:
            try:
                self.obj.do_handshake()
                break
            except ssl.SSLWantReadError:
                self.sock.sendall(self.outgoing.read())
                self.pull()
        self.sock.sendall(self.outgoing.read())

    def send(self, data: bytes) -> None:
        self.obj.write(data)
        self.sock.sendall(self.outgoing.read())

    def read_to_end(self) -> tuple[bytes, str]:
        """Plaintext until TLS gives up, and error_name of why."""
        got = b""
        while True:
            try:
                got += self.obj.read(65536)
            except ssl.SSLWantReadError:
                self.pull()
            except ssl.SSLError as exc:
                return got, error_name(exc)


# --- cases: one function per behaviour or option, named for what it pins --------------------

def normal_keepalive_answers_every_request(lab: Lab) -> None:
    srv = lab.server("--body-size", "37")
    with lab.tls(srv.port) as s:
        got = [fetch(s) for _ in range(3)]
    report = lab.stop("normal", srv)
    lab.gate.expect("normal/keepalive_bodies", [("HTTP/1.1 200 OK", "37", 37, True)] * 3,
                    [(r.status_line, r.headers.get("content-length"), len(r.body), r.body == pattern(37, 0))
                     for r in got])
    lab.gate.expect("normal/report", {"connections": 1, "handshakes": 1, "requests": 3, "resumed": 0,
                                      "tls_versions": {"TLSv1.3": 1}, "connections_by_addr": {"127.0.0.1": 1}},
                    subset(report, "connections", "handshakes", "requests", "resumed", "tls_versions",
                           "connections_by_addr"))


def statuses_and_report(lab: Lab, name: str, args: list[str], send) -> tuple[list[str], dict]:
    """A server with ARGS, SEND(socket) over one TLS connection (the status lines it read), its REPORT."""
    srv = lab.server(*args)
    with lab.tls(srv.port) as s:
        statuses = send(s)
    return statuses, lab.stop(name, srv)


def normal_counts_request_bodies(lab: Lab) -> None:
    def two(s) -> list[str]:
        statuses = [fetch(s, b"x" * 1000).status_line, fetch(s).status_line]
        s.unwrap()  # close_notify, then FIN: how the C client ends a connection
        return statuses
    statuses, report = statuses_and_report(lab, "bytes_in", ["--status", "503"], two)
    lab.gate.expect("normal/status_option", ["HTTP/1.1 503 Service Unavailable"] * 2, statuses)
    lab.gate.expect("normal/bytes_in", {"requests": 2, "bytes_in": 1000, "bad_bodies": 0},
                    subset(report, "requests", "bytes_in", "bad_bodies"))


def verify_body_seed_counts_bad_body(lab: Lab) -> None:
    statuses, report = statuses_and_report(
        lab, "verify_body_seed", ["--verify-body-seed", "7"],
        lambda s: [fetch(s, body).status_line for body in (pattern(500, 7), pattern(500, 8), pattern(1, 7))])
    lab.gate.expect("verify_body_seed/still_200", ["HTTP/1.1 200 OK"] * 3, statuses)
    lab.gate.expect("verify_body_seed/report", {"requests": 3, "bad_bodies": 1, "bytes_in": 1001},
                    subset(report, "requests", "bad_bodies", "bytes_in"))


def silent_sends_nothing(lab: Lab) -> None:
    srv = lab.server("--behaviour", "silent")
    with tcp(srv.port) as s:
        s.sendall(b"\x16\x03\x01\x00\x05hello")
        s.settimeout(1.0)  # only the wait for a byte that must not come is short
        got = error_of(lambda: s.recv(1))
    report = lab.stop("silent", srv)
    lab.gate.expect("silent/nothing_in_1s", "TimeoutError", got)
    lab.gate.expect("silent/report", {"connections": 1, "handshakes": 0}, subset(report, "connections", "handshakes"))


def close_before_handshake_gives_eof(lab: Lab) -> None:
    srv = lab.server("--behaviour", "close-before-handshake")
    with tcp(srv.port) as s:
        raw = s.recv(1)
    tls_error = error_of(lambda: lab.tls(srv.port))
    report = lab.stop("close-before-handshake", srv)
    lab.gate.expect("close-before-handshake/eof_before_any_byte", b"", raw)
    lab.gate.expect("close-before-handshake/tls_client_sees_eof", "SSLError:UNEXPECTED_EOF_WHILE_READING", tls_error)
    lab.gate.expect("close-before-handshake/report", {"connections": 2, "handshakes": 0},
                    subset(report, "connections", "handshakes"))


def first_error_of_tcp(port: int) -> str:
    """What a plain TCP client meets first, connecting or reading: a peer that resets at once may
    do so before connect() has returned (its SO_ERROR is then ECONNRESET), so the connect is part
    of what is observed, not a step that may raise before the observation."""
    def connect_then_read() -> None:
        with tcp(port) as s:
            s.recv(1)
    return error_of(connect_then_read)


def reset_gives_econnreset(lab: Lab) -> None:
    srv = lab.server("--behaviour", "reset")
    raw = first_error_of_tcp(srv.port)
    tls_error = error_of(lambda: lab.tls(srv.port))
    lab.stop("reset", srv)
    lab.gate.expect("reset/raw_econnreset", "ConnectionResetError", raw)
    lab.gate.expect("reset/tls_client_econnreset", "ConnectionResetError", tls_error)


def fin_then_reset_gives_eof_then_epipe(lab: Lab) -> None:
    srv = lab.server("--behaviour", "fin-then-reset")
    with tcp(srv.port) as s:
        s.sendall(b"\x16\x03\x01")  # the start of a ClientHello: the peer waits for one byte
        first = s.recv(1)
        poller = select.poll()
        poller.register(s, select.POLLERR)
        landed = bool(poller.poll(TIMEOUT_S * 1000))  # waits for the RST, not a sleep
        second = error_of(lambda: s.send(b"\x15\x03\x03\x00\x02\x02\x32"))  # what OpenSSL's alert would be
    lab.stop("fin-then-reset", srv)
    lab.gate.expect("fin-then-reset/eof_rst_epipe", (b"", True, "BrokenPipeError"), (first, landed, second))


def reset_during_body_breaks_the_pipe_of_a_sender(lab: Lab) -> None:
    srv = lab.server("--behaviour", "reset-during-body")
    with tcp(srv.port) as s:
        client = BioClient(s, lab.trusting)  # the socket's own error, not what TLS makes of it
        client.handshake()

        def send_a_large_body() -> None:  # 16 MB: more than the loopback buffers hold, so a write meets the RST
            client.send(b"POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 16000000\r\n\r\n")
            piece = pattern(16000, 0)
            for _ in range(1000):
                client.send(piece)
        got = error_of(send_a_large_body)
    report = lab.stop("reset-during-body", srv)
    lab.gate.expect("reset-during-body/sender_gets_epipe", ("BrokenPipeError", 1, 1),
                    (got, report.get("handshakes"), report.get("requests")))


def plaintext_http_is_wrong_version(lab: Lab) -> None:
    srv = lab.server("--behaviour", "plaintext-http")
    try:
        lab.tls(srv.port).close()
        got = "none"
    except ssl.SSLError as exc:
        got = exc.reason
    report = lab.stop("plaintext-http", srv)
    lab.gate.expect("plaintext-http/wrong_version_number", ("WRONG_VERSION_NUMBER", 0),
                    (got, report.get("handshakes")))


def close_after_handshake_sends_close_notify(lab: Lab) -> None:
    srv = lab.server("--behaviour", "close-after-handshake")
    with lab.tls(srv.port) as s:
        got = s.recv(1)  # b"" is close_notify; a bare FIN would raise SSLEOFError
    report = lab.stop("close-after-handshake", srv)
    lab.gate.expect("close-after-handshake/close_notify", (b"", 1, 0), (got, report.get("handshakes"),
                                                                        report.get("requests")))


def stall_response_never_answers(lab: Lab) -> None:
    srv = lab.server("--behaviour", "stall-response")
    with lab.tls(srv.port) as s:  # the handshake has the whole TIMEOUT_S (a loaded machine)
        s.sendall(request())
        s.settimeout(1.0)  # only the wait for a response that must not come is short
        got = error_of(lambda: s.recv(1))
    report = lab.stop("stall-response", srv)
    lab.gate.expect("stall-response/nothing_in_1s", ("TimeoutError", 1), (got, report.get("requests")))


def slow_response_waits(lab: Lab) -> None:
    srv = lab.server("--behaviour", "slow-response", "--delay-ms", "300")
    with lab.tls(srv.port) as s:
        start = time.monotonic()
        body = fetch(s).body
        waited = time.monotonic() - start
    lab.stop("slow-response", srv)
    lab.gate.check("slow-response/waits_delay", waited >= 0.3 and body == pattern(16, 0), f"{waited:.3f}s")


def partial_response(lab: Lab, behaviour: str) -> tuple[str, int, int, str, str]:
    """(status line, Content-Length, body bytes received, how the socket ended, what TLS made of it)."""
    srv = lab.server("--behaviour", behaviour, "--body-size", "1000")
    with tcp(srv.port) as s:
        client = BioClient(s, lab.trusting)
        client.handshake()
        client.send(request())
        plain, tls_end = client.read_to_end()
    lab.stop(behaviour, srv)
    head, _, body = plain.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    length = next((int(v) for k, _, v in (l.partition(":") for l in lines) if k.lower() == "content-length"), -1)
    return lines[0], length, len(body), client.socket_end, tls_end


def reset_mid_response_cuts_body_with_rst(lab: Lab) -> None:
    lab.gate.expect("reset-mid-response/half_body_then_rst",
                    ("HTTP/1.1 200 OK", 1000, 500, "ECONNRESET", "SSLError:UNEXPECTED_EOF_WHILE_READING"),
                    partial_response(lab, "reset-mid-response"))


def close_without_notify_is_truncation(lab: Lab) -> None:
    lab.gate.expect("close-without-notify/half_body_then_fin",
                    ("HTTP/1.1 200 OK", 1000, 500, "eof", "SSLError:UNEXPECTED_EOF_WHILE_READING"),
                    partial_response(lab, "close-without-notify"))


def chunked_sends_chunks(lab: Lab) -> None:
    srv = lab.server("--behaviour", "chunked", "--body-size", "37")
    with lab.tls(srv.port) as s:
        got = [fetch(s) for _ in range(2)]
    lab.stop("chunked", srv)
    lab.gate.expect("chunked/keepalive_chunked_bodies", [("chunked", None, 37, True)] * 2,
                    [(r.headers.get("transfer-encoding"), r.headers.get("content-length"), len(r.body),
                      r.body == pattern(37, 0)) for r in got])


def trickle_sends_whole_response(lab: Lab) -> None:
    srv = lab.server("--behaviour", "trickle", "--body-size", "50")
    with lab.tls(srv.port) as s:
        got = fetch(s).body
    lab.stop("trickle", srv)
    lab.gate.expect("trickle/body", (50, True), (len(got), got == pattern(50, 0)))


def one_request(lab: Lab, port: int, session: Optional[ssl.SSLSession] = None) -> tuple[bool, ssl.SSLSession]:
    """A connection with one request read back whole (so TLS 1.3 tickets have arrived): (resumed, session)."""
    with lab.tls(port, session=session) as s:
        fetch(s)
        return s.session_reused, s.session


def workers_report_sums(lab: Lab) -> None:
    srv = lab.server("--workers", "2")
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda _: one_request(lab, srv.port), range(40)))
    report = lab.stop("workers", srv)
    lab.gate.expect("workers/report_sums", {"connections": 40, "handshakes": 40, "requests": 40, "workers": 2,
                                            "workers_lost": 0, "worker_total": 40},
                    {**subset(report, "connections", "handshakes", "requests", "workers", "workers_lost"),
                     "worker_total": sum(report.get("per_worker_connections", []))},
                    f"per worker {report.get('per_worker_connections')}")


def tickets_resume_across_workers(lab: Lab) -> None:
    srv = lab.server("--workers", "2")
    _, session = one_request(lab, srv.port)
    with ThreadPoolExecutor(4) as pool:
        reused = list(pool.map(lambda _: one_request(lab, srv.port, session)[0], range(12)))
    report = lab.stop("resume", srv)
    per_worker = report.get("per_worker_connections", [])
    lab.gate.expect("resume/every_ticket_accepted", ([True] * 12, 12, 13),
                    (reused, report.get("resumed"), report.get("handshakes")), f"per worker {per_worker}")
    # The ticket came from one worker; every resumption succeeded, so both serving proves the keys are shared.
    if len(per_worker) == 2 and min(per_worker) > 0:
        lab.gate.check("resume/across_workers", True, f"per worker {per_worker}")
    else:
        lab.gate.skip("resume/across_workers", f"the kernel gave every connection to one worker: {per_worker}")


def refuse_resumption_issues_but_never_accepts(lab: Lab) -> None:
    srv = lab.server("--refuse-resumption")
    _, session = one_request(lab, srv.port)
    reused = [one_request(lab, srv.port, session)[0] for _ in range(3)]
    report = lab.stop("refuse-resumption", srv)
    lab.gate.expect("refuse-resumption/full_handshakes", ([False] * 3, 0, 4),
                    (reused, report.get("resumed"), report.get("handshakes")),
                    f"ticket offered: {session.has_ticket}")


def max_version_12(lab: Lab) -> None:
    srv = lab.server("--max-version", "1.2")
    with lab.tls(srv.port) as s:
        fetch(s)
        got = s.version()
    report = lab.stop("tls1.2", srv)
    lab.gate.expect("versions/max_1.2", ("TLSv1.2", {"TLSv1.2": 1}), (got, report.get("tls_versions")))


def tls10_needs_seclevel0(lab: Lab) -> None:
    srv = lab.server("--min-version", "1.0", "--max-version", "1.0", "--ciphers", "DEFAULT:@SECLEVEL=0")
    old = lab.client_context()
    with warnings.catch_warnings():  # TLS 1.0 is deprecated in Python; that is the point here
        warnings.simplefilter("ignore", DeprecationWarning)
        old.minimum_version = ssl.TLSVersion.TLSv1
    old.set_ciphers("DEFAULT:@SECLEVEL=0")
    with lab.tls(srv.port, ctx=old) as s:
        fetch(s)
        got = s.version()
    refused = error_of(lambda: lab.tls(srv.port))  # control: Debian's default client refuses TLS 1.0
    report = lab.stop("tls1.0", srv)
    lab.gate.expect("versions/tls1.0_server_is_real", ("TLSv1", "SSLError", {"TLSv1": 1}),
                    (got, refused, report.get("tls_versions")))


def hosts_share_one_port(lab: Lab) -> None:
    srv = lab.server("--host", "127.0.0.1", "--host", "127.0.0.2")
    for host in ("127.0.0.1", "127.0.0.2", "127.0.0.2"):
        with lab.tls(srv.port, host=host) as s:
            fetch(s)
    report = lab.stop("hosts", srv)
    lab.gate.expect("hosts/by_local_addr", {"127.0.0.1": 1, "127.0.0.2": 2}, report.get("connections_by_addr"))


def sni_is_counted_on_request(lab: Lab) -> None:
    srv = lab.server("--record-sni")
    with lab.tls(srv.port) as s:
        fetch(s)
    blind = lab.client_context()
    blind.check_hostname = False
    with blind.wrap_socket(tcp(srv.port)) as s:  # no server_hostname: no SNI
        fetch(s)
    utf8 = s_client(srv.port, "café.test")
    report = lab.stop("sni", srv)
    lab.gate.expect("sni/recorded", ({"localhost": 1, "(none)": 1, "café.test": 1}, 1),
                    (report.get("sni"), utf8), "(Python aborts a non-ASCII SNI once it has a callback)")
    srv = lab.server()
    utf8 = s_client(srv.port, "café.test")
    report = lab.stop("sni", srv)
    lab.gate.expect("sni/off_by_default_so_any_name_handshakes", ({}, 0, 1), (report.get("sni"), utf8,
                                                                               report.get("handshakes")))


def s_client(port: int, servername: str) -> int:
    """`openssl s_client` sends a raw UTF-8 SNI (Python's client would send the A-label); its exit code."""
    return subprocess.run(["openssl", "s_client", "-brief", "-connect", f"127.0.0.1:{port}", "-servername",
                           servername], stdin=subprocess.DEVNULL, capture_output=True, timeout=TIMEOUT_S).returncode


def handshake_only_clients_are_quiet(lab: Lab) -> None:
    # close_notify right behind the Finished (tlsnb --requests 0) once made asyncio warn on stderr
    srv = lab.server()
    exits = [s_client(srv.port, "localhost") for _ in range(5)]  # s_client sends both in one write
    report = lab.stop("handshake-only", srv)
    lab.gate.expect("handshake-only/counted", ([0] * 5, 5, 0), (exits, report.get("handshakes"),
                                                                report.get("requests")))


def handshake_alert_is_sent(lab: Lab) -> None:
    old = lab.client_context()
    old.maximum_version = ssl.TLSVersion.TLSv1_2
    got = {}
    for flags in ((), ("--drop-handshake-alerts",)):
        srv = lab.server("--min-version", "1.3", *flags)
        got[flags] = error_of(lambda: lab.tls(srv.port, ctx=old))
        report = lab.stop("alerts", srv)
        got[flags] = (got[flags], report.get("handshake_errors"))
    lab.gate.expect("alerts/protocol_version_sent",
                    ("SSLError:TLSV1_ALERT_PROTOCOL_VERSION", {"UNSUPPORTED_PROTOCOL": 1}), got[()])
    lab.gate.expect("alerts/dropped_on_request", ("SSLError:UNEXPECTED_EOF_WHILE_READING", {"UNSUPPORTED_PROTOCOL": 1}),
                    got[("--drop-handshake-alerts",)])


def misbehaving_clients_are_survived(lab: Lab) -> None:
    srv = lab.server("--verify-body-seed", "0")
    rejected = error_of(lambda: lab.tls(srv.port, ctx=lab.client_context(lab.certs.other_ca)))
    with tcp(srv.port) as s:  # half a ClientHello, then FIN
        s.sendall(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03")
    with tcp(srv.port) as s:  # garbage instead of a ClientHello
        s.sendall(b"GET / HTTP/1.1\r\n\r\n")
        s.recv(100)
    with tcp(srv.port) as s:  # RST straight after connect
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    with lab.tls(srv.port) as s:  # RST in the middle of a request body
        s.sendall(request(pattern(1000, 0))[:-400])
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    with lab.tls(srv.port) as s:
        status = fetch(s, pattern(100, 0)).status_line
    report = lab.stop("misbehaving-clients", srv)
    lab.gate.expect("misbehaving-clients/client_rejects_cert", "SSLCertVerificationError:CERTIFICATE_VERIFY_FAILED",
                    rejected)
    lab.gate.expect("misbehaving-clients/still_serves", "HTTP/1.1 200 OK", status)
    lab.gate.expect("misbehaving-clients/counted",
                    {"connections": 6, "handshakes": 2, "handshake_failures": 4, "requests": 1, "bad_bodies": 0,
                     "errors_after_handshake": 1, "internal_errors": 0, "unknown_ca_alert": 1},
                    {**subset(report, "connections", "handshakes", "handshake_failures", "requests", "bad_bodies",
                              "errors_after_handshake", "internal_errors"),
                     "unknown_ca_alert": report.get("handshake_errors", {}).get("TLSV1_ALERT_UNKNOWN_CA")},
                    f"handshake_errors {report.get('handshake_errors')}")


def bad_chain_is_usage_error(lab: Lab) -> None:
    proc = subprocess.run([PY, str(SERVERS / "tls_server.py"), "--chain", "/nonexistent.pem", "--key",
                           lab.certs.key], capture_output=True, text=True, timeout=TIMEOUT_S)
    lab.gate.expect("usage/unreadable_chain", (2, 1, ""), (proc.returncode, len(proc.stderr.splitlines()),
                                                           proc.stdout))


CASES: list[Callable[[Lab], None]] = [
    normal_keepalive_answers_every_request, normal_counts_request_bodies, verify_body_seed_counts_bad_body,
    silent_sends_nothing, close_before_handshake_gives_eof, reset_gives_econnreset,
    fin_then_reset_gives_eof_then_epipe, reset_during_body_breaks_the_pipe_of_a_sender, plaintext_http_is_wrong_version, close_after_handshake_sends_close_notify,
    stall_response_never_answers, slow_response_waits, reset_mid_response_cuts_body_with_rst,
    close_without_notify_is_truncation, chunked_sends_chunks, trickle_sends_whole_response, workers_report_sums,
    tickets_resume_across_workers, refuse_resumption_issues_but_never_accepts, max_version_12,
    tls10_needs_seclevel0, hosts_share_one_port, sni_is_counted_on_request, handshake_only_clients_are_quiet,
    handshake_alert_is_sent,
    misbehaving_clients_are_survived,
    bad_chain_is_usage_error,
]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", nargs="*", default=[], help="run only these cases (function names)")
    args = p.parse_args()
    return run_cases("tls_server", Lab, CASES, args.only)


def run_cases(name: str, lab_class: type, cases: list[Callable[[Lab], None]], only: list[str]) -> int:
    """Each case (all, or those named in ONLY) against a LAB_CLASS's servers, in one gate NAME."""
    gate = Gate(name)
    with tempfile.TemporaryDirectory(prefix=f"{name}_test.") as tmp:
        lab = lab_class(gate, make_certs(Path(tmp)))
        for case in cases:
            if only and case.__name__ not in only:
                continue
            try:
                case(lab)
            except Exception as exc:  # a case that blows up is a failure with its reason, not a stack trace
                gate.check(case.__name__, False, f"raised {exc!r}")
            finally:
                lab.stop_leftovers()
    return gate.finish()


if __name__ == "__main__":
    sys.exit(main())
