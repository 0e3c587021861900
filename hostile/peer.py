#!/usr/bin/python3
"""The hostile peer: a TLS 1.3 (or 1.2) server of the lab's own that breaks the protocol on purpose.

One --scenario per run (scenarios.py): `normal` is a correct server (X25519 or P-256, AES-128-GCM
or ChaCha20-Poly1305, ECDSA P-256 or RSA-PSS), every other scenario a combination of bugs.py's
typed fields (BoringSSL runner's ProtocolBugs). Each field is read here as `self.bugs.FIELD`, and
wherever it acts it counts one in the REPORT's `fired` table (`self.fired("FIELD")`): a scenario
that did not happen shows as a missing count, never as a quiet pass. An HTTP/1.1 request gets a
200 with a Content-Length body. Binds port 0, prints `READY <port>`, and on SIGTERM prints one
`REPORT {json}` line (what it sent and received, by message; what fired) and exits 0.

    /usr/bin/python3 hostile/peer.py --chain CERTS/leaf-ecdsa.pem --key CERTS/leaf-ecdsa.key --scenario normal
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import select
import signal
import socket
import struct
import sys
import threading
import time
from collections import Counter
from typing import Callable, Optional

from bugs import STAPLES, WARNINGS
from scenarios import SCENARIOS
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from tls12 import ECDHE_ECDSA_AES128_GCM, Keys, Protection12
from tls13 import (AES_128_GCM, ALERT, ALERT_NAMES, APPDATA, CCS, CERTIFICATE, CERTIFICATE_REQUEST,
                   CERTIFICATE_VERIFY, CHACHA20, CLIENT_HELLO, CLIENT_KEY_EXCHANGE, ENCRYPTED_EXTENSIONS, EXT_ALPN,
                   EXT_KEY_SHARE, EXT_RENEGOTIATION_INFO, EXT_SERVER_NAME, EXT_STATUS_REQUEST, EXT_SUPPORTED_VERSIONS,
                   FINISHED, HANDSHAKE, HELLO_REQUEST, HRR_RANDOM, KEY_UPDATE, MESSAGE_NAMES, NEW_SESSION_TICKET,
                   SECP256R1, SERVER_HELLO, SERVER_HELLO_DONE, SERVER_KEY_EXCHANGE, TLS12, TLS13, X25519, ClientHello,
                   Protection, Schedule, alert, certificate_verify_input, extension, finished_mac, key_share,
                   load_chain, load_key, message, parse_client_hello, record, scheme_of, sign, u16, u24, u8,
                   x25519_pair, x25519_shared)
from tls13 import EXT_CODES, EXT_COOKIE, EXT_EARLY_DATA, EXT_SIG_ALGS, ECDSA_SHA256, RSA_PSS_SHA256, sign_as

BACKLOG_PAUSE_S = 0.3   # renegotiate_mid_request: how long the peer reads nothing after its HelloRequest
BODY_WAIT_S = 2.0       # renegotiate_mid_request: how long the peer waits for body bytes behind the request's first record
SOCKET_TIMEOUT_S = 5.0  # a client that stops talking ends the connection, never the peer
# An unprotected record after the keys changed goes out as its header, then its body only if the client
# has not answered the header within this long: a client that refuses a record by its header (OpenSSL's
# socket BIO reads the 5 bytes alone) would close with the body unread, and its kernel's reset would
# drop the alert it sent before the peer reads it (Linux discards a socket's unread data on a reset).
# The two halves of alert-split likewise: the second only if the first was not answered.
HEADER_ANSWER_S = 1.0
STOP_GRACE_S = 2.0      # on SIGTERM, how long connections may finish reading before the REPORT
MAX_RECORD = 1 << 14
# junk after the tag of a 2^14-byte record (inner 2^14+1, tag 16) that makes its ciphertext 2^14+256+1
CIPHERTEXT_OVER = (MAX_RECORD + 256 + 1) - (MAX_RECORD + 1 + 16)


class PeerClosed(Exception):
    """The client closed, reset, or said an alert: the connection ends."""


class RenegotiationRefused(Exception):
    """The client answered a HelloRequest with a no_renegotiation warning (RFC 5246 7.2.2)."""


class Report:
    """What the peer sent and received, by message, across the run's connections."""

    def __init__(self, scenario: str):
        self.scenario = scenario
        self.lock = threading.Lock()
        self.counts: Counter = Counter({"connections": 0, "handshakes": 0, "requests": 0, "data_before_key_update": 0,
                                         "status_requests": 0, "good_bodies": 0, "bad_bodies": 0,
                                         "app_after_hello_request": 0})
        self.sent: Counter = Counter()
        self.received: Counter = Counter()
        self.alerts_received: Counter = Counter()
        self.errors: Counter = Counter()
        # bugs.py's field -> how many times it acted: every field the scenario sets, 0 until it acts
        self.fired: Counter = Counter({bug: 0 for bug in SCENARIOS[scenario].bugs.set()})

    def bump(self, table: Counter, key: str, n: int = 1) -> None:
        with self.lock:
            table[key] += n

    def to_json(self) -> dict:
        with self.lock:
            return {"scenario": self.scenario, **self.counts, "sent": dict(self.sent),
                    "received": dict(self.received), "alerts_received": dict(self.alerts_received),
                    "errors": dict(self.errors), "fired": dict(self.fired)}


# The catalogue's extension words (bugs.py's sh_extension, ee_extension): a minimal well-formed body each
EXTENSION_BODIES = {
    "server-name": b"", "max-fragment-length": b"\x01", "status-request": b"",
    "supported-groups": u16(struct.pack(">H", X25519)), "ec-point-formats": b"\x01\x00",
    "signature-algorithms": u16(struct.pack(">H", ECDSA_SHA256)), "heartbeat": b"\x01",
    "alpn": u16(u8(b"http/1.1")), "sct": u16(u16(bytes(8))), "padding": bytes(4), "encrypt-then-mac": b"",
    "extended-master-secret": b"", "record-size-limit": struct.pack(">H", 4096), "session-ticket": b"",
    "pre-shared-key": b"\x00\x00", "early-data": b"", "supported-versions": struct.pack(">H", TLS13),
    "cookie": u16(bytes(range(1, 17))), "psk-key-exchange-modes": b"\x01\x01",
    "certificate-authorities": u16(u16(b"\x30\x00")), "oid-filters": u16(b""), "post-handshake-auth": b"",
    "signature-algorithms-cert": u16(struct.pack(">H", ECDSA_SHA256)),
    "key-share": struct.pack(">H", X25519) + u16(bytes(range(32))), "renegotiation-info": b"\x00", "unknown": b"",
}
EXTENSION_SPECIAL = {
    "server-name-list": extension(EXT_SERVER_NAME, u16(b"\x00" + u16(b"hooks.test"))),
    "alpn-two": extension(EXT_ALPN, u16(u8(b"h2") + u8(b"http/1.1"))),
    "alpn-empty-list": extension(EXT_ALPN, u16(b"")),
    "alpn-empty-name": extension(EXT_ALPN, u16(u8(b""))),
}


# The TLS 1.3 catalogue's fields: a scenario that sets one counts the client's alert even when it came after
# the peer's writes began to fail (Conn.write)
CATALOGUE13 = frozenset({"sh_form", "sh_extension", "retry_form", "server_share", "ee_extension", "certificate_form",
                         "cv_form", "finished_form", "flight_order", "inject_after_server_hello",
                         "inject_after_handshake", "response_record", "ticket_form", "certificate_request"})


def extension_word(word: str) -> bytes:
    """The extension(s) a catalogue word names: NAME, NAME-twice, or a special malformed answer."""
    if word in EXTENSION_SPECIAL:
        return EXTENSION_SPECIAL[word]
    if word.endswith("-twice"):
        return extension_word(word[:-len("-twice")]) * 2
    return extension(EXT_CODES[word], EXTENSION_BODIES[word])


# inject_after_server_hello's and inject_after_handshake's alerts: (level, description) or raw bodies
INJECTED_ALERTS = {"alert-empty": b"", "alert-short": b"\x01", "alert-long": b"\x01\x00\x00",
                   "alert-level-3": b"\x03\x00", "alert-unknown": b"\x01\xff", "alert-bad-certificate": b"\x01\x2a",
                   "alert-handshake-failure": b"\x01\x28", "alert-decode-error": b"\x01\x32",
                   "alert-close-notify-fatal": b"\x02\x00"}
# inject_after_handshake's messages the server never sends after the handshake (type, body)
INJECTED_MESSAGES = {"encrypted-extensions": (ENCRYPTED_EXTENSIONS, u16(b"")),
                     "certificate-verify": (CERTIFICATE_VERIFY, struct.pack(">H", ECDSA_SHA256) + u16(bytes(8))),
                     "finished": (FINISHED, bytes(32)), "hello-request": (HELLO_REQUEST, b""),
                     "end-of-early-data": (5, b""), "unknown-message": (99, bytes(4)),
                     "key-update-long": (KEY_UPDATE, b"\x00\x00"), "key-update-empty": (KEY_UPDATE, b"")}


class Conn:
    """One connection: the wire, the transcript, both directions' protection, the scenario."""

    def __init__(self, sock: socket.socket, cfg: argparse.Namespace, report: Report):
        self.sock, self.cfg, self.report = sock, cfg, report
        self.bugs = SCENARIOS[cfg.scenario].bugs
        self.inbuf = b""
        self.early_taken = self.early_served = False  # take_request_first: the first request, read early
        self.early_request: Optional[bytes] = None
        self.hs_in = b""
        self.transcript = b""
        self.tx: Optional[Protection] = None
        self.rx: Optional[Protection] = None
        self.suite = AES_128_GCM
        self.client_asked_status = False  # status_request in the ClientHello: a staple may be sent
        self.owed_key_update = False  # we asked for a KeyUpdate; the client's next data must follow one
        self.cork: Optional[bytearray] = None  # records held back to leave in one write (uncork())
        self.app_held = b""  # application data that arrived between handshake messages (renegotiate_mid_request)
        self.ch: Optional[ClientHello] = None  # the client's (last) hello
        self.sent_server_hello = b""  # the ServerHello message as sent (flight_order, inject_after_handshake)
        self.cookie = b""  # retry_form cookie: the cookie the client must echo
        self.s_hs = b""  # the server's handshake traffic secret (response_record handshake-keys)
        self.response_broken = False  # response_record: the first response record is broken, once
        self.flight_extra = b""  # flight_order: the message it adds to the flight (kept out of the transcript)

    def fired(self, bug: str, n: int = 1) -> None:
        """Bug BUG (a field of bugs.py) acted N times."""
        self.report.bump(self.report.fired, bug, n)

    # --- the wire -------------------------------------------------------------------------------

    def send(self, data: bytes, what: str, n: int = 1) -> None:
        if self.cork is not None:
            self.cork += data
        else:
            self.write(data)
        self.report.bump(self.report.sent, what, n)

    def uncork(self) -> None:
        """What send() held back, in one write."""
        data, self.cork = bytes(self.cork or b""), None
        self.write(data)

    def write(self, data: bytes) -> None:
        """DATA to the client. A catalogue scenario whose write fails (the client refused what came before and
        closed, its kernel resets) reads on first: the client's alert came before its close, and the receive
        buffer still holds it, so alerts_received counts it whoever won the race (never a lost count)."""
        try:
            self.sock.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            if CATALOGUE13.intersection(self.bugs.set()):
                self.drain()
            raise

    def drain(self) -> None:
        """Every record the client sent that is still to read (its alert counted by next_record)."""
        try:
            while True:
                self.next_record()
        except Exception:  # noqa: BLE001 - the alert (PeerClosed), the reset, the end: all there is was read
            pass

    def read_exact(self, n: int) -> bytes:
        while len(self.inbuf) < n:
            try:
                chunk = self.sock.recv(65536)
            except (ConnectionResetError, socket.timeout) as e:
                raise PeerClosed(type(e).__name__) from e
            if not chunk:
                raise PeerClosed("eof")
            self.inbuf += chunk
        out, self.inbuf = self.inbuf[:n], self.inbuf[n:]
        return out

    def next_record(self) -> tuple[int, bytes]:
        """(content type, plaintext) of the client's next record; alerts and CCS handled here."""
        while True:
            header = self.read_exact(5)
            body = self.read_exact(struct.unpack(">H", header[3:5])[0])
            ctype = header[0]
            if ctype == CCS:
                self.report.bump(self.report.received, "ChangeCipherSpec")
                continue
            if self.rx is not None and ctype == APPDATA:
                ctype, body = self.rx.open(header, body)
            if ctype == ALERT:
                self.on_alert(body)
            return ctype, body

    def on_alert(self, body: bytes) -> None:
        name = ALERT_NAMES.get(body[1], str(body[1])) if len(body) == 2 else "malformed"
        self.report.bump(self.report.alerts_received, name)
        raise PeerClosed(f"alert {name}")

    def next_handshake(self) -> bytes:
        """The client's next whole handshake message (header included)."""
        while len(self.hs_in) < 4 or len(self.hs_in) < 4 + int.from_bytes(self.hs_in[1:4], "big"):
            ctype, body = self.next_record()
            if ctype == APPDATA and self.bugs.renegotiate_mid_request:  # legal in TLS 1.2 before the client's CCS
                self.app_held += body
                self.report.bump(self.report.counts, "app_during_renegotiation")
                continue
            if ctype != HANDSHAKE:
                raise PeerClosed(f"content type {ctype} during the handshake")
            self.hs_in += body
        n = 4 + int.from_bytes(self.hs_in[1:4], "big")
        msg, self.hs_in = self.hs_in[:n], self.hs_in[n:]
        self.report.bump(self.report.received, MESSAGE_NAMES.get(msg[0], str(msg[0])))
        return msg

    # --- the server's handshake messages ----------------------------------------------------------

    def th(self) -> bytes:
        return hashlib.sha256(self.transcript).digest()

    def plain_handshake(self, msg: bytes) -> None:
        self.transcript += msg
        name = MESSAGE_NAMES[msg[0]]
        size = self.fragment_size()
        for at in range(0, len(msg), size):
            self.send(record(HANDSHAKE, msg[at:at + size]), name)

    def protected_flight(self, msgs: list[bytes]) -> None:
        """Encrypted handshake messages, packed into records as the scenario says."""
        for m in msgs:
            if m is not self.flight_extra:  # flight_order's one more message: a client that skips it keeps
                self.transcript += m        # the transcript the peer's Finished covers
        if self.bugs.pack_flight:
            self.fired("pack_flight")
            blob = b"".join(msgs)
            for at in range(0, len(blob), MAX_RECORD):
                self.send(self.tx.seal(HANDSHAKE, blob[at:at + MAX_RECORD]), "packed-flight")
            return
        for m in msgs:
            self.protected_message(m)

    def protected_message(self, m: bytes) -> None:
        name = MESSAGE_NAMES.get(m[0], str(m[0]))
        size = self.fragment_size()
        pieces = [m[at:at + size] for at in range(0, len(m), size)]
        if self.bugs.alert_inside_certificate and m[0] == CERTIFICATE:
            half = len(m) // 2
            pieces = [m[:half], None, m[half:]]
        for p in pieces:
            if p is None:
                self.send(self.tx.seal(ALERT, alert(112, level=1)), "alert:unrecognized_name")
                self.fired("alert_inside_certificate")
            else:
                self.send(self.tx.seal(HANDSHAKE, p), name)

    def fragment_size(self) -> int:
        """The bytes of a handshake message a record carries (one message's fragments counted once)."""
        if self.bugs.handshake_fragment:
            self.fired("handshake_fragment")
            return self.bugs.handshake_fragment
        return MAX_RECORD

    def server_hello(self, ch: ClientHello, group: int, share: Optional[bytes], random: bytes,
                     suite: Optional[int] = None, form: str = "") -> bytes:
        """A ServerHello (SHARE None: a HelloRetryRequest's key_share, the group alone), altered as FORM
        (sh_form's or retry_form's word) says."""
        sv = extension(EXT_SUPPORTED_VERSIONS, struct.pack(">H", TLS13))
        ks = extension(EXT_KEY_SHARE, struct.pack(">H", group) + (u16(share) if share is not None else b""))
        legacy, compression, trailing, more = TLS12, 0, b"", b""
        sid = ch.session_id
        if self.bugs.session_id_mismatch or form == "session-id-mismatch":
            sid = b"\x01" * 32
            if self.bugs.session_id_mismatch:
                self.fired("session_id_mismatch")
        if form == "legacy-version-0304":
            legacy = TLS13
        elif form == "legacy-version-0301":
            legacy = 0x0301
        elif form == "compression-1":
            compression = 1
        elif form.startswith("version-"):
            sv = extension(EXT_SUPPORTED_VERSIONS, struct.pack(">H", int(form[len("version-"):], 16)))
        elif form == "versions-list":
            sv = extension(EXT_SUPPORTED_VERSIONS, u8(struct.pack(">HH", TLS13, TLS12)))
        elif form in ("no-supported-versions", "no-change"):
            sv = b"" if form == "no-supported-versions" else sv
            ks = b"" if form == "no-change" else ks
        elif form == "supported-versions-twice":
            sv *= 2
        elif form == "no-key-share":
            ks = b""
        elif form == "key-share-no-public":
            ks = extension(EXT_KEY_SHARE, struct.pack(">H", group))
        elif form == "key-share-twice":
            ks *= 2
        elif form.startswith("random-downgrd-"):
            random = random[:24] + (b"DOWNGRD\x01" if form.endswith("tls12") else b"DOWNGRD\x00")
        elif form == "trailing-bytes":
            trailing = b"\x00\x00"
        elif form == "session-id-empty":
            sid = b""
        elif form in ("cookie", "cookie-empty"):
            self.cookie = os.urandom(16) if form == "cookie" else b""
            more = extension(EXT_COOKIE, u16(self.cookie))
        elif form == "unknown-extension":
            more = extension(EXT_CODES["unknown"], b"")
        if share is not None and self.bugs.sh_extension:
            more = extension_word(self.bugs.sh_extension)
            self.fired("sh_extension")
        body = (struct.pack(">H", legacy) + random + u8(sid) + struct.pack(">HB", suite or self.suite, compression) +
                u16(sv + ks + more) + trailing)
        return message(SERVER_HELLO, body)

    def hello_retry(self, ch: ClientHello, group: int, bug: str = "", form: str = "") -> ClientHello:
        """Send a HelloRetryRequest for GROUP (the act of field BUG, if one), altered as retry_form's FORM;
        the retried ClientHello."""
        self.transcript = bytes([254, 0, 0, 32]) + hashlib.sha256(self.transcript).digest()
        suite = 0x1304 if form == "unoffered-suite" else None
        self.plain_handshake(self.server_hello(ch, group, None, HRR_RANDOM, suite, form))
        if bug:
            self.fired(bug)
        ch2 = parse_client_hello(self.next_handshake())
        self.transcript += ch2.raw
        return ch2

    def certificate(self) -> bytes:
        chain = load_chain(self.cfg.chain)
        if self.bugs.chain_padding_kib:
            ca = load_chain(self.cfg.ca)[0]
            chain += [ca] * (self.bugs.chain_padding_kib * 1024 // (len(ca) + 5))
            self.fired("chain_padding_kib")
        form = self.bugs.certificate_form
        if form == "not-der":
            chain = [b"this is not a certificate"] + chain[1:]
        entries = [u24(der) + u16(b"") for der in chain]
        if form in ("entry-extension", "entry-sct"):
            entries[0] = u24(chain[0]) + u16(extension_word("unknown" if form == "entry-extension" else "sct"))
        staple = STAPLES[self.bugs.staple] if self.bugs.staple else self.cfg.staple_der
        if staple and self.client_asked_status:  # CertificateStatus: status_type ocsp (1), the response
            entries[0] = u24(chain[0]) + u16(extension(EXT_STATUS_REQUEST, b"\x01" + u24(staple)))
            self.report.bump(self.report.sent, "staple")
            if self.bugs.staple:
                self.fired("staple")
        if form:
            self.fired("certificate_form")
        context = b"\x01" if form == "request-context" else b""
        return message(CERTIFICATE, u8(context) + u24(b"".join([] if form == "empty-list" else entries)) +
                       (b"\x00\x00" if form == "trailing-bytes" else b""))

    def encrypted_extensions(self) -> bytes:
        exts = b""
        if self.bugs.ee_duplicate_server_name:
            exts += extension(EXT_SERVER_NAME, b"") * 2
            self.fired("ee_duplicate_server_name")
        if self.bugs.ee_unsolicited_alpn:
            exts += extension(EXT_ALPN, u16(u8(self.bugs.ee_unsolicited_alpn.encode())))
            self.fired("ee_unsolicited_alpn")
        if self.bugs.ee_extension:
            exts += extension_word(self.bugs.ee_extension)
            self.fired("ee_extension")
        return message(ENCRYPTED_EXTENSIONS, u16(exts))

    def handshake(self) -> bool:
        """The server's side of a TLS 1.3 handshake; False when the scenario ended it early."""
        ch = parse_client_hello(self.next_handshake())
        self.transcript = ch.raw
        self.client_asked_status = EXT_STATUS_REQUEST in ch.extensions
        if self.client_asked_status:
            self.report.bump(self.report.counts, "status_requests")
        if TLS13 not in ch.versions:
            raise PeerClosed("the client did not offer TLS 1.3")
        self.suite = next(s for s in ((CHACHA20, AES_128_GCM) if self.cfg.suite == "chacha20" else
                                      (AES_128_GCM, CHACHA20)) if s in ch.suites)
        p256_share = self.bugs.server_share.startswith("p256")  # its words are P-256 points: a retry for P-256 first
        want = SECP256R1 if "p256" in (self.bugs.retry_group, self.cfg.group) or p256_share else X25519
        form = self.bugs.retry_form
        if want not in ch.shares or form:
            asked = {"offered-group": X25519, "unoffered-group": 0x1234}.get(form, SECP256R1 if form else want)
            if form == "cookie":
                self.report.bump(self.report.counts, "cookie_echoed", 0)
            ch = self.hello_retry(ch, asked, "retry_group" if self.bugs.retry_group else
                                  "retry_form" if form else "", form)
            if self.bugs.retry_twice:
                self.hello_retry(ch, want, "retry_twice")
                return False
            if form == "cookie" and ch.bodies.get(EXT_COOKIE) == u16(self.cookie):
                self.report.bump(self.report.counts, "cookie_echoed")
            if form == "suite-changes" and CHACHA20 in ch.suites:
                self.suite = CHACHA20 if self.suite != CHACHA20 else AES_128_GCM
            want = next((g for g in (asked, X25519, SECP256R1) if g in ch.shares), 0)
            if not want:
                raise PeerClosed("no share the peer knows after its HelloRetryRequest")
            if form == "sh-other-group":  # the ServerHello's share in X25519, the HelloRetryRequest's P-256
                self.plain_handshake(self.server_hello(ch, X25519, os.urandom(32), os.urandom(32)))
                self.next_record()
                return False
        self.ch = ch
        share, shared = key_share(want, ch.shares[want])
        if self.bugs.server_share_group:
            self.plain_handshake(self.server_hello(ch, self.bugs.server_share_group, os.urandom(32), os.urandom(32)))
            self.fired("server_share_group")
            self.next_record()
            return False
        if self.bugs.server_share:
            share, shared = self.bad_share(self.bugs.server_share, share, shared)
            self.fired("server_share")
        suite = self.bugs.server_suite or None
        if suite:
            self.fired("server_suite")
        if self.bugs.sh_form:
            self.fired("sh_form")
        self.sent_server_hello = self.server_hello(ch, want, share, os.urandom(32), suite, self.bugs.sh_form)
        self.plain_handshake(self.sent_server_hello)
        if shared is None:  # a share the peer cannot agree with: the client's alert ends it
            self.next_record()
            return False
        if self.bugs.ccs_before_encrypted_extensions:
            self.send(record(CCS, b"\x01"), "ChangeCipherSpec")
            self.fired("ccs_before_encrypted_extensions")
        schedule = Schedule()
        c_hs, s_hs = schedule.handshake(shared, self.th())
        self.tx, self.rx = Protection(self.suite, s_hs), Protection(self.suite, c_hs)
        self.s_hs = s_hs
        if self.bugs.inject_after_server_hello:
            self.inject(self.bugs.inject_after_server_hello)
            self.fired("inject_after_server_hello")
        self.server_flight(s_hs)
        c_ap, s_ap = schedule.application(self.th())
        fin = self.next_handshake()
        if self.bugs.certificate_request:  # the client's Certificate (and CertificateVerify) come first
            self.report.bump(self.report.counts, "client_certificates", 0)
            while fin[0] != FINISHED:
                if fin[0] == CERTIFICATE:
                    self.report.bump(self.report.counts, "client_certificates")
                self.transcript += fin
                fin = self.next_handshake()
        if fin[0] != FINISHED or fin[4:] != finished_mac(c_hs, self.th()):
            raise PeerClosed("bad client Finished")
        self.transcript += fin
        self.tx, self.rx = Protection(self.suite, s_ap), Protection(self.suite, c_ap)
        self.report.bump(self.report.counts, "handshakes")
        return True

    def bad_share(self, word: str, share: bytes, shared: bytes) -> tuple[bytes, Optional[bytes]]:
        """server_share's WORD: the public value sent, and the secret the handshake goes on with (None: it stops)."""
        if word == "x25519-zero":
            return bytes(32), bytes(32)  # a client that does not check computes the all-zero secret too
        bad = {"x25519-short": os.urandom(31), "x25519-long": os.urandom(33), "x25519-empty": b"",
               "p256-off-curve": share[:-1] + bytes([share[-1] ^ 1]), "p256-compressed": bytes([2 + share[-1] % 2]) + share[1:33],
               "p256-infinity": b"\x00", "p256-no-prefix": share[1:]}
        return bad[word], None

    def inject(self, word: str, after_handshake: bool = False) -> None:
        """One record of inject_after_server_hello's or inject_after_handshake's WORD, under the keys in force."""
        if word.startswith("ccs-") and word != "ccs-protected":
            payload = {"ccs-twice": b"\x01", "ccs-02": b"\x02", "ccs-empty": b"", "ccs-long": b"\x01\x01"}[word]
            for _ in range(2 if word == "ccs-twice" else 1):
                self.send(record(CCS, payload), "ChangeCipherSpec")
        elif word == "ccs-protected":
            self.post(CCS, b"\x01", "ChangeCipherSpec")
        elif word in INJECTED_ALERTS:
            self.post(ALERT, INJECTED_ALERTS[word], word)
        elif word == "alert-split":  # the second half only if the client did not answer the first
            first, second = self.tx.seal(ALERT, b"\x01"), self.tx.seal(ALERT, b"\x00")
            if not after_handshake or self.cork is not None:
                self.send(first + second, word)
                return
            self.take_request_first()
            self.send(first, word)
            if not self.answered():
                self.send(second, word)
        elif word == "alert-plaintext":
            self.send_unprotected(record(ALERT, alert(0, level=1)), word, after_handshake)
        elif word == "handshake-empty":
            self.post(HANDSHAKE, b"", word)
        elif word == "handshake-plaintext":
            m = self.ticket() if after_handshake else message(ENCRYPTED_EXTENSIONS, u16(b""))
            self.send_unprotected(record(HANDSHAKE, m), word, after_handshake)
        elif word == "appdata":
            self.post(APPDATA, b"early", word)
        elif word == "appdata-plaintext":
            self.send(record(APPDATA, b"HTTP/1.1 200 OK\r\n"), word)
        elif word == "server-hello":
            self.post(HANDSHAKE, self.sent_server_hello, word)
        elif word == "certificate":
            self.post(HANDSHAKE, self.certificate(), word)
        elif word == "client-hello":
            self.post(HANDSHAKE, self.ch.raw, word)
        else:
            kind, body = INJECTED_MESSAGES[word]
            self.post(HANDSHAKE, message(kind, body), word)

    def send_unprotected(self, rec: bytes, what: str, after_handshake: bool) -> None:
        """REC, an unprotected record under protected ones. After the handshake: the client's request is
        read first (what the client sends next is its answer to REC), then REC's header, then its body
        unless the client answered the header (HEADER_ANSWER_S). In the handshake or a held-back
        flight: REC in one write, as before."""
        if not after_handshake or self.cork is not None:
            self.send(rec, what)
            return
        self.take_request_first()
        self.send(rec[:5], what)
        if not self.answered():
            self.write(rec[5:])

    def take_request_first(self) -> None:
        """The client's first request read now, served by serve() as if read there."""
        if not self.early_taken:
            self.early_taken, self.early_request = True, self.read_request()

    def answered(self) -> bool:
        """Whether the client sent anything (its alert, its close) within HEADER_ANSWER_S."""
        return bool(self.inbuf) or bool(select.select([self.sock], [], [], HEADER_ANSWER_S)[0])

    def next_request(self) -> Optional[bytes]:
        if self.early_taken and not self.early_served:
            self.early_served = True
            return self.early_request
        return self.read_request()

    def server_flight(self, s_hs: bytes) -> None:
        key = load_key(self.cfg.key)
        ee, cert = self.encrypted_extensions(), self.certificate()
        cr = self.certificate_request()
        signed_hash = hashlib.sha256(self.transcript + ee + cr +
                                     (b"" if self.bugs.cv_skip_certificate else cert)).digest()
        if self.bugs.cv_skip_certificate:
            self.fired("cv_skip_certificate")
        cv = self.certificate_verify(key, signed_hash)
        mac = finished_mac(s_hs, hashlib.sha256(self.transcript + ee + cr + cert + cv).digest())
        if self.bugs.finished_flip_bit:
            mac = bytes([mac[0] ^ 1]) + mac[1:]
            self.fired("finished_flip_bit")
        form = self.bugs.finished_form
        if form:
            mac = {"short": mac[:31], "long": mac + b"\x00", "empty": b"", "zero": bytes(32)}[form]
            self.fired("finished_form")
        fin = message(FINISHED, mac)
        self.protected_flight(self.flight(ee, cr, cert, cv, fin))

    def certificate_request(self) -> bytes:
        """certificate_request's word: a CertificateRequest for the flight, or nothing."""
        word = self.bugs.certificate_request
        if not word:
            return b""
        self.fired("certificate_request")
        sig_algs = extension(EXT_SIG_ALGS, u16(struct.pack(">HH", ECDSA_SHA256, RSA_PSS_SHA256)))
        exts = {"no-signature-algorithms": b"", "unknown-extension": sig_algs + extension(EXT_CODES["unknown"], b"")}
        return message(CERTIFICATE_REQUEST, u8(b"\x01" if word == "context" else b"") + u16(exts.get(word, sig_algs)))

    def certificate_verify(self, key, signed_hash: bytes) -> bytes:
        """The CertificateVerify over SIGNED_HASH, altered as cv_form says."""
        form = self.bugs.cv_form
        scheme, content = scheme_of(key), certificate_verify_input(signed_hash)
        if not form:
            return message(CERTIFICATE_VERIFY, struct.pack(">H", scheme) + u16(sign(key, content)))
        self.fired("cv_form")
        if form == "client-context":
            content = b" " * 64 + b"TLS 1.3, client CertificateVerify\0" + signed_hash
        elif form == "no-prefix":
            content = content[64:]
        labels = {"unknown-scheme": 0x7777, "rsa-pkcs1": 0x0401, "ecdsa-sha1": 0x0203, "ecdsa-p384": 0x0503,
                  "rsa-pss-label": RSA_PSS_SHA256 if scheme == ECDSA_SHA256 else ECDSA_SHA256}
        if form in labels:
            scheme = labels[form]
            signature = sign(key, content) if form in ("unknown-scheme", "rsa-pss-label") else sign_as(key, content, scheme)
        else:
            signature = sign(key, content)
        signature = {"truncated": signature[:-1], "empty": b""}.get(form, signature)
        return message(CERTIFICATE_VERIFY, struct.pack(">H", scheme) + u16(signature) +
                       (b"\x00" if form == "trailing-bytes" else b""))

    def flight(self, ee: bytes, cr: bytes, cert: bytes, cv: bytes, fin: bytes) -> list[bytes]:
        """The encrypted flight in the order flight_order says (the transcript the peer signed is the right one)."""
        order = self.bugs.flight_order
        if not order:
            return [m for m in (ee, cr, cert, cv, fin) if m]
        self.fired("flight_order")
        extra = {"server-hello": self.sent_server_hello, "key-update": message(KEY_UPDATE, b"\x00"),
                 "new-session-ticket": self.ticket(), "hello-request": message(HELLO_REQUEST, b""),
                 "end-of-early-data": message(5, b""), "server-hello-done": message(SERVER_HELLO_DONE, b""),
                 "unknown-message": message(99, bytes(4)),
                 "certificate-request-late": message(CERTIFICATE_REQUEST, u8(b"") + u16(
                     extension(EXT_SIG_ALGS, u16(struct.pack(">H", ECDSA_SHA256)))))}
        self.flight_extra = extra.get(order, b"")
        return {"no-encrypted-extensions": [cert, cv, fin], "no-certificate": [ee, cv, fin],
                "no-certificate-verify": [ee, cert, fin], "encrypted-extensions-twice": [ee, ee, cert, cv, fin],
                "certificate-twice": [ee, cert, cert, cv, fin],
                "finished-before-certificate-verify": [ee, cert, fin, cv], "certificate-verify-first": [ee, cv, cert, fin],
                "certificate-request-late": [ee, cert, extra[order] if order in extra else b"", cv, fin],
                }.get(order, [ee, extra[order], cert, cv, fin] if order in ("server-hello", "hello-request",
                                                                           "end-of-early-data", "unknown-message")
                      else [ee, cert, cv, extra.get(order, b""), fin])

    # --- after the handshake ----------------------------------------------------------------------

    def post(self, content_type: int, data: bytes, what: str, **kw) -> None:
        self.send(self.tx.seal(content_type, data, **kw), what)

    def ticket(self, size: int = 64, exts: bytes = b"", form: str = "") -> bytes:
        """A NewSessionTicket, altered as ticket_form's FORM says."""
        lifetime = {"lifetime-over-week": 604801, "lifetime-zero": 0}.get(form, 7200)
        exts += {"early-data": extension(EXT_EARLY_DATA, struct.pack(">I", 16384)),
                 "early-data-short": extension(EXT_EARLY_DATA, b"\x00\x00"),
                 "early-data-twice": extension(EXT_EARLY_DATA, struct.pack(">I", 16384)) * 2,
                 "server-name": extension(EXT_SERVER_NAME, b"")}.get(form, b"")
        head = struct.pack(">II", lifetime, 0) + u8(os.urandom(8))
        if form == "truncated":
            return message(NEW_SESSION_TICKET, head)
        return message(NEW_SESSION_TICKET, head + u16(b"" if form == "empty-ticket" else os.urandom(size)) + u16(exts))

    def burst(self, one: Callable[[], None], count: int) -> None:
        """COUNT messages in one write: a client that gives up part way (GnuTLS caps the KeyUpdates it
        takes in a row) closes after the whole burst is sent, never between two of its writes, so
        server.sent is COUNT by construction (one write a message: 97 to 100, by who won the race)."""
        self.cork = bytearray()
        for _ in range(count):
            one()
        self.uncork()

    def key_update(self, requested: int) -> None:
        self.post(HANDSHAKE, message(KEY_UPDATE, bytes([requested])), "KeyUpdate")
        self.tx.update()

    def before_response(self) -> bool:
        """What the bugs send between the handshake and the response; False when one ended it."""
        bugs = self.bugs
        if bugs.rst_after_finished:
            self.reset()
            self.fired("rst_after_finished")
            return False
        if bugs.ccs_after_handshake:
            self.send(record(CCS, b"\x01"), "ChangeCipherSpec")
            self.fired("ccs_after_handshake")
        if bugs.inject_after_handshake:  # counted before it goes: a client may close at once
            self.fired("inject_after_handshake")
            self.inject(bugs.inject_after_handshake, after_handshake=True)
        if bugs.ticket_form:
            self.fired("ticket_form")
            self.post(HANDSHAKE, self.ticket(form=bugs.ticket_form), "NewSessionTicket")
        if bugs.keyupdates_before_response:
            self.burst(lambda: self.key_update(0), bugs.keyupdates_before_response)
            self.fired("keyupdates_before_response", bugs.keyupdates_before_response)
        if bugs.keyupdate_value:
            self.post(HANDSHAKE, message(KEY_UPDATE, bytes([bugs.keyupdate_value])), "KeyUpdate")
            self.fired("keyupdate_value")
        if bugs.tickets_before_response:
            self.burst(lambda: self.post(HANDSHAKE, self.ticket(), "NewSessionTicket"), bugs.tickets_before_response)
            self.fired("tickets_before_response", bugs.tickets_before_response)
        if bugs.ticket_kib:  # counted before its records go: a client that refuses the first may close
            self.fired("ticket_kib")  # before the last is written (BoringSSL's EXCESSIVE_MESSAGE_SIZE)
            self.send_big_message(self.ticket(bugs.ticket_kib * 1024), "NewSessionTicket")
        if bugs.ticket_extension:
            self.post(HANDSHAKE, self.ticket(exts=struct.pack(">HH", bugs.ticket_extension, 0)), "NewSessionTicket")
            self.fired("ticket_extension")
        if bugs.post_certificate_request:
            self.post(HANDSHAKE, message(CERTIFICATE_REQUEST, u8(b"\x01") + u16(extension(13, u16(b"\x04\x03")))),
                      "CertificateRequest")
            self.fired("post_certificate_request")
        if bugs.alert_before_response:
            code = WARNINGS[bugs.alert_before_response]
            self.post(ALERT, alert(code, level=1), f"alert:{bugs.alert_before_response}")
            self.fired("alert_before_response")
        if bugs.empty_records_before_response:  # one write (burst): a client that stops at its own limit
            n = bugs.empty_records_before_response  # closes after the last of them, so the count is N
            self.burst(lambda: self.post(APPDATA, b"", "empty"), n)
            self.fired("empty_records_before_response", n)
        if bugs.outer_type_before_response:
            self.send(record(bugs.outer_type_before_response, b"\x00" * 20), f"type-{bugs.outer_type_before_response}")
            self.fired("outer_type_before_response")
        if bugs.inner_type_before_response:
            self.post(bugs.inner_type_before_response, b"\x00" * 20, f"inner-type-{bugs.inner_type_before_response}")
            self.fired("inner_type_before_response")
        if bugs.padding_only_record:
            self.send(self.sealed_padding_only(), "padding-only")
            self.fired("padding_only_record")
        if bugs.record_overflow == "plaintext":
            self.post(APPDATA, b"x" * (MAX_RECORD + 1), "overflow")
            self.fired("record_overflow")
        elif bugs.record_overflow == "ciphertext":
            self.post(APPDATA, b"x" * MAX_RECORD, "overflow", extra_ciphertext=CIPHERTEXT_OVER)
            self.fired("record_overflow")
        return True

    def broken_record(self, word: str, piece: bytes) -> bytes:
        """response_record's WORD: the record that carries PIECE, broken."""
        if word == "handshake-keys":
            return Protection(self.suite, self.s_hs).seal(APPDATA, piece)
        if word == "short":
            return record(APPDATA, os.urandom(15))
        if word == "skip-sequence":
            self.tx.seq += 1
        sealed = self.tx.seal(APPDATA, piece, outer={"outer-handshake": HANDSHAKE, "outer-alert": ALERT}.get(word, APPDATA))
        if word == "bad-tag":
            return sealed[:-1] + bytes([sealed[-1] ^ 1])
        return sealed * 2 if word == "replayed" else sealed

    def reset(self) -> None:
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.report.bump(self.report.sent, "RST")

    def sealed_padding_only(self) -> bytes:
        header = struct.pack(">BHH", APPDATA, TLS12, 20 + 16)
        return header + self.tx.aead.encrypt(self.tx.nonce(), b"\0" * 20, header)

    def send_big_message(self, m: bytes, what: str) -> None:
        for at in range(0, len(m), MAX_RECORD):
            self.post(HANDSHAKE, m[at:at + MAX_RECORD], what)

    def read_request(self) -> Optional[bytes]:
        """One HTTP request's head and body; None when the client closed between requests."""
        data, need = bytearray(), None  # need: the request's whole length, once its head is in
        while need is None or len(data) < need:
            if need is None and b"\r\n\r\n" in data:
                need = self.request_length(bytes(data))
                continue
            try:
                ctype, body = self.next_record()
            except PeerClosed:
                if not data:
                    return None
                raise
            if ctype == HANDSHAKE:
                self.client_post_handshake(body)
                data += self.app_held
                self.app_held = b""
            elif ctype == APPDATA:
                if self.owed_key_update:  # RFC 8446 4.6.3: the answer comes before any application data
                    self.report.bump(self.report.counts, "data_before_key_update")
                    self.owed_key_update = False
                data += body
                self.request_data_came()
        self.report.bump(self.report.counts, "requests")
        self.check_body(bytes(data))
        return bytes(data)

    def request_data_came(self) -> None:
        """A record of the request is in: the scenarios that act in the middle of a request do it here."""

    def check_body(self, request: bytes) -> None:
        """--verify-body-seed S: the body is the lab's pattern, byte i = (i * 131 + S) % 251."""
        if self.cfg.verify_body_seed is None:
            return
        body = request[request.index(b"\r\n\r\n") + 4:]
        period = bytes((i * 131 + self.cfg.verify_body_seed) % 251 for i in range(251))
        good = body == (period * (len(body) // 251 + 1))[:len(body)]
        self.report.bump(self.report.counts, "good_bodies" if good else "bad_bodies")

    @staticmethod
    def request_length(data: bytes) -> int:
        head, _, _ = data.partition(b"\r\n\r\n")
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                return len(head) + 4 + int(value)
        return len(head) + 4

    def client_post_handshake(self, body: bytes) -> None:
        self.report.bump(self.report.received, MESSAGE_NAMES.get(body[0], str(body[0])))
        if body[0] == KEY_UPDATE:
            self.rx.update()
            self.owed_key_update = False

    def respond(self) -> None:
        head = f"HTTP/1.1 200 OK\r\nContent-Length: {self.cfg.body_size}\r\n\r\n".encode()
        data = head + b"x" * self.cfg.body_size
        bugs, half = self.bugs, len(data) // 2
        size = bugs.app_record_size or MAX_RECORD
        mid = (bugs.keyupdate_mid_response or bugs.close_notify_mid_response or bugs.fatal_alert_mid_response or
               bugs.fin_mid_record or bugs.renegotiate_mid_response or bugs.response_record)
        first, rest = (data[:half], data[half:]) if mid else (data, b"")
        if bugs.close_notify_then_data:  # the response, its close_notify and the data after it in one write:
            self.cork = bytearray()       # a client that closes after the response cannot race the last two
        self.app_records(first, size)
        if bugs.renegotiate_mid_response:
            self.fired("renegotiate_mid_response")
            self.renegotiate()
        if bugs.keyupdate_mid_response:
            self.key_update(1)
            self.owed_key_update = True
            self.fired("keyupdate_mid_response")
        elif bugs.close_notify_mid_response:
            self.post(ALERT, alert(0, level=1), "alert:close_notify")
            self.fired("close_notify_mid_response")
        elif bugs.fatal_alert_mid_response:
            self.post(ALERT, alert(80), "alert:internal_error")
            self.fired("fatal_alert_mid_response")
            return
        elif bugs.fin_mid_record:
            self.send(self.tx.seal(APPDATA, rest)[:20], "half-record")
            self.sock.shutdown(socket.SHUT_WR)
            self.fired("fin_mid_record")
            return
        self.app_records(rest, size)
        if bugs.close_notify_then_data:
            self.post(ALERT, alert(0, level=1), "alert:close_notify")
            self.post(APPDATA, b"more", "after-close")
            self.fired("close_notify_then_data")
        if bugs.fatal_alert_after_response:
            self.post(ALERT, alert(80), "alert:internal_error")
            self.fired("fatal_alert_after_response")
        if self.cork is not None:
            self.uncork()

    def app_records(self, data: bytes, size: int) -> None:
        bugs = self.bugs
        for at in range(0, len(data), size):
            piece = data[at:at + size]
            if bugs.response_record and not self.response_broken:
                self.response_broken = True
                self.fired("response_record")
                self.send(self.broken_record(bugs.response_record, piece), "response")
                continue
            self.send(self.tx.seal(APPDATA, piece, pad=bugs.app_padding, version=bugs.response_record_version or TLS12),
                      "response")
            for bug in ("app_record_size", "app_padding", "response_record_version"):
                if getattr(bugs, bug):
                    self.fired(bug)
            if bugs.ticket_between_records:
                self.post(HANDSHAKE, self.ticket(), "NewSessionTicket")
                self.fired("ticket_between_records")

    def serve(self) -> None:
        if not self.handshake():
            return
        if not self.before_response():
            return
        while (request := self.next_request()) is not None:
            if self.bugs.rst_after_request:
                self.reset()
                self.fired("rst_after_request")
                return
            self.respond()
            if b"connection: close" in request.lower():
                break
            bugs = self.bugs
            if (bugs.fatal_alert_mid_response or bugs.fin_mid_record or bugs.fatal_alert_after_response or
                    bugs.close_notify_mid_response or bugs.close_notify_then_data):
                return
        self.post(ALERT, alert(0, level=1), "alert:close_notify")


class Conn12(Conn):
    """The TLS 1.2 rows: a 1.2-only server (ECDHE-ECDSA-AES128-GCM-SHA256, X25519 or P-256, secure
    renegotiation, RFC 5746; RFC 7627's extended master secret when ems12 says) that can ask the client to
    renegotiate in the middle of a response, and breaks each 1.2 clause its word fields name."""

    EMPTY_APPDATA = 16  # rec12=empty-appdata: empty application records in one write

    def __init__(self, *args):
        super().__init__(*args)
        self.awaiting_renegotiation = False  # a HelloRequest is out: a no_renegotiation warning answers it
        self.report_asked_mid = False  # renegotiate_mid_request: the HelloRequest went out
        self.pending_rx: Optional[Protection12] = None
        self.verify_data = (b"", b"")  # the last handshake's client and server Finished
        self.ems = False  # ems12: extended_master_secret offered and echoed

    def send(self, data: bytes, what: str, n: int = 1) -> None:
        try:
            super().send(data, what, n)
        except (BrokenPipeError, ConnectionResetError) as e:
            self.drain()
            raise PeerClosed(type(e).__name__) from e

    def uncork(self) -> None:
        try:
            super().uncork()
        except (BrokenPipeError, ConnectionResetError) as e:
            self.drain()
            raise PeerClosed(type(e).__name__) from e

    def drain(self) -> None:
        """A write met the client's reset: it refused what it read and closed with bytes unread, and what
        it said before (its alert) may wait in our receive queue, readable before the reset: read it, so a
        row's alerts_received does not depend on whether our write or our read came first."""
        try:
            while True:
                self.next_record()
        except Exception:  # noqa: BLE001 - PeerClosed (its alert counted), the reset, a record we cannot open
            pass

    def next_record(self) -> tuple[int, bytes]:
        while True:
            header = self.read_exact(5)
            ctype, body = header[0], self.read_exact(struct.unpack(">H", header[3:5])[0])
            if self.rx is not None:
                ctype, body = self.rx.open(header, body)
            if ctype == CCS:  # the client's next records are under the new keys
                self.report.bump(self.report.received, "ChangeCipherSpec")
                self.rx = self.pending_rx
                continue
            if ctype == ALERT and body[:2] == b"\x01\x00":  # close_notify (a warning in 1.2): the client is done
                self.on_alert(body)
            if ctype == ALERT and body[:1] == b"\x01":  # any other warning: counted, the connection goes on
                self.report.bump(self.report.alerts_received, ALERT_NAMES.get(body[1], str(body[1])))
                if self.awaiting_renegotiation and body[1:2] == b"\x64":
                    if not self.bugs.renegotiate_mid_request:
                        raise RenegotiationRefused()
                    self.awaiting_renegotiation = False  # the body goes on under the first keys
                    self.report.bump(self.report.counts, "renegotiations_refused")
                continue
            if self.awaiting_renegotiation and ctype == APPDATA:
                self.report.bump(self.report.counts, "app_after_hello_request")
            if ctype == ALERT:
                self.on_alert(body)
            return ctype, body

    def request_data_came(self) -> None:
        if self.bugs.renegotiate_mid_request and not self.report_asked_mid:
            # The HelloRequest goes out once more of the body is already here, unread (in the peer's
            # buffer, or readable in the kernel's): those bytes were sent before the client could see
            # it, so its body is in flight across the HelloRequest (app_after_hello_request counts
            # them) by construction, not by who wins a race. Sent at once, a client that read between
            # its first record and its second (curl, beside a loaded gate) renegotiated before any body
            # record: a row that asked nothing in the middle.
            if not self.inbuf:
                select.select([self.sock], [], [], BODY_WAIT_S)
            self.report_asked_mid = True
            self.send(self.tx.seal(HANDSHAKE, message(HELLO_REQUEST, b"")), "HelloRequest")
            self.fired("renegotiate_mid_request")
            self.awaiting_renegotiation = True
            time.sleep(BACKLOG_PAUSE_S)  # the client's body backs up in both kernels' buffers and its own

    def client_post_handshake(self, body: bytes) -> None:
        """renegotiate_mid_request: the client's answer to the HelloRequest, in the middle of its body."""
        if not self.bugs.renegotiate_mid_request:
            return super().client_post_handshake(body)
        self.hs_in += body
        msg = self.next_handshake()
        if msg[0] != CLIENT_HELLO or not self.awaiting_renegotiation:
            raise PeerClosed(f"message {msg[0]} in the middle of the request")
        self.awaiting_renegotiation = False
        self.full_handshake(parse_client_hello(msg))

    def send_handshake(self, msg: bytes) -> None:
        self.transcript += msg
        what = MESSAGE_NAMES[msg[0]]
        self.send(self.tx.seal(HANDSHAKE, msg) if self.tx else record(HANDSHAKE, msg), what)

    def handshake(self) -> bool:
        self.full_handshake(parse_client_hello(self.next_handshake()))
        return not self.bugs.downgrade_sentinel

    def full_handshake(self, ch: ClientHello) -> None:
        """Everything after the client's hello CH: the first handshake, or a renegotiation's. The flight
        goes in one write: a client that aborts at its first message has the rest already sent, so its
        alert is read whole, never raced by the peer's next write."""
        if ECDHE_ECDSA_AES128_GCM not in ch.suites:
            raise PeerClosed("the client did not offer ECDHE-ECDSA-AES128-GCM-SHA256")
        self.transcript = ch.raw
        bugs = self.bugs
        sentinel = {"sentinel-tls11": b"DOWNGRD\x00", "sentinel-tls12": b"DOWNGRD\x01"}.get(bugs.sh12)
        if bugs.downgrade_sentinel:
            sentinel = b"DOWNGRD\x01"
            self.fired("downgrade_sentinel")
        server_random = os.urandom(24) + (sentinel or os.urandom(8))
        # extended_master_secret offered and echoed (with a body too: a client that takes that one derives from
        # the session hash, and so does the peer)
        self.ems = (bool(bugs.ems12) or bugs.sh12_extension == "ems-with-body") and 23 in ch.extensions
        if self.ems and bugs.ems12:
            self.fired("ems12")
        self.cork = bytearray()
        hello = self.server_hello12(ch, server_random)
        flight = [("msg", hello)]
        if bugs.downgrade_sentinel:
            self.emit_flight(flight)
            self.next_record()  # the client's alert ends it
            return
        mine, ske = self.server_key_exchange(ch, server_random)
        flight += self.first_flight(hello, ske)
        self.emit_flight(flight)
        self.finish(ch, server_random, mine)

    def server_hello12(self, ch: ClientHello, server_random: bytes) -> bytes:
        """The ServerHello, as sh12 and sh12_extension say."""
        bugs = self.bugs
        client_fin, server_fin = self.verify_data
        if bugs.renegotiation_info_mismatch and client_fin:
            server_fin = bytes(12)  # RFC 5746 3.5: the client must abort
            self.fired("renegotiation_info_mismatch")
        ri = extension(EXT_RENEGOTIATION_INFO, u8(client_fin + server_fin))
        exts = extension(11, b"\x01\x00")
        if bugs.omit_renegotiation_info:
            self.fired("omit_renegotiation_info")
        else:
            exts += ri
        if self.ems and bugs.ems12:
            exts += extension(23, b"")
        if bugs.sh12_extension:
            exts = self.server_hello_extensions(exts, ri)
            self.fired("sh12_extension")
        version, sid, suite, compression = TLS12, b"", ECDHE_ECDSA_AES128_GCM, 0
        word = bugs.sh12
        if word.startswith("version-"):
            version = int(word[len("version-"):], 16)
        elif word == "session-id-33":
            sid = os.urandom(33)
        elif word == "compression-deflate":
            compression = 1
        elif word == "suite-unoffered":
            suite = next(s for s in (0x0005, 0x000A, 0x1234) if s not in ch.suites)
        if word:
            self.fired("sh12")
        return message(SERVER_HELLO, struct.pack(">H", version) + server_random + u8(sid) +
                       struct.pack(">HB", suite, compression) + u16(exts))

    def server_hello_extensions(self, exts: bytes, ri: bytes) -> bytes:
        """sh12_extension's word: EXTS (ec_point_formats, renegotiation_info RI) changed or added to."""
        word = self.bugs.sh12_extension
        added = {
            "unknown-7777": extension(0x7777, b""),
            "alpn-two": extension(EXT_ALPN, u16(u8(b"h2") + u8(b"http/1.1"))),
            "alpn-unoffered": extension(EXT_ALPN, u16(u8(b"spdy/1"))),
            "alpn-empty": extension(EXT_ALPN, u16(b"")),
            "status-request": extension(EXT_STATUS_REQUEST, b""),
            "max-fragment-length": extension(1, b"\x01"),
            "record-size-limit-63": extension(28, struct.pack(">H", 63)),
            "encrypt-then-mac": extension(22, b""),
            "ems-with-body": extension(23, b"\x00"),
            "sni-ack": extension(EXT_SERVER_NAME, b""),
            "sni-with-body": extension(EXT_SERVER_NAME, u16(b"\x00" + u16(b"hooks.test"))),
            "duplicate-ec-point-formats": extension(11, b"\x01\x00"),
            "duplicate-renegotiation-info": ri,
        }
        if word in added:
            return exts + added[word]
        if word == "ec-point-formats-compressed-only":
            return exts.replace(extension(11, b"\x01\x00"), extension(11, b"\x01\x01"))
        if word == "renegotiation-info-nonempty":
            return exts.replace(ri, extension(EXT_RENEGOTIATION_INFO, u8(os.urandom(12))))
        if word == "renegotiation-info-bad-length":
            return exts.replace(ri, extension(EXT_RENEGOTIATION_INFO, b"\x05"))
        assert word == "extensions-trailing-byte", word
        return exts + b"\x00"

    def server_key_exchange(self, ch: ClientHello, server_random: bytes):
        """(our ECDH private key, the ServerKeyExchange, None when ske12 leaves it out)."""
        word = self.bugs.ske12
        if word:
            self.fired("ske12")
        key = load_key(self.cfg.key)
        if word.startswith("p256"):
            mine = ec.generate_private_key(ec.SECP256R1())
            point = mine.public_key().public_bytes(serialization.Encoding.X962,
                                                   serialization.PublicFormat.UncompressedPoint)
            if word == "p256-off-curve":
                point = point[:-1] + bytes([point[-1] ^ 1])
            elif word == "p256-compressed":
                point = mine.public_key().public_bytes(serialization.Encoding.X962,
                                                       serialization.PublicFormat.CompressedPoint)
            params = bytes([3]) + struct.pack(">H", SECP256R1) + u8(point)
        else:
            mine, public = x25519_pair()
            group = X25519
            if word == "curve-not-offered":
                group, public = 0x0016, b"\x04" + os.urandom(64)
            elif word == "x25519-all-zero":
                public = bytes(32)
            elif word == "x25519-short":
                public = public[:31]
            params = bytes([3]) + struct.pack(">H", group) + u8(public)
            if word == "explicit-prime":  # ECParameters of curve_type explicit_prime (RFC 8422 5.4: deprecated)
                p256_prime = bytes.fromhex("ffffffff00000001000000000000000000000000ffffffffffffffffffffffff")
                params = bytes([1]) + u8(p256_prime) + u8(b"\x01") + u8(b"\x02") + u8(public)
        signed = ch.client_random + server_random + params
        scheme, signature = scheme_of(key), sign(key, signed)
        if word == "scheme-not-offered":
            scheme, signature = 0x0203, key.sign(signed, ec.ECDSA(hashes.SHA1()))
        elif word == "scheme-key-mismatch":
            scheme = 0x0804
        elif word == "bad-signature":
            signature = signature[:-1] + bytes([signature[-1] ^ 1])  # the last byte of s: content, never DER
        body = params + struct.pack(">H", scheme) + u16(signature) + (b"\x00" if word == "trailing-byte" else b"")
        return mine, (None if word == "missing" else message(SERVER_KEY_EXCHANGE, body))

    def first_flight(self, hello: bytes, ske: Optional[bytes]) -> list[tuple[str, bytes]]:
        """Certificate to ServerHelloDone, as cert12, ske12 and flight12 say: ("msg", a message of the
        transcript), ("side", one outside it), ("raw", a record as it is)."""
        bugs, word = self.bugs, self.bugs.flight12
        chain = load_chain(self.cfg.chain)
        if bugs.cert12 == "rsa-leaf":
            chain = load_chain(os.path.join(os.path.dirname(self.cfg.chain), "leaf-rsa.pem"))
        entries = b"".join(u24(d) for d in chain)
        body = u24(entries)
        if bugs.cert12 == "empty-list":
            body = u24(b"")
        elif bugs.cert12 == "list-length-over":
            body = struct.pack(">I", len(entries) + 3)[1:] + entries
        elif bugs.cert12 == "entry-length-over":
            body = u24(struct.pack(">I", len(entries) + 3)[1:] + entries[3:])
        elif bugs.cert12 == "trailing-byte":
            body = u24(entries) + b"\x00"
        if bugs.cert12:
            self.fired("cert12")
        out = [] if word == "no-certificate" else [("msg", message(CERTIFICATE, body))]
        extra = {
            "server-hello-twice": ("msg", hello),
            "certificate-status-unasked": ("msg", message(22, b"\x01" + u24(STAPLES["not-der"]))),
            "hello-request-mid-flight": ("side", message(HELLO_REQUEST, b"")),
            "hello-request-body-mid-flight": ("side", message(HELLO_REQUEST, b"\x00")),
            "unknown-message-type": ("msg", message(99, b"")),
        }.get(word)
        if extra:
            out.append(extra)
        if ske:
            out += [("msg", ske)] * (2 if bugs.ske12 == "twice" else 1)
        if word == "certificate-request":  # ecdsa_sign, ecdsa_secp256r1_sha256, no authorities
            out.append(("msg", message(CERTIFICATE_REQUEST, u8(b"\x40") + u16(struct.pack(">H", ECDSA_SHA256)) +
                                       u16(b""))))
        out.append(("msg", message(SERVER_HELLO_DONE, b"\x00" if word == "done-with-body" else b"")))
        if word == "empty-handshake-record":
            out.insert(0, ("raw", record(HANDSHAKE, b"")))
        if word:
            self.fired("flight12")
        return out

    def emit_flight(self, flight: list[tuple[str, bytes]]) -> None:
        """FLIGHT's records, as flight12 packs them, in one write (the cork full_handshake opened)."""
        word = self.bugs.flight12
        for kind, m in flight:
            if kind == "msg":
                self.transcript += m
        if word == "coalesced" and self.tx is None:
            self.send(record(HANDSHAKE, b"".join(m for _, m in flight)), "coalesced-flight")
        else:
            for kind, m in flight:
                if kind == "raw":
                    self.send(m, "empty-handshake-record")
                    continue
                what = MESSAGE_NAMES.get(m[0], str(m[0]))
                size = 1 if word == "one-byte-fragments" and self.tx is None else len(m)
                for at in range(0, len(m), size):
                    self.send(self.tx.seal(HANDSHAKE, m[at:at + size]) if self.tx else
                              record(HANDSHAKE, m[at:at + size]), what)
        self.uncork()

    def finish(self, ch: ClientHello, server_random: bytes, mine) -> None:
        bugs = self.bugs
        cke = self.next_handshake()
        if cke[0] == CERTIFICATE:  # flight12=certificate-request: the client's (empty) Certificate
            self.transcript += cke
            cke = self.next_handshake()
        if cke[0] != CLIENT_KEY_EXCHANGE:
            raise PeerClosed(f"message {cke[0]} instead of ClientKeyExchange")
        self.transcript += cke
        theirs = cke[5:5 + cke[4]]
        if bugs.ske12.startswith("p256"):
            shared = mine.exchange(ec.ECDH(), ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), theirs))
        else:
            shared = x25519_shared(mine, theirs)
        session_hash = hashlib.sha256(self.transcript).digest() if self.ems else b""
        keys = Keys(shared, ch.client_random, server_random, session_hash)
        mine_keys = Keys(shared, ch.client_random, server_random) if bugs.ems12 == "wrong-master" and self.ems else keys
        self.pending_rx = Protection12(keys.client_key, keys.client_salt)
        fin = self.next_handshake()
        if fin[0] != FINISHED or fin[4:] != keys.verify_data(b"client finished", self.transcript):
            raise PeerClosed("bad client Finished")
        self.transcript += fin
        word = bugs.finish12
        if word:
            self.fired("finish12")
        self.cork = bytearray()  # the server's CCS and Finished in one write
        server_fin = mine_keys.verify_data(b"server finished", self.transcript)
        if word == "finished-bad":
            server_fin = bytes([server_fin[0] ^ 1]) + server_fin[1:]
        elif word == "finished-short":
            server_fin = server_fin[:11]
        finished = message(FINISHED, server_fin)
        if word == "appdata-before-ccs":
            self.send(record(APPDATA, b"HTTP/1.1 200 OK\r\n"), "appdata-before-ccs")
        if word == "finished-before-ccs":
            self.send(record(HANDSHAKE, finished), "Finished")
            self.uncork()
            self.next_record()  # the client's alert ends it
            return
        ccs = {"ccs-two-bytes": b"\x01\x01", "ccs-payload-02": b"\x02"}.get(word, b"\x01")
        self.send(self.tx.seal(CCS, ccs) if self.tx else record(CCS, ccs), "ChangeCipherSpec")
        self.tx = Protection12(mine_keys.server_key, mine_keys.server_salt)
        if word == "ccs-twice":  # the second under the keys the first started: it opens, and is unexpected
            self.send(self.tx.seal(CCS, ccs), "ChangeCipherSpec")
        if word == "appdata-before-finished":
            self.send(self.tx.seal(APPDATA, b"HTTP/1.1 200 OK\r\n"), "appdata-before-finished")
        self.transcript += finished
        self.send(self.tx.seal(HANDSHAKE, finished), "Finished")
        self.uncork()
        self.verify_data = (fin[4:], server_fin)
        self.report.bump(self.report.counts, "handshakes")

    def respond(self) -> None:
        """rec12's records once the request is in, before the response (one write), then Conn's. After the
        request, not before it: the client's next bytes are its answer to them, its request acknowledged by
        them (no alert of its held back by Nagle when it closes)."""
        word, tx = self.bugs.rec12, self.tx
        before = {
            "ciphertext-over": lambda: (lambda r: r[:3] + struct.pack(">H", MAX_RECORD + 2048 + 1) + r[5:] +
                                        bytes(MAX_RECORD + 2048 + 1 - len(r) + 5))(tx.seal(APPDATA, b"x" * MAX_RECORD)),
            "plaintext-over": lambda: tx.seal(APPDATA, b"x" * (MAX_RECORD + 1)),
            "bad-tag": lambda: (lambda r: r[:-1] + bytes([r[-1] ^ 1]))(tx.seal(APPDATA, b"HTTP/1.1 200 OK\r\n")),
            "unknown-type": lambda: tx.seal(99, bytes(20)),
            "empty-appdata": lambda: b"".join(tx.seal(APPDATA, b"") for _ in range(self.EMPTY_APPDATA)),
            "alert-fragmented": lambda: tx.seal(ALERT, b"\x01") + tx.seal(ALERT, b"\x70"),
            "warning-alert": lambda: tx.seal(ALERT, alert(112, level=1)),
            "hello-request-with-body": lambda: tx.seal(HANDSHAKE, message(HELLO_REQUEST, b"\x00")),
            "unknown-handshake-type": lambda: tx.seal(HANDSHAKE, message(99, b"")),
            "ccs-after-handshake": lambda: tx.seal(CCS, b"\x01"),
        }.get(word)
        if before:
            self.fired("rec12", self.EMPTY_APPDATA if word == "empty-appdata" else 1)  # counted before it goes
            self.send(before(), f"rec12:{word}")
        super().respond()

    def app_records(self, data: bytes, size: int) -> None:
        """rec12's response records (a version, one byte each), else Conn's."""
        word = self.bugs.rec12
        if not (word.startswith("version-") or word == "app-one-byte"):
            return super().app_records(data, size)
        version = int(word[len("version-"):], 16) if word.startswith("version-") else TLS12
        size = 1 if word == "app-one-byte" else size
        corked = self.cork is None
        if corked:
            self.cork = bytearray()  # the response in one write
        for at in range(0, len(data), size):
            self.fired("rec12")
            self.send(self.tx.seal(APPDATA, data[at:at + size], version=version), "response")
        if corked:
            self.uncork()

    def renegotiate(self) -> None:
        """A HelloRequest; the client's ClientHello, written from inside its SSL_read; a whole new handshake."""
        self.send(self.tx.seal(HANDSHAKE, message(HELLO_REQUEST, b"")), "HelloRequest")
        self.awaiting_renegotiation = True
        try:
            msg = self.next_handshake()
        except RenegotiationRefused:  # the server may go on without renegotiating (RFC 5246 7.2.2): it does
            self.report.bump(self.report.counts, "renegotiations_refused")
            return
        finally:
            self.awaiting_renegotiation = False
        if msg[0] != CLIENT_HELLO:
            raise PeerClosed(f"message {msg[0]} instead of the renegotiation's ClientHello")
        self.full_handshake(parse_client_hello(msg))


def handle(sock: socket.socket, cfg: argparse.Namespace, report: Report) -> None:
    report.bump(report.counts, "connections")
    sock.settimeout(SOCKET_TIMEOUT_S)
    try:
        (Conn12 if SCENARIOS[cfg.scenario].version == "1.2" else Conn)(sock, cfg, report).serve()
    except PeerClosed as e:
        report.bump(report.errors, str(e).split()[0])
    except Exception as e:  # noqa: BLE001 - whatever ends a connection is counted, never a traceback
        report.bump(report.errors, type(e).__name__)
    finally:
        sock.close()


def serve_forever(cfg: argparse.Namespace) -> None:
    report = Report(cfg.scenario)
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((cfg.host, cfg.port))
    listener.listen(128)

    threads: list[threading.Thread] = []

    def stop(_sig, _frame) -> None:
        end = time.monotonic() + STOP_GRACE_S  # connections still reading what the client said last
        for t in threads:
            t.join(max(0.0, end - time.monotonic()))
        print("REPORT " + json.dumps(report.to_json(), sort_keys=True), flush=True)
        os._exit(0)
    signal.signal(signal.SIGTERM, stop)
    print(f"READY {listener.getsockname()[1]}", flush=True)
    while True:
        sock, _ = listener.accept()
        threads.append(threading.Thread(target=handle, args=(sock, cfg, report), daemon=True))
        threads[-1].start()


def parse_args(argv: Optional[list[str]] = None) -> argparse.Namespace:
    scenarios = "\n".join(f"  {k:28} {v.does}" for k, v in SCENARIOS.items())
    p = argparse.ArgumentParser(
        description="A TLS 1.3 server that breaks the protocol on purpose, one scenario per run. Prints "
                    "READY <port>; on SIGTERM prints one REPORT {json} line and exits 0.",
        epilog=f"scenarios:\n{scenarios}\n\nREPORT fields: scenario, connections, handshakes, requests, good_bodies, bad_bodies, "
               "app_after_hello_request, app_during_renegotiation, renegotiations_refused, "
               "status_requests (ClientHellos asking for a staple), "
               "sent/received (by message), alerts_received, errors (why connections ended early), "
               "fired (bugs.py's field -> the times it acted).",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--chain", required=True, help="the certificate chain (PEM, leaf first)")
    p.add_argument("--key", required=True, help="the leaf's private key (PEM: P-256 or RSA)")
    p.add_argument("--ca", help="the CA certificate (PEM; cert-60k repeats it); default: ca.pem beside --chain")
    p.add_argument("--scenario", default="normal", help="what the peer does (below)")
    p.add_argument("--suite", choices=("aes128gcm", "chacha20"), default="aes128gcm", help="preferred cipher suite")
    p.add_argument("--group", choices=("x25519", "p256"), default="x25519", help="preferred key share group")
    p.add_argument("--staple", help="an OCSP response (DER) to staple on the leaf when the client asks for one")
    p.add_argument("--body-size", type=int, default=2000, help="response body bytes (default 2000)")
    p.add_argument("--verify-body-seed", type=int, metavar="S",
                   help="check each request body: byte i = (i * 131 + S) %% 251 (good_bodies, bad_bodies)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0)
    cfg = p.parse_args(argv)
    if cfg.scenario not in SCENARIOS:
        p.exit(2, f"{p.prog}: --scenario {cfg.scenario!r}: unknown (one of: {', '.join(SCENARIOS)})\n")
    for path in (cfg.chain, cfg.key, *([cfg.staple] if cfg.staple else [])):
        if not os.path.isfile(path):
            p.exit(2, f"{p.prog}: {path}: no such file\n")
    cfg.staple_der = None
    if cfg.staple:
        with open(cfg.staple, "rb") as f:
            cfg.staple_der = f.read()
    cfg.ca = cfg.ca or os.path.join(os.path.dirname(cfg.chain), "ca.pem")
    return cfg


def main() -> int:
    serve_forever(parse_args())
    return 0


if __name__ == "__main__":
    sys.exit(main())
