#!/usr/bin/python3
"""The hostile peer's own test (label hostile): every field of bugs.py, in a scenario that sets it,
shows on the wire as the field says, and not under its control.

A row's `server.fired[FIELD]=N` says the peer's code for FIELD ran; this says what reached the
socket. For each scenario the peer serves one connection to a reader that is not the peer's code:
hostile/reader.py (a raw TLS 1.3 client that records every record and message as it came) for the
1.3 scenarios, `openssl s_client -tls1_2 -msg` for the 1.2 ones. Each field has one check of that
trace, run twice: on its scenario, where it must hold, and on the scenario's control (normal or
tls12-normal), where it must not (a check that holds on a correct server proves nothing). A field
no scenario sets, a field with no check, a scenario whose field fired no count: each is a failure.

    /usr/bin/python3 -m hostile.peer_selftest --certs build/certs/out [--only SCENARIO ...]
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # reader.py and peer.py import their neighbours by plain name

from bugs import BUGS, STAPLES, WARNINGS  # noqa: E402
from reader import read_peer  # noqa: E402
from scenarios import SCENARIOS  # noqa: E402
import wire13  # noqa: E402
from tls13 import (CCS, CERTIFICATE, CERTIFICATE_REQUEST, ENCRYPTED_EXTENSIONS, FINISHED,  # noqa: E402
                   HANDSHAKE, KEY_UPDATE, NEW_SESSION_TICKET)

from harness.peers import hostile_peer  # noqa: E402
from harness.runs import die_with_parent  # noqa: E402

MAX = 1 << 14


class Wire:
    """A trace as the checks read it: the reader's records and messages, or s_client's -msg lines."""

    def __init__(self, trace: dict | None = None, s_client: str = ""):
        self.trace, self.s_client = trace or {}, s_client

    def messages(self, kind: int) -> list[dict]:
        return [m for m in self.trace.get("messages", []) if m["type"] == kind]

    def records(self, phase: str = "", **match) -> list[dict]:
        return [r for r in self.trace.get("records", []) if (not phase or r["phase"] == phase)
                and all(r[k] == v for k, v in match.items())]

    def response_records(self) -> list[dict]:
        return [r for r in self.records() if r["decrypted"] and r["inner_type"] == 23]

    def extension_types(self, kind: int) -> list[int]:
        """The extension types of the first message of KIND (EncryptedExtensions' list)."""
        body = bytes.fromhex(self.messages(kind)[0]["body"]) if self.messages(kind) else b""
        out, at = [], 2
        while at + 4 <= len(body):
            out.append(int.from_bytes(body[at:at + 2], "big"))
            at += 4 + int.from_bytes(body[at + 2:at + 4], "big")
        return out


def _alerts(w: Wire) -> list[tuple[int, int]]:
    return [(a[0], a[1]) for a in w.trace.get("alerts", [])]


def _alert_before_response(w: Wire, v: str) -> bool:
    first_data = next((i for i, r in enumerate(w.trace.get("records", [])) if r["inner_type"] == 23), 1 << 30)
    return any(tuple(a[:2]) == (1, WARNINGS[v]) and a[2] < first_data for a in w.trace.get("alerts", []))


def _split_certificate_by_alert(w: Wire) -> bool:
    cert = w.messages(CERTIFICATE)
    if not cert or len(cert[0]["records"]) < 2:
        return False
    first, last = cert[0]["records"][0], cert[0]["records"][-1]
    return any(r["inner_type"] == 21 for r in w.trace["records"][first:last])


def _response_cut(w: Wire) -> bool:
    return 0 < w.trace.get("response", 0) and not w.trace.get("response_complete")


def _records_after_close(w: Wire) -> bool:
    return (1, 0) in _alerts(w) and bool(w.records("closed", inner_type=23))


# --- the TLS 1.2 catalogue's reading of `openssl s_client -msg`: each line `<<< VERSION, KIND [length N], NAME`
# (<<< received, >>> sent) then the bytes in hex. Every record's header is printed as it is read; a handshake
# message only once s_client takes its type (one it refuses shows as its record's header alone).

MSG_LINE = re.compile(r"(<<<|>>>) ([^,<>]*?), (\w+) \[length ([0-9a-f]+)\](?:, (.*))?$")


def _trace12(w: Wire) -> list[dict]:
    """s_client's -msg items in order: dir, kind (RecordHeader, Handshake, Alert, ...), name, data (bytes)."""
    if "_items" in w.trace:
        return w.trace["_items"]
    items: list[dict] = []
    for line in w.s_client.splitlines():
        if m := MSG_LINE.search(line):  # anywhere: the response's bytes have no newline before it
            items.append({"dir": m[1], "kind": m[3], "name": m[5] or "", "hex": ""})
        elif items and re.fullmatch(r"\s+([0-9a-f]{2} ?)+", line):
            items[-1]["hex"] += "".join(line.split())
        elif line.strip():
            items.append({"dir": "", "kind": "text", "name": "", "hex": ""})  # ends the hex of the item before
    for item in items:
        item["data"] = bytes.fromhex(item.pop("hex"))
    w.trace["_items"] = items
    return items


def _got(w: Wire, kind: str = "", name: str = "") -> list[tuple[int, dict]]:
    """(position, item) of what s_client received, of KIND and NAME."""
    return [(i, x) for i, x in enumerate(_trace12(w)) if x["dir"] == "<<<" and (not kind or x["kind"] == kind)
            and (not name or x["name"] == name)]


def _message(w: Wire, name: str, sent: bool = False) -> bytes:
    """The first handshake message NAME that s_client took (SENT: that it sent), or b''."""
    want = ">>>" if sent else "<<<"
    return next((x["data"] for x in _trace12(w) if x["dir"] == want and x["kind"] == "Handshake"
                 and x["name"] == name), b"")


def _headers(w: Wire, ctype: int = 0, after: int = -1, before: int = 1 << 30) -> list[bytes]:
    """The received record headers (5 bytes) of content type CTYPE (0: any) between two positions."""
    return [x["data"] for i, x in _got(w, "RecordHeader") if after < i < before and len(x["data"]) == 5
            and (not ctype or x["data"][0] == ctype)]


def _position(w: Wire, kind: str, name: str = "") -> int:
    """The position of the first received item of KIND and NAME, or -1."""
    return next((i for i, _ in _got(w, kind, name)), -1)


def _ccs_position(w: Wire) -> int:
    """The position of the first ChangeCipherSpec record s_client read (2^30: none)."""
    return next((i for i, x in _got(w, "RecordHeader") if x["data"][:1] == b"\x14"), 1 << 30)


def _plain_handshake_records(w: Wire) -> list[int]:
    """The lengths of the handshake records s_client read before the server's ChangeCipherSpec."""
    return [int.from_bytes(h[3:5], "big") for h in _headers(w, 22, before=_ccs_position(w))]


def _after_certificate(w: Wire) -> list[int]:
    """The lengths of the plaintext handshake records after the one that carried the Certificate."""
    lengths, cert = _plain_handshake_records(w), _message(w, "Certificate")
    return lengths[lengths.index(len(cert)) + 1:] if cert and len(cert) in lengths else []


def _hello12(w: Wire, sent: bool = False) -> dict:
    """The (Client|Server)Hello's fields: version, random, session_id, suites, compression, extensions
    [(type, body)], left (bytes after the last whole extension)."""
    m = _message(w, "ClientHello" if sent else "ServerHello", sent)
    if len(m) < 38:
        return {}
    b, out = m[4:], {}
    out["version"], out["random"] = int.from_bytes(b[:2], "big"), b[2:34]
    at = 35 + b[34]
    out["session_id"] = b[35:at]
    if sent:
        n = int.from_bytes(b[at:at + 2], "big")
        out["suites"] = [int.from_bytes(b[at + 2 + i:at + 4 + i], "big") for i in range(0, n, 2)]
        at += 2 + n
        at += 1 + b[at]
    else:
        out["suites"], out["compression"] = [int.from_bytes(b[at:at + 2], "big")], b[at + 2]
        at += 3
    end = at + 2 + int.from_bytes(b[at:at + 2], "big") if at + 2 <= len(b) else at
    exts, at = [], at + 2
    while at + 4 <= end:
        n = int.from_bytes(b[at + 2:at + 4], "big")
        exts.append((int.from_bytes(b[at:at + 2], "big"), b[at + 4:at + 4 + n]))
        at += 4 + n
    out["extensions"], out["left"] = exts, b[at:end]
    return out


def _ext12(w: Wire, kind: int, sent: bool = False) -> list[bytes]:
    """The bodies of every extension of type KIND in the ServerHello (SENT: the ClientHello)."""
    return [body for t, body in _hello12(w, sent).get("extensions", []) if t == kind]


def _client_list(w: Wire, kind: int) -> list[int]:
    """The 16-bit values of a ClientHello list extension (supported_groups 10, signature_algorithms 13)."""
    body = (_ext12(w, kind, sent=True) or [b""])[0][2:]
    return [int.from_bytes(body[i:i + 2], "big") for i in range(0, len(body) - 1, 2)]


def _ske12(w: Wire) -> dict:
    """The ServerKeyExchange: curve_type, group, point, params (the signed part), scheme, signature."""
    m = _message(w, "ServerKeyExchange")[4:]
    if len(m) < 4:
        return {}
    if m[0] != 3:
        return {"curve_type": m[0]}
    end = 4 + m[3]
    out = {"curve_type": 3, "group": int.from_bytes(m[1:3], "big"), "point": m[4:end], "params": m[:end]}
    out["scheme"] = int.from_bytes(m[end:end + 2], "big")
    n = int.from_bytes(m[end + 2:end + 4], "big")
    out["signature"], out["left"] = m[end + 4:end + 4 + n], m[end + 4 + n:]
    return out


def _leaf12(w: Wire):
    """The leaf certificate of the server's Certificate (cryptography's), or None."""
    from cryptography import x509
    m = _message(w, "Certificate")
    try:
        return x509.load_der_x509_certificate(m[10:10 + int.from_bytes(m[7:10], "big")])
    except (ValueError, IndexError):
        return None


def _ske_verifies(w: Wire) -> bool:
    """The ServerKeyExchange's signature, checked here with the leaf's key over both randoms and the params."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    ske, leaf, ch, sh = _ske12(w), _leaf12(w), _hello12(w, sent=True), _hello12(w)
    if not (ske.get("signature") and leaf and ch and sh):
        return False
    try:
        leaf.public_key().verify(ske["signature"], ch["random"] + sh["random"] + ske["params"], ec.ECDSA(hashes.SHA256()))
        return True
    except (InvalidSignature, TypeError):
        return False


def _on_p256(point: bytes) -> bool:
    from cryptography.hazmat.primitives.asymmetric import ec
    try:
        ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), point)
        return True
    except ValueError:
        return False


def _alert_sent(w: Wire, *names: str) -> bool:
    """s_client sent a fatal alert (of one of NAMES, if given): its answer to what it read."""
    return any(x["dir"] == ">>>" and x["kind"] == "Alert" and x["name"].startswith("fatal") and
               (not names or x["name"].split()[-1] in names) for x in _trace12(w))


def _completed12(w: Wire) -> bool:
    return "New, TLSv1.2" in w.s_client and not _alert_sent(w)


def _after_finished(w: Wire, ctype: int) -> list[bytes]:
    return _headers(w, ctype, after=_position(w, "Handshake", "Finished"))


SH12_CHECKS: dict[str, Callable[[Wire], bool]] = {
    "version-0302": lambda w: _hello12(w).get("version") == 0x0302,
    "version-0300": lambda w: _hello12(w).get("version") == 0x0300,
    "version-0304": lambda w: _hello12(w).get("version") == 0x0304 and not _ext12(w, 43),
    "session-id-33": lambda w: len(_hello12(w).get("session_id", b"")) == 33,
    "compression-deflate": lambda w: _hello12(w).get("compression") == 1,
    "suite-unoffered": lambda w: bool(_hello12(w)) and _hello12(w)["suites"][0] not in _hello12(w, sent=True)["suites"],
    "sentinel-tls11": lambda w: _hello12(w).get("random", b"").endswith(b"DOWNGRD\x00"),
    "sentinel-tls12": lambda w: _hello12(w).get("random", b"").endswith(b"DOWNGRD\x01"),
}

SH12_EXTENSION_CHECKS: dict[str, Callable[[Wire], bool]] = {
    "unknown-7777": lambda w: bool(_ext12(w, 0x7777)) and not _ext12(w, 0x7777, sent=True),
    "alpn-two": lambda w: _ext12(w, 16) == [b"\x00\x0c\x02h2\x08http/1.1"],
    "alpn-unoffered": lambda w: _ext12(w, 16) == [b"\x00\x07\x06spdy/1"],
    "alpn-empty": lambda w: _ext12(w, 16) == [b"\x00\x00"],
    "status-request": lambda w: _ext12(w, 5) == [b""] and not _ext12(w, 5, sent=True),
    "max-fragment-length": lambda w: _ext12(w, 1) == [b"\x01"] and not _ext12(w, 1, sent=True),
    "record-size-limit-63": lambda w: _ext12(w, 28) == [b"\x00\x3f"],
    "encrypt-then-mac": lambda w: _ext12(w, 22) == [b""] and _hello12(w)["suites"] == [0xC02B],
    "ems-with-body": lambda w: any(body for body in _ext12(w, 23)),
    "sni-ack": lambda w: _ext12(w, 0) == [b""] and bool(_ext12(w, 0, sent=True)),
    "sni-with-body": lambda w: any(body for body in _ext12(w, 0)),
    "duplicate-ec-point-formats": lambda w: len(_ext12(w, 11)) == 2,
    "duplicate-renegotiation-info": lambda w: len(_ext12(w, 0xFF01)) == 2,
    "ec-point-formats-compressed-only": lambda w: bool(_ext12(w, 11)) and 0 not in _ext12(w, 11)[0][1:],
    "renegotiation-info-nonempty": lambda w: [len(b) for b in _ext12(w, 0xFF01)] == [13],
    "renegotiation-info-bad-length": lambda w: _ext12(w, 0xFF01) == [b"\x05"],
    "extensions-trailing-byte": lambda w: _hello12(w).get("left") == b"\x00",
}

CERT12_CHECKS: dict[str, Callable[[Wire], bool]] = {
    "empty-list": lambda w: _message(w, "Certificate") == bytes.fromhex("0b000003000000"),
    "list-length-over": lambda w: (lambda m: len(m) > 7 and int.from_bytes(m[4:7], "big") > len(m) - 7)(
        _message(w, "Certificate")),
    "entry-length-over": lambda w: (lambda m: len(m) > 10 and int.from_bytes(m[4:7], "big") == len(m) - 7 and
                                    int.from_bytes(m[7:10], "big") > len(m) - 10)(_message(w, "Certificate")),
    "trailing-byte": lambda w: (lambda m: len(m) > 7 and int.from_bytes(m[4:7], "big") == len(m) - 8)(
        _message(w, "Certificate")),
    "rsa-leaf": lambda w: bytes.fromhex("2a864886f70d010101") in _message(w, "Certificate")[:600],
}

SKE12_CHECKS: dict[str, Callable[[Wire], bool]] = {
    "bad-signature": lambda w: bool(_ske12(w).get("signature")) and _leaf12(w) is not None and not _ske_verifies(w),
    "scheme-not-offered": lambda w: _ske12(w).get("scheme") == 0x0203 and 0x0203 not in _client_list(w, 13),
    "scheme-key-mismatch": lambda w: _ske12(w).get("scheme") == 0x0804 and _ske_verifies(w),
    "curve-not-offered": lambda w: bool(_ske12(w)) and _ske12(w).get("group") not in _client_list(w, 10),
    "x25519-all-zero": lambda w: _ske12(w).get("group") == 0x1D and _ske12(w).get("point") == bytes(32),
    "x25519-short": lambda w: _ske12(w).get("group") == 0x1D and len(_ske12(w).get("point", b"")) == 31,
    "explicit-prime": lambda w: _ske12(w).get("curve_type") == 1,
    "p256": lambda w: _ske12(w).get("group") == 0x17 and len(_ske12(w)["point"]) == 65 and
    _on_p256(_ske12(w)["point"]) and _completed12(w),
    "p256-off-curve": lambda w: _ske12(w).get("group") == 0x17 and len(_ske12(w)["point"]) == 65 and
    not _on_p256(_ske12(w)["point"]),
    "p256-compressed": lambda w: _ske12(w).get("group") == 0x17 and len(_ske12(w)["point"]) == 33 and
    _ske12(w)["point"][:1] in (b"\x02", b"\x03"),
    "missing": lambda w: not _message(w, "ServerKeyExchange") and _after_certificate(w)[:1] == [4],
    "twice": lambda w: bool(_message(w, "ServerKeyExchange")) and
    _after_certificate(w)[:2] == [len(_message(w, "ServerKeyExchange"))] * 2,
    "trailing-byte": lambda w: _ske12(w).get("left") == b"\x00",
}

FLIGHT12_CHECKS: dict[str, Callable[[Wire], bool]] = {
    "done-with-body": lambda w: bool(_message(w, "ServerKeyExchange")) and
    _after_certificate(w)[:2] == [len(_message(w, "ServerKeyExchange")), 5],
    "no-certificate": lambda w: bool(_message(w, "ServerHello")) and not _message(w, "Certificate") and
    len(_plain_handshake_records(w)) >= 2,
    "server-hello-twice": lambda w: bool(_message(w, "ServerHello")) and
    _after_certificate(w)[:1] == [len(_message(w, "ServerHello"))],
    "certificate-status-unasked": lambda w: _after_certificate(w)[:1] == [4 + 1 + 3 + len(STAPLES["not-der"])],
    "hello-request-mid-flight": lambda w: _message(w, "HelloRequest") == b"\x00\x00\x00\x00" and
    _position(w, "Handshake", "HelloRequest") < _position(w, "Handshake", "ServerKeyExchange") and _completed12(w),
    "hello-request-body-mid-flight": lambda w: _after_certificate(w)[:1] == [5] and
    not _message(w, "ServerKeyExchange"),
    "certificate-request": lambda w: bool(_message(w, "CertificateRequest")) and
    _message(w, "Certificate", sent=True) == bytes.fromhex("0b000003000000") and _completed12(w),
    "one-byte-fragments": lambda w: len(_plain_handshake_records(w)) > 100 and set(_plain_handshake_records(w)) == {1},
    "coalesced": lambda w: len(_plain_handshake_records(w)) == 1 and bool(_message(w, "ServerHelloDone")),
    "empty-handshake-record": lambda w: 0 in _plain_handshake_records(w),
    "unknown-message-type": lambda w: _after_certificate(w)[:1] == [4] and not _message(w, "ServerKeyExchange"),
}

FINISH12_CHECKS: dict[str, Callable[[Wire], bool]] = {
    "finished-bad": lambda w: len(_message(w, "Finished")) == 16 and _alert_sent(w, "decrypt_error"),
    "finished-short": lambda w: _message(w, "Finished")[:4] == b"\x14\x00\x00\x0b" and len(_message(w, "Finished")) == 15,
    "finished-before-ccs": lambda w: (lambda after: after[:1] == [b"\x16\x03\x03\x00\x10"])(
        _headers(w, after=_position(w, "Handshake", "ServerHelloDone"))),
    "ccs-twice": lambda w: len(_headers(w, 20)) == 2,
    "ccs-two-bytes": lambda w: [h[3:5] for h in _headers(w, 20)] == [b"\x00\x02"],
    "ccs-payload-02": lambda w: [h[3:5] for h in _headers(w, 20)] == [b"\x00\x01"] and
    not _message(w, "Finished") and _alert_sent(w),
    "appdata-before-finished": lambda w: bool(_headers(w, 23, after=_ccs_position(w),
                                                       before=_position(w, "Handshake", "Finished") % (1 << 30))),
    "appdata-before-ccs": lambda w: bool(_headers(w, 23, before=_ccs_position(w))),
}

REC12_CHECKS: dict[str, Callable[[Wire], bool]] = {
    "version-0300": lambda w: any(h[1:3] == b"\x03\x00" for h in _after_finished(w, 23)),
    "version-0301": lambda w: any(h[1:3] == b"\x03\x01" for h in _after_finished(w, 23)),
    "version-0304": lambda w: any(h[1:3] == b"\x03\x04" for h in _after_finished(w, 23)),
    "app-one-byte": lambda w: len(_after_finished(w, 23)) > 100 and
    {int.from_bytes(h[3:5], "big") for h in _after_finished(w, 23)} == {1 + 24},
    "ciphertext-over": lambda w: any(int.from_bytes(h[3:5], "big") > MAX + 2048 for h in _after_finished(w, 23)),
    "plaintext-over": lambda w: any(int.from_bytes(h[3:5], "big") == MAX + 1 + 24 for h in _after_finished(w, 23)),
    "bad-tag": lambda w: bool(_after_finished(w, 23)) and _alert_sent(w, "bad_record_mac"),
    "unknown-type": lambda w: bool(_after_finished(w, 99)),
    "empty-appdata": lambda w: sum(h[3:5] == b"\x00\x18" for h in _after_finished(w, 23)) == 16,
    "alert-fragmented": lambda w: [h[3:5] for h in _after_finished(w, 21)][:1] == [b"\x00\x19"],
    "warning-alert": lambda w: any(x["name"] == "warning unrecognized_name" for _, x in _got(w, "Alert")),
    "hello-request-with-body": lambda w: _message(w, "HelloRequest") == b"\x00\x00\x00\x01\x00" or
    [h[3:5] for h in _after_finished(w, 22)][:1] == [(5 + 24).to_bytes(2, "big")],
    "unknown-handshake-type": lambda w: [h[3:5] for h in _after_finished(w, 22)][:1] == [(4 + 24).to_bytes(2, "big")],
    "ccs-after-handshake": lambda w: [h[3:5] for h in _after_finished(w, 20)][:1] == [(1 + 24).to_bytes(2, "big")],
}

EMS12_CHECKS: dict[str, Callable[[Wire], bool]] = {
    "negotiated": lambda w: _ext12(w, 23) == [b""] and "Extended master secret: yes" in w.s_client and _completed12(w),
    "wrong-master": lambda w: _ext12(w, 23) == [b""] and bool(_ext12(w, 23, sent=True)) and
    _alert_sent(w, "bad_record_mac", "decrypt_error"),
}


def _word12(table: dict[str, Callable[[Wire], bool]]) -> Callable[[Wire, object], bool]:
    return lambda w, v: bool(table[v](w))


# field -> (what it must show, the check: True when the wire shows it)
CHECKS: dict[str, tuple[str, Callable[[Wire, object], bool]]] = {
    "retry_group": ("a HelloRetryRequest", lambda w, v: w.trace.get("hello_retries", 0) >= 1),
    "retry_twice": ("two HelloRetryRequests", lambda w, v: w.trace.get("hello_retries") == 2),
    "server_share_group": ("the ServerHello's share in that group",
                           lambda w, v: w.trace.get("server_hello", {}).get("group") == v),
    "server_suite": ("the ServerHello's suite", lambda w, v: w.trace.get("server_hello", {}).get("suite") == v),
    "session_id_mismatch": ("a legacy_session_id_echo not the reader's",
                            lambda w, v: w.trace.get("server_hello", {}).get("session_id_echoed") is False),
    "handshake_fragment": ("every handshake record at most that many bytes",
                           lambda w, v: all(r["plain"] <= v for r in w.records("handshake", inner_type=HANDSHAKE))
                           and all(r["plain"] <= v for r in w.records("hello", outer_type=HANDSHAKE))),
    "pack_flight": ("EncryptedExtensions to Finished in one record",
                    lambda w, v: len({tuple(m["records"]) for k in (ENCRYPTED_EXTENSIONS, CERTIFICATE, FINISHED)
                                      for m in w.messages(k)}) == 1),
    "chain_padding_kib": ("a Certificate message of that many KiB",
                          lambda w, v: any(m["length"] >= v * 1024 for m in w.messages(CERTIFICATE))),
    "ccs_before_encrypted_extensions": ("a ChangeCipherSpec before the encrypted flight",
                                        lambda w, v: bool(w.records("handshake", outer_type=CCS))),
    "ee_duplicate_server_name": ("server_name twice in EncryptedExtensions",
                                 lambda w, v: w.extension_types(ENCRYPTED_EXTENSIONS).count(0) == 2),
    "ee_unsolicited_alpn": ("ALPN in EncryptedExtensions", lambda w, v: 16 in w.extension_types(ENCRYPTED_EXTENSIONS)),
    "cv_skip_certificate": ("a CertificateVerify the reader's transcript does not verify",
                            lambda w, v: w.trace.get("cv_ok") is False),
    "finished_flip_bit": ("a server Finished that does not verify", lambda w, v: w.trace.get("finished_ok") is False),
    "alert_inside_certificate": ("an alert record between two fragments of the Certificate",
                                 lambda w, v: _split_certificate_by_alert(w)),
    "staple": ("that malformed staple on the leaf's Certificate entry",
               lambda w, v: w.trace.get("staple") == STAPLES[v].hex()),
    "rst_after_finished": ("a reset before any data", lambda w, v: w.trace.get("end") == "reset"
                           and not w.trace.get("response")),
    "ccs_after_handshake": ("a ChangeCipherSpec after the handshake", lambda w, v: bool(w.records("after", outer_type=CCS))),
    "keyupdates_before_response": ("that many KeyUpdates", lambda w, v: len(w.messages(KEY_UPDATE)) == v),
    "keyupdate_value": ("a KeyUpdate of that request_update",
                        lambda w, v: any(m["body"] == f"{v:02x}" for m in w.messages(KEY_UPDATE))),
    "tickets_before_response": ("that many NewSessionTickets", lambda w, v: len(w.messages(NEW_SESSION_TICKET)) == v),
    "ticket_kib": ("a NewSessionTicket of that many KiB",
                   lambda w, v: any(m["length"] >= v * 1024 for m in w.messages(NEW_SESSION_TICKET))),
    "ticket_extension": ("a NewSessionTicket carrying that extension type",
                         lambda w, v: any(m["body"].endswith(f"0004{v:04x}0000") for m in w.messages(NEW_SESSION_TICKET))),
    "post_certificate_request": ("a CertificateRequest after the handshake", lambda w, v: bool(w.messages(CERTIFICATE_REQUEST))),
    "alert_before_response": ("that warning alert before any data", _alert_before_response),
    "empty_records_before_response": ("that many empty application records",
                                      lambda w, v: len(w.records("after", inner_type=23, plain=0)) == v),
    "outer_type_before_response": ("an unprotected record of that type", lambda w, v: bool(w.records(outer_type=v))),
    "inner_type_before_response": ("a protected record of that inner type", lambda w, v: bool(w.records(inner_type=v))),
    "padding_only_record": ("a protected record with no inner type",
                            lambda w, v: bool([r for r in w.records("after") if r["decrypted"] and r["inner_type"] is None])),
    "record_overflow": ("a record past the limit",
                        lambda w, v: any(r["plain"] > MAX for r in w.records("after", decrypted=True)) if v == "plaintext"
                        else any(r["length"] > MAX + 256 for r in w.records("after"))),
    "app_record_size": ("every response record at most that size",
                        lambda w, v: bool(w.response_records()) and all(r["plain"] <= v for r in w.response_records())),
    "app_padding": ("every response record padded by that many bytes",
                    lambda w, v: bool(w.response_records()) and all(r["padding"] == v for r in w.response_records())),
    "response_record_version": ("every response record of that legacy_record_version",
                                lambda w, v: bool(w.response_records()) and
                                all(r["outer_version"] == v for r in w.response_records())),
    "ticket_between_records": ("a NewSessionTicket after each response record",
                               lambda w, v: len(w.messages(NEW_SESSION_TICKET)) >= len(w.response_records()) > 0),
    "keyupdate_mid_response": ("a KeyUpdate with update_requested inside the response",
                               lambda w, v: any(m["body"] == "01" for m in w.messages(KEY_UPDATE))
                               and w.trace.get("response_complete")),
    "close_notify_mid_response": ("close_notify before the response ended",
                                  lambda w, v: _response_cut(w) and (1, 0) in _alerts(w)),
    "fatal_alert_mid_response": ("a fatal internal_error before the response ended",
                                 lambda w, v: _response_cut(w) and (2, 80) in _alerts(w)),
    "fin_mid_record": ("the end of the stream inside a record", lambda w, v: w.trace.get("end") == "partial-record"),
    "close_notify_then_data": ("an application record after close_notify", lambda w, v: _records_after_close(w)),
    "fatal_alert_after_response": ("a fatal internal_error after the whole response",
                                   lambda w, v: w.trace.get("response_complete") and
                                   (2, 80) in _alerts(w)),
    "rst_after_request": ("a reset instead of a response", lambda w, v: w.trace.get("end") == "reset"
                          and not w.trace.get("response")),
    # the TLS 1.3 catalogue's word fields: hostile/wire13.py parses the reader's trace
    "sh_form": ("the ServerHello altered as the word says", lambda w, v: wire13.sh_form(w.trace, v)),
    "sh_extension": ("that extension in the ServerHello", lambda w, v: wire13.sh_extension(w.trace, v)),
    "retry_form": ("a HelloRetryRequest altered as the word says", lambda w, v: wire13.retry_form(w.trace, v)),
    "server_share": ("the ServerHello's key share malformed as the word says", lambda w, v: wire13.server_share(w.trace, v)),
    "ee_extension": ("that extension (or answer) in EncryptedExtensions", lambda w, v: wire13.ee_extension(w.trace, v)),
    "certificate_form": ("the Certificate altered as the word says", lambda w, v: wire13.certificate_form(w.trace, v)),
    "cv_form": ("the CertificateVerify altered as the word says", lambda w, v: wire13.cv_form(w.trace, v)),
    "finished_form": ("the server Finished's verify_data as the word says", lambda w, v: wire13.finished_form(w.trace, v)),
    "flight_order": ("the handshake messages in that order", lambda w, v: wire13.flight_order(w.trace, v)),
    "inject_after_server_hello": ("that record after the ServerHello", lambda w, v: wire13.inject_after_server_hello(w.trace, v)),
    "inject_after_handshake": ("that record after the handshake", lambda w, v: wire13.inject_after_handshake(w.trace, v)),
    "response_record": ("the response's first record broken as the word says (what opens it)", lambda w, v: wire13.response_record(w.trace, v)),
    "ticket_form": ("a NewSessionTicket as the word says", lambda w, v: wire13.ticket_form(w.trace, v)),
    "certificate_request": ("a CertificateRequest in the handshake as the word says", lambda w, v: wire13.certificate_request(w.trace, v)),
    # TLS 1.2: openssl s_client -msg's lines
    "downgrade_sentinel": ("a ServerHello random ending DOWNGRD\\x01",
                           lambda w, v: "444f574e47524401" in "".join(w.s_client.lower().split())),
    "omit_renegotiation_info": ("no renegotiation_info", lambda w, v: "Secure Renegotiation IS NOT supported" in w.s_client),
    "renegotiate_mid_response": ("a HelloRequest", lambda w, v: "HelloRequest" in w.s_client),
    "renegotiation_info_mismatch": ("a renegotiation refused for its renegotiation_info",
                                    lambda w, v: "RENEGOTIATION_MISMATCH" in w.s_client.upper()
                                    or "renegotiation mismatch" in w.s_client),
    "renegotiate_mid_request": ("a HelloRequest while the request is in flight", lambda w, v: "HelloRequest" in w.s_client),
    # the TLS 1.2 catalogue: each word field's check, one a word (the tables above)
    "sh12": ("that ServerHello field", _word12(SH12_CHECKS)),
    "sh12_extension": ("that ServerHello extension", _word12(SH12_EXTENSION_CHECKS)),
    "cert12": ("that Certificate", _word12(CERT12_CHECKS)),
    "ske12": ("that ServerKeyExchange", _word12(SKE12_CHECKS)),
    "flight12": ("that first flight", _word12(FLIGHT12_CHECKS)),
    "finish12": ("that ChangeCipherSpec and Finished", _word12(FINISH12_CHECKS)),
    "rec12": ("those records after the handshake", _word12(REC12_CHECKS)),
    "ems12": ("that extended master secret", _word12(EMS12_CHECKS)),
}


REQUEST = "GET / HTTP/1.1\r\nHost: hooks.test\r\nConnection: keep-alive\r\n\r\n"


def wire_of(certs: str, scenario: str) -> tuple[Wire, dict]:
    """One connection to the peer running SCENARIO, read by the reader that is not the peer's code;
    the wire and the peer's REPORT."""
    with hostile_peer(certs, "leaf-ecdsa", scenario) as peer:
        if SCENARIOS[scenario].version == "1.3":
            wire = Wire(asdict(read_peer(peer.port, status_request=bool(SCENARIOS[scenario].bugs.staple))))
        else:
            argv = ["openssl", "s_client", "-connect", f"127.0.0.1:{peer.port}", "-tls1_2", "-msg",
                    "-CAfile", f"{certs}/ca.pem", "-servername", "hooks.test", "-ign_eof"]
            try:
                done = subprocess.run(argv, input=REQUEST, capture_output=True, text=True, timeout=15,
                                      preexec_fn=die_with_parent)
                wire = Wire(s_client=done.stdout + done.stderr)
            except subprocess.TimeoutExpired as e:
                wire = Wire(s_client=(e.stdout or b"").decode(errors="replace") + " (timed out)")
    return wire, peer.report


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--certs", required=True, help="the lab's certificates (build/certs/out)")
    p.add_argument("--only", nargs="+", metavar="SCENARIO", default=[], help="these scenarios only")
    ns = p.parse_args()
    problems = []
    if unchecked := sorted(set(BUGS) - set(CHECKS)):
        problems.append(f"fields with no check here: {', '.join(unchecked)}")
    if unused := sorted(set(BUGS) - {f for s in SCENARIOS.values() for f in s.bugs.set()}):
        problems.append(f"fields no scenario sets: {', '.join(unused)}")
    if unknown := [s for s in ns.only if s not in SCENARIOS]:
        print(f"peer_selftest.py: --only {unknown[0]}: no such scenario (--list-scenarios)", file=sys.stderr)
        return 2
    for problem in problems:
        print(f"FAIL {problem}", flush=True)
    controls = {}
    checked = 0
    for name, sc in SCENARIOS.items():
        if not sc.bugs.set() or (ns.only and name not in ns.only):
            continue
        wire, report = wire_of(ns.certs, name)
        control = "normal" if sc.version == "1.3" else "tls12-normal"
        if control not in controls:
            controls[control] = wire_of(ns.certs, control)[0]
        for field in sc.bugs.set():
            value = getattr(sc.bugs, field)
            shows, check = CHECKS[field]
            fired = report.get("fired", {}).get(field, 0)
            verdict = []
            if not check(wire, value):
                verdict.append(f"the wire does not show {shows}")
            if check(controls[control], value):
                verdict.append(f"its control {control} shows {shows} too: the check proves nothing")
            if fired < 1:
                verdict.append(f"the peer counted fired[{field}]={fired}")
            checked += 1
            print(f"{'FAIL' if verdict else 'PASS'} {name}: {field}={value!r}: {shows}"
                  + (f": {'; '.join(verdict)}" if verdict else ""), flush=True)
            problems += [f"{name}: {field}: {v}" for v in verdict]
    print(f"peer self-test: {checked} fields checked against the wire, {len(problems)} failed", flush=True)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
