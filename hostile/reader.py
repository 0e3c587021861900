"""A raw reader of the hostile peer's TLS 1.3 output: a minimal client that records every record
and message the peer put on the wire, as it came, without judging it.

The peer counts its own bugs (REPORT `fired`), but a count says only that the code ran; this
reader says what reached the socket: each record's outer type, version and length, its inner
type, plaintext length and padding once decrypted, and each handshake message with the records
it came in. hostile/tests/test_peer.py holds every bug of bugs.py against it. It verifies
nothing on purpose (a bad Finished or CertificateVerify is read on, and shows as such); it
answers a HelloRetryRequest, a KeyUpdate with update_requested, and sends one request.

    /usr/bin/python3 hostile/reader.py --port PORT [--status-request] [--body-size N]   # prints the trace as JSON
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import socket
import struct
import sys
from dataclasses import asdict, dataclass, field
from typing import Optional

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding

from tls13 import (AES_128_GCM, ALERT, APPDATA, CERTIFICATE, CERTIFICATE_VERIFY, CHACHA20, CLIENT_HELLO, EXT_KEY_SHARE, EXT_SERVER_NAME,
                   EXT_SIG_ALGS, EXT_GROUPS, EXT_STATUS_REQUEST, EXT_SUPPORTED_VERSIONS, FINISHED, HANDSHAKE,
                   HRR_RANDOM, KEY_UPDATE, SECP256R1, SERVER_HELLO, TLS12, TLS13, X25519, Protection, Schedule,
                   extension, finished_mac, message, u16, u8, certificate_verify_input, x25519_pair, x25519_shared)

TIMEOUT_S = 5.0


@dataclass
class Record:
    outer_type: int
    outer_version: int
    length: int                       # the record's length field (the bytes after its header)
    inner_type: Optional[int] = None  # once decrypted; None for a plaintext record or one with no type
    plain: int = 0                    # plaintext bytes (the content, without type and padding)
    padding: int = 0                  # zero bytes after the inner type
    decrypted: bool = False
    undecryptable: bool = False
    phase: str = ""                   # hello, handshake, after (the server Finished read), closing (the reader's
                                      # close_notify sent), closed (the peer's close_notify read)
    head: str = ""                    # hex of the content's first 16 bytes (the raw body's, when it did not decrypt)
    fails_as: str = ""                # a record that did not decrypt, and what opens it: bad-tag (its tag's last bit
                                      # flipped back), skip-sequence (the next nonce), replayed (the last one),
                                      # handshake-keys (the server's handshake key), short (shorter than a tag)


@dataclass
class Message:
    type: int
    length: int
    records: list[int]      # the indexes of the records it came in
    body: str = ""          # hex, for the messages a check reads (ServerHello, EE, Certificate, NST, KeyUpdate)


@dataclass
class Trace:
    records: list[Record] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)
    alerts: list[tuple[int, int, int]] = field(default_factory=list)  # (level, description, record index)
    hello_retries: int = 0
    server_hello: dict = field(default_factory=dict)               # suite, group, session_id_echoed, random
    session_id: str = ""
    finished_ok: Optional[bool] = None
    cv_ok: Optional[bool] = None
    staple: str = ""             # hex of the staple on the leaf's Certificate entry
    cv: dict = field(default_factory=dict)  # the CertificateVerify: scheme, signature (hex), trailing bytes, and the
                                            # content its signature verifies over (server, client, no-prefix, or "")
    response: int = 0            # response bytes read (head and body)
    response_complete: bool = False
    end: str = ""                # eof, reset, alert, timeout, partial-record, undecryptable


class Reader:
    def __init__(self, port: int, status_request: bool):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT_S)
        self.status_request = status_request
        self.trace = Trace()
        self.buf = b""
        self.rx: Optional[Protection] = None
        self.tx: Optional[Protection] = None
        self.hs_buf = b""
        self.hs_records: list[int] = []
        self.transcript = b""
        self.phase = "hello"
        self.pending: list[bytes] = []    # handshake messages read, not yet taken by the handshake
        self.response_bytes = b""
        self.leaf = b""
        self.s_hs = b""                   # the server's handshake traffic secret (a record under it, later, says so)

    # --- the wire ---------------------------------------------------------------------------------

    def read_record(self) -> Optional[tuple[Record, bytes]]:
        """The next record and its content, or None at the end (trace.end says how)."""
        while True:
            if len(self.buf) >= 5:
                n = struct.unpack(">H", self.buf[3:5])[0]
                if len(self.buf) >= 5 + n:
                    header, body, self.buf = self.buf[:5], self.buf[5:5 + n], self.buf[5 + n:]
                    return self.open(header, body)
            try:
                chunk = self.sock.recv(65536)
            except ConnectionResetError:
                self.trace.end = "reset"
                return None
            except socket.timeout:
                self.trace.end = "timeout"
                return None
            if not chunk:
                self.trace.end = "partial-record" if self.buf else "eof"
                return None
            self.buf += chunk

    def open(self, header: bytes, body: bytes) -> tuple[Record, bytes]:
        rec = Record(header[0], struct.unpack(">H", header[1:3])[0], len(body), phase=self.phase)
        self.trace.records.append(rec)
        if self.rx is None or header[0] != APPDATA:
            rec.plain, rec.head = len(body), body[:16].hex()
            return rec, body
        try:
            inner = self.rx.aead.decrypt(self.rx.nonce(), body, header)
        except Exception:  # noqa: BLE001 - a record the reader cannot open is recorded, and ends the read
            rec.undecryptable, rec.head, rec.fails_as = True, body[:16].hex(), self.what_opens(header, body)
            return rec, b""
        content = inner.rstrip(b"\0")
        rec.decrypted, rec.padding = True, len(inner) - len(content)
        if content:
            rec.inner_type, rec.plain = content[-1], len(content) - 1
            rec.head = content[:-1][:16].hex()
            return rec, content[:-1]
        return rec, b""

    def what_opens(self, header: bytes, body: bytes) -> str:
        """A record that did not decrypt at its sequence number: what would have opened it."""
        if len(body) < 16:
            return "short"
        seq = self.rx.seq - 1  # the number it failed at

        def opens(aead, iv: bytes, n: int, data: bytes) -> bool:
            try:
                aead.decrypt(bytes(a ^ b for a, b in zip(iv, n.to_bytes(12, "big"))), data, header)
                return True
            except Exception:  # noqa: BLE001 - InvalidTag: not this one
                return False
        if opens(self.rx.aead, self.rx.iv, seq, body[:-1] + bytes([body[-1] ^ 1])):
            return "bad-tag"
        if opens(self.rx.aead, self.rx.iv, seq + 1, body):
            return "skip-sequence"
        if seq > 0 and opens(self.rx.aead, self.rx.iv, seq - 1, body):
            return "replayed"
        if self.s_hs:
            hs = Protection(self.rx.suite, self.s_hs)
            if any(opens(hs.aead, hs.iv, n, body) for n in range(8)):
                return "handshake-keys"
        return ""

    def send_record(self, ctype: int, data: bytes) -> None:
        if self.tx is None:
            self.sock.sendall(struct.pack(">BHH", ctype, TLS12, len(data)) + data)
        else:
            self.sock.sendall(self.tx.seal(ctype, data))

    # --- the handshake ----------------------------------------------------------------------------

    def client_hello(self, group: int, public: bytes, session_id: bytes) -> bytes:
        exts = extension(EXT_SERVER_NAME, u16(b"\x00" + u16(b"hooks.test")))
        exts += extension(EXT_SUPPORTED_VERSIONS, u8(struct.pack(">H", TLS13)))
        exts += extension(EXT_GROUPS, u16(struct.pack(">HH", X25519, SECP256R1)))
        exts += extension(EXT_SIG_ALGS, u16(struct.pack(">HH", 0x0403, 0x0804)))
        exts += extension(EXT_KEY_SHARE, u16(struct.pack(">H", group) + u16(public)))
        if self.status_request:
            exts += extension(EXT_STATUS_REQUEST, b"\x01\x00\x00\x00\x00")
        body = struct.pack(">H", TLS12) + os.urandom(32) + u8(session_id) + u16(struct.pack(">HH", AES_128_GCM, CHACHA20))
        return message(CLIENT_HELLO, body + b"\x01\x00" + u16(exts))

    def pump(self) -> bool:
        """Read one record and take it in (handshake bytes, an alert, data); False at the end."""
        got = self.read_record()
        if got is None:
            return False
        rec, content = got
        if rec.undecryptable:
            self.trace.end = "undecryptable"
            return False
        kind = rec.inner_type if rec.decrypted else rec.outer_type
        if kind == HANDSHAKE:
            self.hs_buf += content
            self.hs_records.append(len(self.trace.records) - 1)
            while len(self.hs_buf) >= 4 and len(self.hs_buf) >= 4 + int.from_bytes(self.hs_buf[1:4], "big"):
                n = 4 + int.from_bytes(self.hs_buf[1:4], "big")
                msg, self.hs_buf = self.hs_buf[:n], self.hs_buf[n:]
                self.trace.messages.append(Message(msg[0], n - 4, sorted(set(self.hs_records)), msg[4:].hex()))
                self.hs_records = [len(self.trace.records) - 1] if self.hs_buf else []
                self.pending.append(msg)
                if self.phase != "handshake" and self.phase != "hello":
                    self.on_post_handshake(msg)
        elif kind == ALERT and len(content) == 2:
            self.trace.alerts.append((content[0], content[1], len(self.trace.records) - 1))
            if content[0] == 2:
                self.trace.end = "alert"
                return False
            if content[1] == 0:  # close_notify: what still comes is recorded, never read as data
                self.phase = "closed"
        elif kind == APPDATA and self.phase != "closed":
            self.on_app_data(content)
        return True

    def next_message(self) -> Optional[bytes]:
        """The next whole handshake message of the handshake, or None at the end."""
        while not self.pending:
            if not self.pump():
                return None
        return self.pending.pop(0)

    def handshake(self) -> bool:
        session_id = os.urandom(32)
        self.trace.session_id = session_id.hex()
        mine, public = x25519_pair()
        ch = self.client_hello(X25519, public, session_id)
        self.send_record(HANDSHAKE, ch)
        self.transcript = ch
        p256, asked = None, 0
        while True:
            sh = self.next_message()
            if sh is None or sh[0] != SERVER_HELLO:
                return False
            suite, group, share = self.server_hello(sh)
            if sh[6:38] != HRR_RANDOM:
                break
            asked = group
            self.trace.hello_retries += 1
            self.transcript = bytes([254, 0, 0, 32]) + hashlib.sha256(self.transcript).digest() + sh
            p256 = ec.generate_private_key(ec.SECP256R1())
            point = p256.public_key().public_bytes(serialization.Encoding.X962,
                                                   serialization.PublicFormat.UncompressedPoint)
            ch = self.client_hello(group, point if group == SECP256R1 else public, session_id)
            self.send_record(HANDSHAKE, ch)
            self.transcript += ch
        self.transcript += sh
        if asked and group != asked:  # a share in another group than the HelloRetryRequest's: no key to agree
            self.trace.end = "group-changed"
            return False
        try:
            if group == X25519:
                shared = x25519_shared(mine, share)
            else:
                shared = p256.exchange(ec.ECDH(), ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), share))
        except Exception:  # noqa: BLE001 - a share in a group never offered: recorded in server_hello
            self.trace.end = "bad-share"
            return False
        schedule = Schedule()
        c_hs, s_hs = schedule.handshake(shared, hashlib.sha256(self.transcript).digest())
        self.rx, self.phase = Protection(suite if suite in (AES_128_GCM, CHACHA20) else AES_128_GCM, s_hs), "handshake"
        self.s_hs = s_hs
        while True:
            msg = self.next_message()
            if msg is None:
                return False
            if msg[0] == CERTIFICATE:
                self.read_certificate(msg)
            if msg[0] == CERTIFICATE_VERIFY:
                self.trace.cv_ok = self.verify_cv(msg, hashlib.sha256(self.transcript).digest())
            if msg[0] == FINISHED:
                self.trace.finished_ok = msg[4:] == finished_mac(s_hs, hashlib.sha256(self.transcript).digest())
                self.transcript += msg
                break
            self.transcript += msg
        c_ap, s_ap = schedule.application(hashlib.sha256(self.transcript).digest())
        self.tx = Protection(self.rx.suite, c_hs)
        self.send_record(HANDSHAKE, message(FINISHED, finished_mac(c_hs, hashlib.sha256(self.transcript).digest())))
        self.rx, self.tx, self.phase = Protection(self.rx.suite, s_ap), Protection(self.rx.suite, c_ap), "after"
        return True

    def read_certificate(self, msg: bytes) -> None:
        """The leaf (for the CertificateVerify) and its entry's extensions (a staple: status_request)."""
        b = msg[4:]
        at = 1 + b[0] + 3
        n = int.from_bytes(b[at:at + 3], "big")
        self.leaf = b[at + 3:at + 3 + n]
        at += 3 + n
        ext_len = int.from_bytes(b[at:at + 2], "big")
        exts, at = b[at + 2:at + 2 + ext_len], 0
        while at + 4 <= len(exts):
            kind, length = struct.unpack(">HH", exts[at:at + 4])
            if kind == EXT_STATUS_REQUEST:  # status_type ocsp (1), then the OCSPResponse's length and bytes
                self.trace.staple = exts[at + 8:at + 4 + length].hex()
            at += 4 + length

    def verify_cv(self, msg: bytes, transcript_hash: bytes) -> bool:
        """Whether the CertificateVerify's signature holds over the transcript so far, by the leaf's key; the
        trace's cv says what the message holds and which content, if any, its signature verifies over."""
        scheme, n = struct.unpack(">HH", msg[4:8]) if len(msg) >= 8 else (0, 0)
        sig = msg[8:8 + n]
        self.trace.cv = {"scheme": scheme, "signature": sig.hex(), "trailing": len(msg) - 8 - len(sig), "context": ""}
        server = certificate_verify_input(transcript_hash)
        contents = {"server": server, "no-prefix": server[64:],
                    "client": b" " * 64 + b"TLS 1.3, client CertificateVerify\0" + transcript_hash}
        try:
            key = x509.load_der_x509_certificate(self.leaf).public_key()
        except Exception:  # noqa: BLE001 - a leaf that is not a certificate: nothing verifies
            return False
        digest = {0x0203: hashes.SHA1(), 0x0503: hashes.SHA384()}.get(scheme, hashes.SHA256())
        for name, content in contents.items():
            try:
                if scheme == 0x0804:
                    key.verify(sig, content, padding.PSS(padding.MGF1(hashes.SHA256()), 32), hashes.SHA256())
                elif scheme == 0x0401:
                    key.verify(sig, content, padding.PKCS1v15(), hashes.SHA256())
                else:
                    key.verify(sig, content, ec.ECDSA(digest))
            except Exception:  # noqa: BLE001 - InvalidSignature, or a key of another kind: not verified
                continue
            self.trace.cv["context"] = name
            break
        return self.trace.cv["context"] == "server" and scheme in (0x0403, 0x0804)

    def server_hello(self, sh: bytes) -> tuple[int, int, bytes]:
        b = sh[4:]
        sid_len = b[34]
        sid = b[35:35 + sid_len]
        at = 35 + sid_len
        suite = struct.unpack(">H", b[at:at + 2])[0]
        at += 3
        end, at = at + 2 + struct.unpack(">H", b[at:at + 2])[0], at + 2
        group, share = 0, b""
        while at < end:
            kind, length = struct.unpack(">HH", b[at:at + 4])
            if kind == EXT_KEY_SHARE:
                group = struct.unpack(">H", b[at + 4:at + 6])[0]
                share = b[at + 8:at + 4 + length] if length > 2 else b""
            at += 4 + length
        self.trace.server_hello = {"suite": suite, "group": group, "session_id_echoed": sid.hex() == self.trace.session_id,
                                   "random": b[2:34].hex()}
        return suite, group, share

    # --- after the handshake ----------------------------------------------------------------------

    def on_app_data(self, content: bytes) -> None:
        self.trace.response += len(content)
        self.response_bytes += content
        head, sep, _ = self.response_bytes.partition(b"\r\n\r\n")
        if sep:
            length = next((int(v) for k, _, v in (line.partition(b":") for line in head.split(b"\r\n"))
                           if k.strip().lower() == b"content-length"), 0)
            self.trace.response_complete = len(self.response_bytes) >= len(head) + 4 + length

    def on_post_handshake(self, msg: bytes) -> None:
        if msg[0] == KEY_UPDATE:
            self.rx.update()
            if msg[4:5] == b"\x01":
                self.send_record(HANDSHAKE, message(KEY_UPDATE, b"\x00"))
                self.tx.update()

    def post_handshake(self) -> None:
        self.send_record(APPDATA, b"GET / HTTP/1.1\r\nHost: hooks.test\r\nConnection: keep-alive\r\n\r\n")
        while not self.trace.response_complete and self.pump():
            pass
        if self.trace.end:
            return
        self.send_record(ALERT, b"\x01\x00")  # close_notify; then whatever the peer still sends
        if self.phase != "closed":
            self.phase = "closing"
        self.sock.settimeout(1.0)
        while self.pump():
            pass

    def run(self) -> Trace:
        try:
            if self.handshake():
                self.post_handshake()
        except OSError:  # a write the peer's RST beat (rst_after_finished races the request): the end it shows
            self.trace.end = "reset"
        self.sock.close()
        return self.trace


def read_peer(port: int, status_request: bool = False) -> Trace:
    return Reader(port, status_request).run()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--status-request", action="store_true", help="ask for an OCSP staple")
    ns = p.parse_args()
    print(json.dumps(asdict(read_peer(ns.port, ns.status_request)), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
