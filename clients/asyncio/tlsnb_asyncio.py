#!/usr/bin/python3
"""tlsnb_asyncio: tlslab's contract (clients/README.md) kept by CPython 3.11 asyncio + ssl.

One process, one thread, one event loop (asyncio's selector loop, or uvloop with
--loop uvloop); every attempt is a coroutine; --parallel coroutines ("slots") take
attempts from one counter. Each attempt: a non-blocking socket, loop.sock_connect
(stage connect), asyncio.open_connection(sock=..., ssl=ctx, server_hostname=NAME)
(stage handshake: asyncio's sslproto drives an ssl.SSLObject over memory BIOs), then
HTTP/1.1 keep-alive requests on the StreamWriter/StreamReader, then writer.close() +
wait_closed() (close_notify). asyncio.timeout() bounds the whole attempt.

Outcomes and the library errors they come from: see profile.toml [error_map] and
README.md in this folder.
"""
from __future__ import annotations

import asyncio
import contextvars
import errno
import json
import logging
import os
import re
import resource
import socket
import stat
import ssl
import sys
import time
from pathlib import Path

PROG = "tlsnb_asyncio"

# ---------------------------------------------------------------------------------------------
# The command line (mirrors tlsnb's options.cc: the same flags, ranges and messages' shape)

# The help lines of the core flags every adapter words alike, written once (clients/contract/README.md).
CORE_HELP = (Path(__file__).resolve().parent.parent / "contract" / "core_help.txt").read_text(encoding="utf-8")

USAGE = f"""usage: tlsnb_asyncio.py [options] TARGET:PORT

tlslab's client contract on CPython asyncio + ssl: one thread, one event loop,
many attempts as coroutines. TARGET is an IPv4 literal or a name (a name needs --connect).

  --loop asyncio|uvloop  the event loop (default asyncio: the selector loop; uvloop 0.17: libuv)
  --name NAME           name the certificate must carry; SNI (default TARGET)
  --connect IP          dial this IPv4 address; TARGET is then only the name
  --cafile PATH         trust anchors (PEM); without it the system store is used
  --system-trust        also load the system's default trust paths
  --no-verify           do not verify the peer (controls only)
  --no-verify-name      check_hostname = False with CERT_REQUIRED: the chain verified, no name matched
                        (server_hostname still given: the SNI as without it)
  --partial-chain       accept a chain ending at any trusted certificate (VERIFY_X509_PARTIAL_CHAIN)
  --crl FILE            a CRL (PEM; repeatable), loaded into the context's store: the leaf's issuer
                        must have a valid one (VERIFY_CRL_CHECK_LEAF)
  --crl-all             every certificate of the chain needs its issuer's CRL (VERIFY_CRL_CHECK_CHAIN)
  --cert FILE --key FILE
                        a client certificate (chain, PEM) and its key (SSLContext.load_cert_chain),
                        sent whenever the server asks (Python has no hook on the CA names it asks for)
  --tls-max 1.2|1.3     highest protocol version offered (the lowest is always TLS 1.2)
  --sigpipe default|ignore
                        SIGPIPE disposition; CPython already ignores SIGPIPE at start-up, and
                        'default' leaves it so (README.md)
{CORE_HELP}  --deadline-ms MS      per attempt, from its start to the last response (default 2000)
  --resume              offer a session saved from an earlier attempt (through an SSLContext
                        subclass whose wrap_bio passes session=: asyncio has no parameter for it)
  --hold-ms MS          hold each connection open this long after the handshake
  --transport bio       accepted (asyncio's sslproto is memory BIOs); 'fd' exits 89
  --json                one JSON object per attempt, then one summary object
  --help                this text

Not available here (exit 89): --verify-depth (no Python API), --transport fd, --ns,
--dns-udp, --dns-timeout-ms, --allow-private, --ocsp-staple (no staple API), --pin-sha256 (no
verified chain before 3.13).
Exit: 0 every attempt ok, 1 any failed, 2 bad usage or unusable configuration,
89 a flag or value this client cannot honour.
"""


class Usage(Exception):
    """Bad usage or an unusable configuration: one stderr line, exit 2."""


class Unsupported(Exception):
    """A flag or value this client cannot honour: one stderr line, exit 89."""


def parse_int(flag: str, text: str, lo: int, hi: int) -> int:
    if not re.fullmatch(r"[+-]?[0-9]+", text or ""):
        raise Usage(f"{flag}: expects an integer in {lo}..{hi}, got '{text}'")
    value = int(text)
    if value < lo or value > hi:
        raise Usage(f"{flag}: expects an integer in {lo}..{hi}, got '{text}'")
    return value


def is_ipv4(text: str) -> bool:
    try:
        socket.inet_pton(socket.AF_INET, text)
        return True
    except (OSError, ValueError):
        return False


def split_host_port(text: str):
    colon = text.rfind(":")
    if colon <= 0:
        return None
    port_text = text[colon + 1:]
    if not re.fullmatch(r"[0-9]+", port_text) or not 1 <= int(port_text) <= 65535:
        return None
    return text[:colon], int(port_text)


class Options:
    def __init__(self) -> None:
        self.loop = "asyncio"
        self.name = ""
        self.connect_ip = ""
        self.cafile = ""
        self.system_trust = False
        self.verify = True
        self.verify_name = True
        self.partial_chain = False
        self.crls: list[str] = []
        self.crl_all = False
        self.client_cert = ""
        self.client_key = ""
        self.tls_max = "1.3"
        self.sigpipe = ""  # "", "default", "ignore"
        self.count = 1
        self.parallel = 64
        self.requests = 1
        self.body = 0
        self.seed = 1
        self.deadline_ms = 2000
        self.resume = False
        self.hold_ms = 0
        self.json = False
        self.target = ""
        self.port = 0
        self.unsupported: list[str] = []  # reasons for exit 89, checked after the whole line parsed


def parse_options(argv: list[str]) -> Options | None:
    """Returns the options, or None for --help. Raises Usage or Unsupported."""
    o = Options()

    def number(attr, lo, hi):
        return (True, lambda flag, v: setattr(o, attr, parse_int(flag, v, lo, hi)))

    def toggle(attr, value):
        return (False, lambda flag, v: setattr(o, attr, value))

    def text(attr):
        def apply(flag, v):
            if not v:
                raise Usage(f"{flag}: expects a non-empty value")
            setattr(o, attr, v)
        return (True, apply)

    def choice(attr, values):
        def apply(flag, v):
            if v not in values:
                raise Usage(f"{flag}: expects {' or '.join(values)}, got '{v}'")
            setattr(o, attr, v)
        return (True, apply)

    def connect(flag, v):
        if not is_ipv4(v):
            raise Usage(f"{flag}: expects an IPv4 literal, got '{v}'")
        o.connect_ip = v

    def verify_depth(flag, v):
        parse_int(flag, v, 0, 100)
        o.unsupported.append("--verify-depth: Python's ssl module has no API for the verification depth "
                             "(X509_VERIFY_PARAM_set_depth is not exposed)")

    def transport(flag, v):
        if v not in ("bio", "fd"):
            raise Usage(f"{flag}: expects bio or fd, got '{v}'")
        if v == "fd":
            o.unsupported.append("--transport fd: asyncio's sslproto always drives ssl.SSLObject over memory "
                                 "BIOs; there is no socket-BIO transport on an asyncio loop")

    def ns(flag, v):
        hp = split_host_port(v)
        if hp is None or not is_ipv4(hp[0]):
            raise Usage(f"{flag}: expects IPv4:PORT, got '{v}'")
        o.unsupported.append("--ns: this client has no DNS resolver of its own on the loop")

    def crl(flag, v):
        if not v:
            raise Usage(f"{flag}: expects a non-empty value")
        o.crls.append(v)

    def not_built():
        """The staple and pinning flags: exit 89 with the reason (a value is still read)."""
        why = {"--ocsp-staple": (True, "Python's ssl module neither asks for nor exposes an OCSP staple"),
               "--pin-sha256": (True, "Python 3.11's ssl exposes the leaf only, not the verified chain "
                                      "(get_verified_chain is 3.13)")}
        return {flag: (value, lambda f, v, w=w: o.unsupported.append(f"{f}: {w}")) for flag, (value, w) in why.items()}

    def dns_only(what):
        def apply(flag, v):
            if what == "number":
                parse_int(flag, v, 1, 86400000)
            o.unsupported.append(f"{flag}: belongs to --ns, which this client does not have")
        return apply

    table = {
        "--loop": choice("loop", ("asyncio", "uvloop")),
        "--name": text("name"),
        "--connect": (True, connect),
        "--cafile": text("cafile"),
        "--system-trust": toggle("system_trust", True),
        "--no-verify": toggle("verify", False),
        "--no-verify-name": toggle("verify_name", False),
        "--partial-chain": toggle("partial_chain", True),
        "--crl": (True, crl),
        "--crl-all": toggle("crl_all", True),
        "--cert": text("client_cert"),
        "--key": text("client_key"),
        "--verify-depth": (True, verify_depth),
        "--tls-max": choice("tls_max", ("1.2", "1.3")),
        "--transport": (True, transport),
        "--sigpipe": choice("sigpipe", ("default", "ignore")),
        "--count": number("count", 1, 100000000),
        "--parallel": number("parallel", 1, 65536),
        "--requests": number("requests", 0, 1000000),
        "--body": number("body", 0, 1 << 30),
        "--seed": number("seed", 0, 4294967295),
        "--deadline-ms": number("deadline_ms", 1, 86400000),
        "--resume": toggle("resume", True),
        "--hold-ms": number("hold_ms", 0, 86400000),
        "--json": toggle("json", True),
        "--ns": (True, ns),
        "--dns-udp": (False, dns_only("toggle")),
        "--dns-timeout-ms": (True, dns_only("number")),
        "--allow-private": (False, dns_only("toggle")),
        **not_built(),
    }

    positional: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        if arg in ("--help", "-h"):
            return None
        if len(arg) < 2 or arg[0] != "-":
            positional.append(arg)
            continue
        flag, value, inline = arg, "", False
        if arg.startswith("--") and "=" in arg:
            flag, value = arg.split("=", 1)
            inline = True
        if flag not in table:
            raise Usage(f"unknown flag '{flag}' (see --help)")
        takes_value, apply = table[flag]
        if takes_value and not inline:
            if i >= len(argv):
                raise Usage(f"{flag}: missing value")
            value = argv[i]
            i += 1
        elif not takes_value and inline:
            raise Usage(f"{flag}: takes no value")
        apply(flag, value)

    if len(positional) != 1:
        raise Usage("missing TARGET:PORT" if not positional else f"one TARGET:PORT expected, got '{positional[1]}'")
    hp = split_host_port(positional[0])
    if hp is None:
        raise Usage(f"TARGET:PORT: expected HOST:PORT with a port in 1..65535, got '{positional[0]}'")
    o.target, o.port = hp
    if not o.name:
        o.name = o.target
    if bool(o.client_cert) != bool(o.client_key):
        raise Usage("--cert and --key go together")
    if not o.verify and not o.verify_name:
        raise Usage("--no-verify-name and --no-verify exclude each other (the first still verifies the chain; drop one)")
    if not o.verify and (o.crls or o.crl_all):
        raise Usage("--crl, --crl-all and --ocsp-staple need verification (drop --no-verify)")
    if o.unsupported:  # asked for what this client does not have (--ns makes a name TARGET legitimate)
        raise Unsupported(o.unsupported[0])
    if not is_ipv4(o.target) and not o.connect_ip:
        raise Usage(f"TARGET '{o.target}' is a name: give --connect IP (this client never resolves a name)")
    return o


# ---------------------------------------------------------------------------------------------
# OpenSSL's packed error codes, from the headers (ERR_PACK(lib, 0, reason) = lib << 23 | reason)

ERR_LIB_OFFSET = 23
_EMBEDDED_SSL_REASONS = {  # used only when /usr/include/openssl/sslerr.h is not installed (libssl-dev)
    "BAD_ECC_CERT": 304, "BAD_SIGNATURE": 123, "CA_KEY_TOO_SMALL": 397, "CA_MD_TOO_WEAK": 398,
    "CERTIFICATE_VERIFY_FAILED": 134, "DECRYPTION_FAILED_OR_BAD_RECORD_MAC": 281, "EE_KEY_TOO_SMALL": 399,
    "HTTPS_PROXY_REQUEST": 155, "HTTP_REQUEST": 156, "NO_PROTOCOLS_AVAILABLE": 191,
    "NO_SUITABLE_SIGNATURE_ALGORITHM": 118, "PACKET_LENGTH_TOO_LONG": 198,
    "SSLV3_ALERT_BAD_CERTIFICATE": 1042, "SSLV3_ALERT_CERTIFICATE_EXPIRED": 1045,
    "SSLV3_ALERT_CERTIFICATE_UNKNOWN": 1046, "SSLV3_ALERT_HANDSHAKE_FAILURE": 1040,
    "SSLV3_ALERT_ILLEGAL_PARAMETER": 1047, "SSLV3_ALERT_UNEXPECTED_MESSAGE": 1010,
    "TLSV1_ALERT_ACCESS_DENIED": 1049, "TLSV1_ALERT_DECODE_ERROR": 1050, "TLSV1_ALERT_DECRYPT_ERROR": 1051,
    "TLSV1_ALERT_INSUFFICIENT_SECURITY": 1071, "TLSV1_ALERT_INTERNAL_ERROR": 1080,
    "TLSV1_ALERT_NO_RENEGOTIATION": 1100, "TLSV1_ALERT_PROTOCOL_VERSION": 1070,
    "TLSV1_ALERT_UNKNOWN_CA": 1048, "TLSV1_UNRECOGNIZED_NAME": 1112, "UNEXPECTED_EOF_WHILE_READING": 294,
    "UNSAFE_LEGACY_RENEGOTIATION_DISABLED": 338, "UNSUPPORTED_PROTOCOL": 258, "WRONG_CIPHER_RETURNED": 261,
    "WRONG_SIGNATURE_TYPE": 370, "WRONG_VERSION_NUMBER": 267,
}
_INCLUDE = "/usr/include/openssl"
_lib_numbers: dict[str, int] | None = None
_reason_tables: dict[str, dict[str, int]] = {}


def _read_defines(path: str, prefix: str) -> dict[str, int]:
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            text = f.read()
    except OSError:
        return {}
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"#\s*define\s+" + prefix + r"(\w+)\s+(\d+)\b", text)}


def packed_error(library: str | None, reason: str | None) -> int | None:
    """OpenSSL's ERR_PACK(ERR_LIB_<library>, 0, <library>_R_<reason>), or None when unknown."""
    global _lib_numbers
    if not library or not reason:
        return None
    if _lib_numbers is None:
        _lib_numbers = _read_defines(f"{_INCLUDE}/err.h", "ERR_LIB_") or {"SSL": 20, "X509": 11}
    lib = _lib_numbers.get(library)
    if lib is None:
        return None
    if library not in _reason_tables:
        table = _read_defines(f"{_INCLUDE}/{library.lower()}err.h", library + "_R_")
        if not table and library == "SSL":
            table = dict(_EMBEDDED_SSL_REASONS)
        _reason_tables[library] = table
    code = _reason_tables[library].get(reason)
    if code is None:
        return None
    return (lib << ERR_LIB_OFFSET) | code


def reason_source() -> str:
    return "header" if os.path.exists(f"{_INCLUDE}/sslerr.h") else "embedded"


# ---------------------------------------------------------------------------------------------
# Outcomes

STAGE_OK, STAGE_CONNECT, STAGE_HANDSHAKE, STAGE_WRITE, STAGE_READ, STAGE_SETUP, STAGE_DEADLINE = 0, 1, 2, 3, 4, 5, 102
STAGE_NAMES = {0: "ok", 1: "connect", 2: "handshake", 3: "write", 4: "read", 5: "setup", 102: "deadline"}
SHUTDOWN = -100  # internal: the response is complete, close_notify in flight (a deadline here is still ok)


class Outcome(Exception):
    def __init__(self, stage: int, detail: int, text: str):
        super().__init__(text)
        self.stage, self.detail, self.text = stage, detail, text

    def key(self) -> str:
        return f"{STAGE_NAMES[self.stage]}/{self.detail}"


def exc_text(exc: BaseException) -> str:
    """The library's own words, verbatim; the exception's class when it carries none."""
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def ssl_error_outcome(stage: int, exc: ssl.SSLError) -> Outcome:
    if isinstance(exc, ssl.SSLCertVerificationError) and stage == STAGE_HANDSHAKE:
        return Outcome(stage, int(exc.verify_code), exc_text(exc))
    if isinstance(exc, (ssl.SSLEOFError, ssl.SSLSyscallError)):
        return Outcome(stage, -1, exc_text(exc))
    if isinstance(exc, ssl.SSLZeroReturnError):
        return Outcome(stage, 0 if stage != STAGE_HANDSHAKE else -1, exc_text(exc))
    code = packed_error(getattr(exc, "library", None), getattr(exc, "reason", None))
    if code is None:
        # No OpenSSL code to pack (no library/reason on the exception): the class says what it was.
        return Outcome(stage, -1, exc_text(exc))
    if stage == STAGE_HANDSHAKE and code == packed_error("SSL", "UNEXPECTED_EOF_WHILE_READING"):
        return Outcome(stage, -1, exc_text(exc))
    return Outcome(stage, code, exc_text(exc))


def os_error_outcome(stage: int, exc: OSError) -> Outcome:
    if stage == STAGE_CONNECT and exc.errno in (errno.ECONNRESET, errno.EPIPE):
        stage = STAGE_HANDSHAKE  # a reset needs an established connection: the peer closed it (tlsnb's rule)
    if stage == STAGE_HANDSHAKE:  # a reset, EPIPE or EOF before the handshake ended: closed without an alert
        return Outcome(stage, -1, exc_text(exc))
    err = exc.errno
    if err is None:
        # asyncio raises ConnectionResetError('Connection lost') without an errno when the transport
        # was lost to an EOF: the peer closed, no errno says how.
        err = -1
    return Outcome(stage, err, exc_text(exc))


def classify(stage: int, exc: BaseException) -> Outcome:
    if isinstance(exc, Outcome):
        return exc
    if isinstance(exc, ssl.SSLError):
        return ssl_error_outcome(stage, exc)
    if isinstance(exc, asyncio.IncompleteReadError):  # EOF (no probe possible here)
        return Outcome(stage, -1, exc_text(exc))
    if isinstance(exc, OSError):
        return os_error_outcome(stage, exc)
    if isinstance(exc, EOFError):
        return Outcome(stage, -1, exc_text(exc))
    return Outcome(stage, -1, "unexpected: " + exc_text(exc))


# ---------------------------------------------------------------------------------------------
# Process figures

def read_status() -> dict[str, int]:
    out = {"threads": 0, "rss_kib": 0, "rss_peak_kib": 0}
    try:
        with open("/proc/self/status") as f:
            for line in f:
                key, _, rest = line.partition(":")
                if key == "Threads":
                    out["threads"] = int(rest.split()[0])
                elif key == "VmRSS":
                    out["rss_kib"] = int(rest.split()[0])
                elif key == "VmHWM":
                    out["rss_peak_kib"] = int(rest.split()[0])
    except OSError:
        pass
    return out


def cpu_ms() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return (ru.ru_utime + ru.ru_stime) * 1000.0


def count_fds() -> int:
    try:
        return len(os.listdir("/proc/self/fd")) - 1  # the directory's own descriptor is listed too
    except OSError:
        return -1


# ---------------------------------------------------------------------------------------------
# TLS context

# The session the next wrap_bio() should offer, per task (asyncio copies the context into the task).
_next_session: contextvars.ContextVar = contextvars.ContextVar("next_session", default=None)


class ResumingContext(ssl.SSLContext):
    """asyncio.open_connection/create_connection take no session=; SSLProtocol.__init__ calls
    sslcontext.wrap_bio(incoming, outgoing, server_side=, server_hostname=). This public method
    is the one place a session can be handed over: it adds the task's saved session."""

    def wrap_bio(self, incoming, outgoing, server_side=False, server_hostname=None, session=None):
        if session is None:
            session = _next_session.get()
        return super().wrap_bio(incoming, outgoing, server_side=server_side,
                                server_hostname=server_hostname, session=session)


def check_trust_file(path: str) -> None:
    try:
        st = os.stat(path)
    except OSError:
        raise Usage(f"--cafile: cannot read '{path}'")
    if not stat.S_ISREG(st.st_mode):
        raise Usage(f"--cafile: '{path}' is not a regular file")
    if st.st_size == 0:
        raise Usage(f"--cafile: '{path}' is empty")
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        raise Usage(f"--cafile: cannot read '{path}'")
    if b"-----BEGIN CERTIFICATE-----" not in data:
        raise Usage(f"--cafile: no PEM certificate in '{path}'")


def load_crls(ctx: ssl.SSLContext, o: Options) -> None:
    """Each --crl into the context's store (a file that holds a certificate would add a trust anchor:
    refused), then the check: the leaf's issuer (CRL_CHECK), or every issuer of the chain (CRL_CHECK_ALL)."""
    for path in o.crls:
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            data = b""
        if b"-----BEGIN X509 CRL-----" not in data or b"-----BEGIN CERTIFICATE-----" in data:
            raise Usage(f"--crl: no PEM CRL could be loaded from '{path}'")
        try:
            ctx.load_verify_locations(cafile=path)
        except (ssl.SSLError, OSError, ValueError):
            raise Usage(f"--crl: no PEM CRL could be loaded from '{path}'")
    if o.crls or o.crl_all:
        ctx.verify_flags |= ssl.VERIFY_CRL_CHECK_CHAIN if o.crl_all else ssl.VERIFY_CRL_CHECK_LEAF


def certificate_loads(path: str) -> bool:
    """Whether OpenSSL decodes the certificates of PATH (a throwaway context's trust store)."""
    try:
        ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT).load_verify_locations(cafile=path)
        return True
    except (ssl.SSLError, OSError):
        return False


def load_identity(ctx: ssl.SSLContext, o: Options) -> None:
    """--cert and --key (load_cert_chain: the key must match the certificate), tlsnb's words for each refusal."""
    try:
        ctx.load_cert_chain(o.client_cert, o.client_key)
    except ssl.SSLError as exc:
        # a key of the certificate's type that differs (KEY_VALUES_MISMATCH), or a key of another type,
        # which OpenSSL files in another slot with no certificate (NO_CERTIFICATE_ASSIGNED): no match
        if exc.reason in ("KEY_VALUES_MISMATCH", "NO_CERTIFICATE_ASSIGNED"):
            raise Usage(f"--key: '{o.client_key}' does not match the certificate of --cert '{o.client_cert}'")
        if exc.library == "PEM" or "PEM" in str(exc):
            # one "PEM lib" error for either file: the certificate alone tells which
            if not certificate_loads(o.client_cert):
                raise Usage(f"--cert: no PEM certificate could be loaded from '{o.client_cert}' ({exc_text(exc)})")
            raise Usage(f"--key: no PEM private key could be loaded from '{o.client_key}' ({exc_text(exc)})")
        raise Usage(f"--cert: '{o.client_cert}' could not be loaded: {exc_text(exc)}")
    except OSError:
        raise Usage(f"--cert/--key: cannot read '{o.client_cert}' or '{o.client_key}'")


def make_context(o: Options) -> ssl.SSLContext:
    """What ssl.create_default_context() makes (PROTOCOL_TLS_CLIENT: CERT_REQUIRED, check_hostname,
    Python's cipher list, no partial wildcards), then TLS 1.2 minimum, --tls-max, and
    OP_IGNORE_UNEXPECTED_EOF cleared (Python 3.11 sets it; this client wants a FIN without
    close_notify to be truncation; README.md shows that asyncio never lets OpenSSL see that EOF)."""
    if o.cafile:
        check_trust_file(o.cafile)
    cls = ResumingContext if o.resume else ssl.SSLContext
    ctx = cls(ssl.PROTOCOL_TLS_CLIENT)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.maximum_version = ssl.TLSVersion.TLSv1_2 if o.tls_max == "1.2" else ssl.TLSVersion.TLSv1_3
    ctx.options &= ~getattr(ssl, "OP_IGNORE_UNEXPECTED_EOF", 0)
    if o.verify:
        # --no-verify-name: ssl sets X509_VERIFY_PARAM's host or IP only under check_hostname
        # (_ssl_configure_hostname); server_hostname still sends the SNI
        ctx.check_hostname = o.verify_name
        ctx.verify_mode = ssl.CERT_REQUIRED
        if o.cafile:
            try:
                ctx.load_verify_locations(cafile=o.cafile)
            except (ssl.SSLError, OSError, ValueError) as exc:
                raise Usage(f"--cafile: '{o.cafile}' could not be loaded: {exc_text(exc)}")
        if o.system_trust or not o.cafile:
            ctx.load_default_certs(ssl.Purpose.SERVER_AUTH)
            if o.system_trust:
                ctx.set_default_verify_paths()
        if o.partial_chain:
            ctx.verify_flags |= ssl.VERIFY_X509_PARTIAL_CHAIN
        load_crls(ctx, o)
    else:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    if o.client_cert:
        load_identity(ctx, o)
    return ctx


def make_request(o: Options) -> bytes:
    head = ("POST" if o.body > 0 else "GET") + f" / HTTP/1.1\r\nHost: {o.name}\r\nConnection: keep-alive\r\n"
    if o.body > 0:
        head += f"Content-Type: application/octet-stream\r\nContent-Length: {o.body}\r\n"
    head += "\r\n"
    period = bytes((i * 131 + o.seed) % 251 for i in range(251))  # byte i depends on i mod 251 only
    body = (period * (o.body // 251 + 1))[: o.body] if o.body > 0 else b""
    return head.encode("utf-8", "surrogateescape") + body


# ---------------------------------------------------------------------------------------------
# HTTP/1.1 response by Content-Length (the rules of tlsnb's client/http_response.cc)

MAX_LINE = 8192
WRITE_CHUNK = 64 * 1024  # asyncio's default write high-water mark for SSL transports


class Truncated(Exception):
    """EOF from the StreamReader before the response ended."""


async def read_line(reader: asyncio.StreamReader) -> bytes:
    try:
        line = await reader.readuntil(b"\n")
    except asyncio.IncompleteReadError as exc:
        raise Truncated(exc_text(exc))
    except asyncio.LimitOverrunError:
        raise Outcome(STAGE_READ, -3, "header line longer than 8192 bytes")
    line = line[:-1]
    if line.endswith(b"\r"):
        line = line[:-1]
    if len(line) > MAX_LINE:
        raise Outcome(STAGE_READ, -3, "header line longer than 8192 bytes")
    return line


async def read_response(reader: asyncio.StreamReader) -> int:
    status_line = await read_line(reader)
    if not status_line.startswith(b"HTTP/1.") or len(status_line) < 12 or status_line[8:9] != b" ":
        raise Outcome(STAGE_READ, -3, "bad status line")
    if not all(48 <= c <= 57 for c in status_line[9:12]):
        raise Outcome(STAGE_READ, -3, "bad status code")
    status = int(status_line[9:12])
    content_length = -1
    encodings: list[bytes] = []   # every Transfer-Encoding value, judged at the end of the headers
    while True:
        line = await read_line(reader)
        if not line:
            break
        colon = line.find(b":")
        if colon < 0:
            raise Outcome(STAGE_READ, -3, "header without a colon")
        name = line[:colon].strip(b" \t").lower()
        value = line[colon + 1:].strip(b" \t")
        if name == b"transfer-encoding":
            encodings.append(value)
        if name == b"content-length":
            if not re.fullmatch(rb"[+-]?[0-9]+", value) or int(value) < 0 or \
                    (content_length >= 0 and int(value) != content_length):
                raise Outcome(STAGE_READ, -3, "bad Content-Length")
            content_length = int(value)
    # RFC 9112 6.3: both framings in one response are an error, whichever comes first
    if encodings and content_length >= 0:
        raise Outcome(STAGE_READ, -3, "both Transfer-Encoding and Content-Length")
    if encodings and b", ".join(encodings).lower() != b"identity":
        raise Outcome(STAGE_READ, -2, f"Transfer-Encoding: {b', '.join(encodings).decode('latin-1')} is not supported")
    if content_length < 0:
        if status in (204, 304) or 100 <= status < 200:
            content_length = 0
        else:
            raise Outcome(STAGE_READ, -3, "no Content-Length")
    if content_length > 0:
        try:
            await reader.readexactly(content_length)
        except asyncio.IncompleteReadError as exc:
            raise Truncated(exc_text(exc))
    return status


def eof_outcome(writer: asyncio.StreamWriter | None, stage: int, why: str) -> Outcome:
    """The StreamReader says EOF the same way for a close_notify and for a bare FIN (asyncio's
    sslproto never writes EOF into the SSLObject's incoming MemoryBIO). The SSLObject itself can
    still tell: after a close_notify, read() returns b'' or raises SSLZeroReturnError; with no
    close_notify it has nothing and raises SSLWantReadError."""
    sslobj = writer.get_extra_info("ssl_object") if writer is not None else None
    if sslobj is None:
        return Outcome(stage, -1, why)
    try:
        data = sslobj.read(1)
    except ssl.SSLZeroReturnError as exc:
        return Outcome(stage, 0, f"{why}; SSLObject: {exc_text(exc)} (close_notify received)")
    except ssl.SSLWantReadError:
        return Outcome(stage, -1, f"{why}; SSLObject: no close_notify (want read)")
    except ssl.SSLError as exc:
        out = ssl_error_outcome(stage, exc)
        out.text = f"{why}; SSLObject: {out.text}"
        return out
    except Exception as exc:  # the object is gone or unusable: say so, keep the truncation
        return Outcome(stage, -1, f"{why}; SSLObject: {exc_text(exc)}")
    if data == b"":
        return Outcome(stage, 0, f"{why}; SSLObject: read() returned b'' (close_notify received)")
    return Outcome(stage, -1, f"{why}; SSLObject still held data")


# ---------------------------------------------------------------------------------------------
# The run

async def tcp_connect(loop, sock: socket.socket, ip: str, port: int) -> None:
    """connect() without any resolution, on either loop's public API (add_writer / remove_writer)."""
    sock.setblocking(False)
    err = sock.connect_ex((ip, port))
    if err in (errno.EINPROGRESS, errno.EAGAIN, errno.EALREADY):
        fut = loop.create_future()
        fd = sock.fileno()

        def writable() -> None:
            if not fut.done():
                fut.set_result(None)

        loop.add_writer(fd, writable)
        try:
            await fut
        finally:
            loop.remove_writer(fd)
        err = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
    if err != 0:
        raise OSError(err, os.strerror(err))


class Run:
    def __init__(self, o: Options, ctx: ssl.SSLContext):
        self.o = o
        self.ctx = ctx
        self.request = memoryview(make_request(o))
        self.dial_ip = o.connect_ip or o.target
        self.server_hostname = o.name  # an IP literal: Python checks the IP SAN and sends no SNI
        self.next_conn = 0
        self.by_outcome: dict[str, int] = {}
        self.texts: dict[str, str] = {}
        self.ok = self.failed = self.resumed = 0
        self.peak_fds = 0
        self.open_sockets = 0
        self.peak_sockets = 0
        self.loop_errors = 0
        self.sessions: list = []  # saved sessions (each offered once), at most --parallel of them
        self.deadline_s = o.deadline_ms / 1000.0

    def sample_fds(self) -> None:
        n = count_fds()
        if n > self.peak_fds:
            self.peak_fds = n

    def report(self, conn: int, slot: int, out: Outcome, info: dict) -> None:
        key = out.key()
        self.by_outcome[key] = self.by_outcome.get(key, 0) + 1
        self.texts.setdefault(key, out.text)
        if out.stage == STAGE_OK:
            self.ok += 1
        else:
            self.failed += 1
        if info["resumed"]:
            self.resumed += 1
        if not self.o.json:
            return
        line = {
            "type": "attempt", "conn": conn, "slot": slot, "stage": STAGE_NAMES[out.stage],
            "stage_code": out.stage, "detail": out.detail, "detail_text": out.text, "verify_depth": -1,
            "addr": f"{self.dial_ip}:{self.o.port}", "ms": round(info["ms"], 3), "resumed": info["resumed"],
            "tls_version": info["tls_version"], "cipher": info["cipher"], "http_status": info["http_status"],
            "requests_done": info["requests_done"],
        }
        sys.stdout.write(json.dumps(line, separators=(",", ":"), ensure_ascii=False) + "\n")

    async def attempt(self, conn: int, slot: int) -> None:
        o = self.o
        loop = asyncio.get_running_loop()
        info = {"ms": 0.0, "resumed": False, "tls_version": "", "cipher": "", "http_status": 0, "requests_done": 0}
        stage = STAGE_CONNECT
        sock = None
        owned = False  # the socket is ours to close: not yet handed to a transport
        writer = None
        closed = False  # close_notify sent and the transport closed: nothing left to abort
        started = time.monotonic()
        out = Outcome(STAGE_OK, 0, "ok")
        try:
            async with asyncio.timeout(self.deadline_s):
                # Stage connect: a non-blocking connect() to the IPv4 literal, waited for with
                # loop.add_writer (what the selector loop's sock_connect does inside; uvloop's
                # sock_connect would first run getaddrinfo on libuv's thread pool: README.md).
                try:
                    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                except OSError as exc:
                    raise Outcome(STAGE_SETUP, 3, "socket() failed: " + exc_text(exc))
                owned = True
                self.open_sockets += 1
                self.peak_sockets = max(self.peak_sockets, self.open_sockets)
                self.sample_fds()
                await tcp_connect(loop, sock, self.dial_ip, o.port)

                # Stage handshake: the usual asyncio client call, open_connection(ssl=...): sslproto's
                # SSLProtocol drives an ssl.SSLObject over two MemoryBIOs.
                stage = STAGE_HANDSHAKE
                session = None
                if o.resume and self.sessions:
                    session = self.sessions.pop()
                _next_session.set(session)
                owned = False  # from here the transport owns the socket and closes it
                reader, writer = await asyncio.open_connection(
                    sock=sock, ssl=self.ctx, server_hostname=self.server_hostname,
                    ssl_handshake_timeout=self.deadline_s + 1.0)
                sslobj = writer.get_extra_info("ssl_object")
                if sslobj is not None:
                    info["tls_version"] = sslobj.version() or ""
                    cipher = sslobj.cipher()
                    info["cipher"] = cipher[0] if cipher else ""
                    info["resumed"] = bool(sslobj.session_reused)

                if o.hold_ms > 0:
                    stage = STAGE_READ  # tlsnb: holding is reading (and dropping) what arrives
                    await asyncio.sleep(o.hold_ms / 1000.0)

                for _ in range(o.requests):
                    stage = STAGE_WRITE
                    # In pieces, each drained: one write() of a large body would be encrypted whole,
                    # synchronously, on the loop, and drain() would not wait for it (README.md).
                    for off in range(0, len(self.request), WRITE_CHUNK):
                        writer.write(self.request[off:off + WRITE_CHUNK])
                        await writer.drain()
                    stage = STAGE_READ
                    try:
                        info["http_status"] = await read_response(reader)
                    except Truncated as exc:
                        raise eof_outcome(writer, STAGE_READ, str(exc))
                    info["requests_done"] += 1

                if o.resume and sslobj is not None:
                    self.save_session(sslobj)
                stage = SHUTDOWN
                writer.close()
                try:
                    await writer.wait_closed()
                except (OSError, ssl.SSLError, EOFError):
                    pass  # the response was complete; the peer's side of the close is not ours to judge
                closed = True
        except TimeoutError as exc:
            if exc.errno is not None:  # ETIMEDOUT from the kernel, not the deadline
                out = classify(stage, exc)
            elif stage == SHUTDOWN:
                out = Outcome(STAGE_OK, 0, "ok (close_notify not flushed before the deadline)")
            else:
                out = Outcome(STAGE_DEADLINE, stage, f"deadline during {STAGE_NAMES[stage]}")
        except Outcome as exc:
            out = exc
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # every library error becomes an outcome; nothing crosses the loop
            if stage == SHUTDOWN:
                out = Outcome(STAGE_OK, 0, "ok (" + exc_text(exc) + " while closing)")
            else:
                out = classify(stage, exc)
        finally:
            if writer is not None and not closed:
                writer.transport.abort()  # no 30 s ssl_shutdown_timeout left holding the descriptor
            if owned:
                sock.close()
            elif writer is None and sock is not None and sock.fileno() != -1:
                # The handshake ended without a transport returned. asyncio's transport closed the socket
                # (fileno -1). uvloop's create_connection(sock=) closed the descriptor in libuv but left the
                # socket object holding its number (MagicStack/uvloop#738): closed again later, by us or
                # by its finaliser, it would close a recycled descriptor, another attempt's
                # ("File descriptor N is used by transport"). Under uvloop it is detached; else closed.
                if self.o.loop == "uvloop":
                    sock.detach()
                else:
                    sock.close()
            if sock is not None:
                self.open_sockets -= 1
        info["ms"] = (time.monotonic() - started) * 1000.0
        self.report(conn, slot, out, info)

    def save_session(self, sslobj) -> None:
        try:
            session = sslobj.session
        except Exception:
            return
        if session is None:
            return
        # TLS 1.3: resumable only once a ticket arrived; TLS 1.2: a ticket or a session id.
        if session.has_ticket or (sslobj.version() == "TLSv1.2" and session.id):
            self.sessions.append(session)
            if len(self.sessions) > self.o.parallel:
                del self.sessions[0]

    async def slot(self, slot: int) -> None:
        while self.next_conn < self.o.count:
            conn = self.next_conn
            self.next_conn += 1
            await self.attempt(conn, slot)

    async def main(self) -> None:
        loop = asyncio.get_running_loop()

        def on_loop_error(_loop, context):  # asyncio's logging of handshake failures: counted, not printed
            self.loop_errors += 1

        loop.set_exception_handler(on_loop_error)
        self.sample_fds()
        self.base_fds = count_fds()
        started = time.monotonic()
        await asyncio.gather(*(self.slot(i) for i in range(min(self.o.parallel, self.o.count))))
        self.wall_ms = (time.monotonic() - started) * 1000.0
        for _ in range(3):  # let transports' connection_lost callbacks run before counting what is left open
            await asyncio.sleep(0)
        self.fds_at_end = count_fds()

    def summary(self) -> None:
        o = self.o
        cpu = cpu_ms()
        st = read_status()
        count = self.ok + self.failed
        per_conn = cpu / count if count else 0.0
        if not o.json:
            for key in sorted(self.by_outcome):
                print(f"{key:<16} {self.by_outcome[key]:8d}  {self.texts[key]}")
            print(f"count={count} ok={self.ok} failed={self.failed} resumed={self.resumed} wall_ms={self.wall_ms:.1f} "
                  f"cpu_ms={cpu:.1f} cpu_ms_per_conn={per_conn:.3f} threads={st['threads']} peak_fds={self.peak_fds} "
                  f"rss_kib={st['rss_kib']} loop={o.loop}")
            return
        line = {
            "type": "summary", "count": count, "ok": self.ok, "failed": self.failed,
            "by_outcome": dict(sorted(self.by_outcome.items())), "wall_ms": round(self.wall_ms, 3),
            "cpu_ms": round(cpu, 3), "cpu_ms_per_conn": round(per_conn, 3), "threads": st["threads"],
            "peak_fds": self.peak_fds, "rss_kib": st["rss_kib"], "rss_peak_kib": st["rss_peak_kib"],
            "resumed": self.resumed, "peak_sockets": self.peak_sockets, "base_fds": self.base_fds, "fds_at_end": self.fds_at_end,
            "loop": o.loop, "loop_errors": self.loop_errors, "openssl": ssl.OPENSSL_VERSION,
            "err_reasons": reason_source(),
        }
        sys.stdout.write(json.dumps(line, separators=(",", ":")) + "\n")


def fail_line(code: int, text: str) -> int:
    sys.stderr.write(f"{PROG}: {text}\n")
    return code


def run(argv: list[str]) -> int:
    try:
        o = parse_options(argv)
    except Usage as exc:
        return fail_line(2, str(exc))
    except Unsupported as exc:
        return fail_line(89, str(exc))
    if o is None:
        sys.stdout.write(USAGE)
        return 0
    runner_factory = None
    if o.loop == "uvloop":
        try:
            import uvloop  # python3-uvloop
        except ImportError as exc:
            return fail_line(2, f"--loop uvloop: uvloop cannot be imported ({exc_text(exc)}); install python3-uvloop")
        runner_factory = uvloop.new_event_loop
    # CPython sets SIGPIPE to SIG_IGN before any Python code runs; 'default' leaves that disposition
    # (it is this runtime's default), 'ignore' sets what is already there.
    if o.sigpipe == "ignore":
        import signal
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    try:
        ctx = make_context(o)
    except Usage as exc:
        return fail_line(2, str(exc))
    except (ssl.SSLError, OSError) as exc:
        return fail_line(2, "the TLS context could not be made: " + exc_text(exc))
    logging.getLogger("asyncio").setLevel(logging.CRITICAL + 10)
    # ssl encodes server_hostname with the idna codec, whose module is imported at its first use:
    # in the first attempt, which then fails (OSError EMFILE reading encodings/idna.py) when the
    # descriptors have run out by then (client/tests/client.toml descriptors-exhausted). Imported here, once.
    "hooks.test".encode("idna")
    run_ = Run(o, ctx)
    with asyncio.Runner(loop_factory=runner_factory) as runner:
        runner.run(run_.main())
    run_.summary()
    sys.stdout.flush()
    return 0 if run_.failed == 0 else 1


def main() -> int:
    try:
        return run(sys.argv[1:])
    except KeyboardInterrupt:
        return fail_line(1, "interrupted")
    except BrokenPipeError:
        return 1
    except Exception as exc:  # never a traceback: one line
        return fail_line(1, "internal error: " + exc_text(exc))


if __name__ == "__main__":
    sys.exit(main())
