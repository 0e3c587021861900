"""The TLS 1.3 catalogue's checks of the wire (peer_selftest.py's CHECKS for bugs.py's word fields): each
reads the trace hostile/reader.py recorded (its messages' bodies, its records' heads) and parses what it needs
here, never with the peer's code. Each function takes the trace (a dict) and the field's word, and says
whether the wire shows that word's deviation."""
from __future__ import annotations

from cryptography.hazmat.primitives.asymmetric import ec

from tls13 import (ALERT, CCS, CERTIFICATE, CERTIFICATE_REQUEST, ENCRYPTED_EXTENSIONS, EXT_CODES, FINISHED, HANDSHAKE,
                   HRR_RANDOM, NEW_SESSION_TICKET)


def _messages(t: dict, kind: int) -> list[dict]:
    return [m for m in t.get("messages", []) if m["type"] == kind]


def _records(t: dict, phase: str = "", **match) -> list[dict]:
    return [r for r in t.get("records", []) if (not phase or r["phase"] == phase)
            and all(r[k] == v for k, v in match.items())]

def _ext_block(b: bytes) -> list[tuple[int, bytes]]:
    """An extension block (its two-byte length first): (type, body) each."""
    out, at, end = [], 2, 2 + int.from_bytes(b[:2], "big")
    while at + 4 <= min(end, len(b)):
        n = int.from_bytes(b[at + 2:at + 4], "big")
        out.append((int.from_bytes(b[at:at + 2], "big"), b[at + 4:at + 4 + n]))
        at += 4 + n
    return out


def _hellos(t: dict) -> list[dict]:
    """Every ServerHello-type message: legacy_version, random, session id, suite, compression, extensions, and
    the bytes after them; retry says the HelloRetryRequest's random."""
    out = []
    for m in _messages(t, 2):
        b = bytes.fromhex(m["body"])
        sid_len = b[34]
        at = 35 + sid_len
        ext_len = int.from_bytes(b[at + 3:at + 5], "big")
        out.append({"legacy": int.from_bytes(b[:2], "big"), "random": b[2:34], "sid": b[35:at],
                    "suite": int.from_bytes(b[at:at + 2], "big"), "compression": b[at + 2],
                    "exts": _ext_block(b[at + 3:]), "trailing": b[at + 5 + ext_len:], "retry": b[2:34] == HRR_RANDOM})
    return out


def _bodies(exts: list[tuple[int, bytes]], kind: int) -> list[bytes]:
    return [body for t, body in exts if t == kind]


def _sh(t: dict) -> dict:
    return next((h for h in _hellos(t) if not h["retry"]), {"exts": [], "legacy": 0, "random": b"", "sid": b"-",
                                                           "suite": 0, "compression": 0, "trailing": b""})


def _hrr(t: dict) -> dict:
    return next((h for h in _hellos(t) if h["retry"]), None) or {"exts": [(0, b"")], "legacy": 0, "sid": b"-",
                                                                  "suite": 0, "compression": 0}


SH_FORMS = {
    "legacy-version-0304": lambda h: h["legacy"] == 0x0304, "legacy-version-0301": lambda h: h["legacy"] == 0x0301,
    "compression-1": lambda h: h["compression"] == 1,
    "version-0303": lambda h: _bodies(h["exts"], 43) == [b"\x03\x03"],
    "version-0305": lambda h: _bodies(h["exts"], 43) == [b"\x03\x05"],
    "version-7f1c": lambda h: _bodies(h["exts"], 43) == [b"\x7f\x1c"],
    "versions-list": lambda h: _bodies(h["exts"], 43) == [bytes.fromhex("0403040303")],
    "no-supported-versions": lambda h: bool(h["exts"]) and not _bodies(h["exts"], 43),
    "supported-versions-twice": lambda h: len(_bodies(h["exts"], 43)) == 2,
    "no-key-share": lambda h: bool(h["exts"]) and not _bodies(h["exts"], 51),
    "key-share-no-public": lambda h: [len(b) for b in _bodies(h["exts"], 51)] == [2],
    "key-share-twice": lambda h: len(_bodies(h["exts"], 51)) == 2,
    "random-downgrd-tls12": lambda h: h["random"].endswith(b"DOWNGRD\x01"),
    "random-downgrd-tls11": lambda h: h["random"].endswith(b"DOWNGRD\x00"),
    "trailing-bytes": lambda h: h["trailing"] == b"\x00\x00", "session-id-empty": lambda h: h["sid"] == b"",
}

RETRY_FORMS = {
    "no-change": lambda h, s, t: [t for t, _ in h["exts"]] == [43],
    "offered-group": lambda h, s, t: _bodies(h["exts"], 51) == [b"\x00\x1d"],
    "unoffered-group": lambda h, s, t: _bodies(h["exts"], 51) == [b"\x12\x34"],
    "unoffered-suite": lambda h, s, t: h["suite"] == 0x1304,
    "suite-changes": lambda h, s, t: bool(s["suite"]) and s["suite"] != h["suite"],
    "sh-other-group": lambda h, s, t: _bodies(h["exts"], 51) == [b"\x00\x17"]
    and [b[:2] for b in _bodies(s["exts"], 51)] == [b"\x00\x1d"],
    "version-0303": lambda h, s, t: _bodies(h["exts"], 43) == [b"\x03\x03"],
    "no-supported-versions": lambda h, s, t: bool(h["exts"]) and not _bodies(h["exts"], 43),
    "session-id-mismatch": lambda h, s, t: h["sid"].hex() != t.get("session_id") and h["sid"] != b"-",
    "compression-1": lambda h, s, t: h["compression"] == 1,
    "cookie": lambda h, s, t: [len(b) > 2 for b in _bodies(h["exts"], 44)] == [True],
    "cookie-empty": lambda h, s, t: _bodies(h["exts"], 44) == [b"\x00\x00"],
    "unknown-extension": lambda h, s, t: bool(_bodies(h["exts"], 0x7777)),
}


def _server_share(t: dict, v: str) -> bool:
    shares = _bodies(_sh(t)["exts"], 51)
    if len(shares) != 1 or len(shares[0]) < 4:
        return False
    group, public = shares[0][:2], shares[0][4:]
    if v.startswith("x25519"):
        want = {"x25519-short": 31, "x25519-long": 33, "x25519-empty": 0, "x25519-zero": 32}[v]
        return group == b"\x00\x1d" and len(public) == want and (v != "x25519-zero" or public == bytes(32))
    if group != b"\x00\x17":
        return False
    if v == "p256-off-curve":
        try:
            ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), public)
        except ValueError:
            return len(public) == 65 and public[0] == 4
        return False
    return {"p256-compressed": len(public) == 33 and public[0] in (2, 3), "p256-infinity": public == b"\x00",
            "p256-no-prefix": len(public) == 64}[v]


def _ee(t: dict) -> list[tuple[int, bytes]]:
    ee = _messages(t, ENCRYPTED_EXTENSIONS)
    return _ext_block(bytes.fromhex(ee[0]["body"])) if ee else []


def _ee_extension(t: dict, v: str) -> bool:
    exts = _ee(t)
    if v.endswith("-twice"):
        return len(_bodies(exts, EXT_CODES[v[:-len("-twice")]])) == 2
    special = {"server-name-list": lambda: [len(b) > 0 for b in _bodies(exts, 0)] == [True],
               "alpn-two": lambda: _bodies(exts, 16) == [bytes.fromhex("000c") + b"\x02h2\x08http/1.1"],
               "alpn-empty-list": lambda: _bodies(exts, 16) == [b"\x00\x00"],
               "alpn-empty-name": lambda: _bodies(exts, 16) == [b"\x00\x01\x00"]}
    if v in special:
        return special[v]()
    return len(_bodies(exts, EXT_CODES[v])) == 1


def _certificate_form(t: dict, v: str) -> bool:
    cert = _messages(t, CERTIFICATE)
    if not cert:
        return False
    b = bytes.fromhex(cert[0]["body"])
    ctx = b[0]
    list_len = int.from_bytes(b[1 + ctx:4 + ctx], "big")
    at = 4 + ctx
    leaf_len = int.from_bytes(b[at:at + 3], "big")
    leaf = b[at + 3:at + 3 + leaf_len]
    entry_exts = [t for t, _ in _ext_block(b[at + 3 + leaf_len:])] if list_len else []
    return {"empty-list": ctx == 0 and list_len == 0, "request-context": ctx == 1,
            "not-der": leaf.startswith(b"this is not"), "entry-extension": 0x7777 in entry_exts,
            "entry-sct": 18 in entry_exts, "trailing-bytes": len(b) == 4 + ctx + list_len + 2}[v]


def _cv_form(t: dict, v: str) -> bool:
    cv = t.get("cv") or {}
    if not cv:
        return False
    sig = bytes.fromhex(cv["signature"])
    return {"unknown-scheme": cv["scheme"] == 0x7777, "rsa-pkcs1": cv["scheme"] == 0x0401,
            "ecdsa-sha1": cv["scheme"] == 0x0203 and cv["context"] == "server",
            "ecdsa-p384": cv["scheme"] == 0x0503 and cv["context"] == "server",
            "rsa-pss-label": cv["scheme"] == 0x0804 and cv["context"] == "",
            "client-context": cv["context"] == "client", "no-prefix": cv["context"] == "no-prefix",
            "truncated": cv["context"] == "" and len(sig) > 2 and sig[1] == len(sig) - 1,
            "empty": cv["scheme"] == 0x0403 and not sig, "trailing-bytes": cv["trailing"] == 1}[v]


def _finished_form(t: dict, v: str) -> bool:
    fin = _messages(t, FINISHED)
    return bool(fin) and ({"short": fin[0]["length"] == 31, "long": fin[0]["length"] == 33,
                           "empty": fin[0]["length"] == 0, "zero": fin[0]["body"] == "00" * 32}[v])


FLIGHTS = {"no-encrypted-extensions": [2, 11, 15, 20], "no-certificate": [2, 8, 15, 20],
           "no-certificate-verify": [2, 8, 11, 20], "encrypted-extensions-twice": [2, 8, 8, 11, 15, 20],
           "certificate-twice": [2, 8, 11, 11, 15, 20],
           "certificate-verify-first": [2, 8, 15, 11, 20], "server-hello": [2, 8, 2, 11, 15, 20],
           "key-update": [2, 8, 11, 15, 24, 20], "new-session-ticket": [2, 8, 11, 15, 4, 20],
           "hello-request": [2, 8, 0, 11, 15, 20], "end-of-early-data": [2, 8, 5, 11, 15, 20],
           "certificate-request-late": [2, 8, 11, 13, 15, 20], "server-hello-done": [2, 8, 11, 15, 14, 20],
           "unknown-message": [2, 8, 99, 11, 15, 20]}


INJECTED_SH = {
    "ccs-twice": lambda t: len(_records(t, "handshake", outer_type=CCS)) == 2,
    "ccs-02": lambda t: bool(_records(t, "handshake", outer_type=CCS, head="02")),
    "ccs-empty": lambda t: bool(_records(t, "handshake", outer_type=CCS, plain=0)),
    "ccs-long": lambda t: bool(_records(t, "handshake", outer_type=CCS, head="0101")),
    "ccs-protected": lambda t: bool(_records(t, "handshake", decrypted=True, inner_type=CCS)),
    "handshake-plaintext": lambda t: bool(_records(t, "handshake", outer_type=HANDSHAKE, head="080000020000")),
    "handshake-empty": lambda t: bool(_records(t, "handshake", decrypted=True, inner_type=HANDSHAKE, plain=0)),
    "appdata": lambda t: bool(_records(t, "handshake", decrypted=True, inner_type=23)),
}

AFTER_ALERTS = {"alert-empty": "", "alert-short": "01", "alert-long": "010000", "alert-level-3": "0300",
                "alert-unknown": "01ff", "alert-bad-certificate": "012a", "alert-handshake-failure": "0128",
                "alert-decode-error": "0132", "alert-close-notify-fatal": "0200"}
AFTER_MESSAGES = {"server-hello": "02", "encrypted-extensions": "08000002", "certificate": "0b", "certificate-verify": "0f",
                  "finished": "14000020", "hello-request": "00000000", "end-of-early-data": "05000000", "client-hello": "01",
                  "unknown-message": "63000004", "key-update-long": "180000020000", "key-update-empty": "18000000"}


def _injected_after(t: dict, v: str) -> bool:
    after = _records(t, "after")
    if v in AFTER_ALERTS:
        return any(r["decrypted"] and r["inner_type"] == ALERT and r["head"] == AFTER_ALERTS[v] for r in after)
    if v in AFTER_MESSAGES:
        return any(r["decrypted"] and r["inner_type"] == HANDSHAKE and r["head"].startswith(AFTER_MESSAGES[v])
                   for r in after)
    return {"alert-split": lambda: [r["head"] for r in after if r["inner_type"] == ALERT] == ["01", "00"],
            "alert-plaintext": lambda: any(r["outer_type"] == ALERT and r["head"] == "0100" for r in after),
            "handshake-empty": lambda: any(r["inner_type"] == HANDSHAKE and r["plain"] == 0 for r in after),
            "handshake-plaintext": lambda: any(r["outer_type"] == HANDSHAKE and r["head"].startswith("04") for r in after),
            "appdata-plaintext": lambda: any(r["undecryptable"] and r["head"] == b"HTTP/1.1 200 OK\r\n"[:16].hex()
                                             for r in after)}[v]()


def _response_record(t: dict, v: str) -> bool:
    after = [r for r in t.get("records", []) if r["phase"] not in ("hello", "handshake")]
    if v in ("outer-handshake", "outer-alert"):
        return any(r["outer_type"] == (HANDSHAKE if v == "outer-handshake" else ALERT) and r["length"] > 16 for r in after)
    return any(r["undecryptable"] and r["fails_as"] == v for r in after)


def _ticket_form(t: dict, v: str) -> bool:
    for m in _messages(t, NEW_SESSION_TICKET):
        b = bytes.fromhex(m["body"])
        nonce = b[8]
        at = 9 + nonce
        ticket = int.from_bytes(b[at:at + 2], "big")
        exts = _ext_block(b[at + 2 + ticket:]) if len(b) > at else []
        if {"lifetime-over-week": int.from_bytes(b[:4], "big") == 604801, "lifetime-zero": b[:4] == bytes(4),
            "empty-ticket": len(b) > at and ticket == 0, "truncated": len(b) == at,
            "early-data": [len(x) for x in _bodies(exts, 42)] == [4],
            "early-data-short": [len(x) for x in _bodies(exts, 42)] == [2],
            "early-data-twice": len(_bodies(exts, 42)) == 2, "server-name": bool(_bodies(exts, 0))}[v]:
            return True
    return False


def _certificate_request(t: dict, v: str) -> bool:
    cr = [m for m in _messages(t, CERTIFICATE_REQUEST) if t["records"][m["records"][0]]["phase"] == "handshake"]
    if not cr:
        return False
    b = bytes.fromhex(cr[0]["body"])
    types = [t for t, _ in _ext_block(b[1 + b[0]:])]
    return {"plain": b[0] == 0 and types == [13], "context": b[0] == 1, "no-signature-algorithms": types == [],
            "unknown-extension": 0x7777 in types and 13 in types}[v]




def sh_form(t: dict, v: str) -> bool:
    return SH_FORMS[v](_sh(t))


def sh_extension(t: dict, v: str) -> bool:
    return bool(_bodies(_sh(t)["exts"], EXT_CODES[v]))


def retry_form(t: dict, v: str) -> bool:
    return t.get("hello_retries") == 1 and RETRY_FORMS[v](_hrr(t), _sh(t), t)


def flight_order(t: dict, v: str) -> bool:
    types = [m["type"] for m in t.get("messages", [])]
    if v == "finished-before-certificate-verify":  # the reader takes the Finished as the end and turns to the
        return types == [2, 8, 11, 20] and any(    # application keys: the CertificateVerify after it opens under
            r["fails_as"] == "handshake-keys" for r in _records(t, "after"))  # the handshake keys only
    return types == FLIGHTS[v]


def inject_after_server_hello(t: dict, v: str) -> bool:
    return INJECTED_SH[v](t)


server_share, ee_extension, certificate_form, cv_form = _server_share, _ee_extension, _certificate_form, _cv_form
finished_form, inject_after_handshake, response_record = _finished_form, _injected_after, _response_record
ticket_form, certificate_request = _ticket_form, _certificate_request
