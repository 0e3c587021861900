"""TLS 1.3 pieces for the hostile peer, on python3-cryptography's primitives: record protection,
the key schedule (RFC 8446 section 7), handshake message framing, the ClientHello parser.

Only what a server of SHA-256 suites needs: TLS_AES_128_GCM_SHA256 and
TLS_CHACHA20_POLY1305_SHA256, X25519 and P-256 key shares, ECDSA P-256 and RSA-PSS signatures.
Nothing here misbehaves: the deviations live in peer.py's scenarios.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import struct
from dataclasses import dataclass, field
from typing import Optional

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa, x25519
from cryptography.hazmat.primitives.ciphers.aead import AESGCM, ChaCha20Poly1305

# Record content types and handshake message types (RFC 8446 sections 5.1 and 4).
CCS, ALERT, HANDSHAKE, APPDATA = 20, 21, 22, 23
HELLO_REQUEST, CLIENT_HELLO, SERVER_HELLO, NEW_SESSION_TICKET = 0, 1, 2, 4
ENCRYPTED_EXTENSIONS, CERTIFICATE, SERVER_KEY_EXCHANGE, CERTIFICATE_REQUEST = 8, 11, 12, 13
SERVER_HELLO_DONE, CERTIFICATE_VERIFY, CLIENT_KEY_EXCHANGE, FINISHED, KEY_UPDATE = 14, 15, 16, 20, 24
MESSAGE_NAMES = {0: "HelloRequest", 1: "ClientHello", 2: "ServerHello", 4: "NewSessionTicket",
                 8: "EncryptedExtensions", 11: "Certificate", 12: "ServerKeyExchange", 13: "CertificateRequest",
                 14: "ServerHelloDone", 15: "CertificateVerify", 16: "ClientKeyExchange", 20: "Finished",
                 24: "KeyUpdate"}
ALERT_NAMES = {0: "close_notify", 10: "unexpected_message", 20: "bad_record_mac", 22: "record_overflow",
               40: "handshake_failure", 42: "bad_certificate", 47: "illegal_parameter", 50: "decode_error",
               51: "decrypt_error", 70: "protocol_version", 80: "internal_error", 86: "inappropriate_fallback",
               90: "user_canceled", 100: "no_renegotiation", 109: "missing_extension", 110: "unsupported_extension",
               43: "unsupported_certificate", 46: "certificate_unknown", 48: "unknown_ca", 112: "unrecognized_name",
               116: "certificate_required", 120: "no_application_protocol"}

# Extensions and code points.
EXT_SERVER_NAME, EXT_STATUS_REQUEST, EXT_GROUPS, EXT_SIG_ALGS, EXT_ALPN = 0, 5, 10, 13, 16
EXT_SUPPORTED_VERSIONS, EXT_KEY_SHARE, EXT_RENEGOTIATION_INFO = 43, 51, 0xFF01
EXT_COOKIE, EXT_EARLY_DATA = 44, 42
# Every extension by the name the catalogue's words use (RFC 8446 4.2's table and the older ones)
EXT_CODES = {"server-name": 0, "max-fragment-length": 1, "status-request": 5, "supported-groups": 10,
             "ec-point-formats": 11, "signature-algorithms": 13, "heartbeat": 15, "alpn": 16, "sct": 18,
             "padding": 21, "encrypt-then-mac": 22, "extended-master-secret": 23, "record-size-limit": 28,
             "session-ticket": 35, "pre-shared-key": 41, "early-data": 42, "supported-versions": 43, "cookie": 44,
             "psk-key-exchange-modes": 45, "certificate-authorities": 47, "oid-filters": 48,
             "post-handshake-auth": 49, "signature-algorithms-cert": 50, "key-share": 51,
             "renegotiation-info": 0xFF01, "unknown": 0x7777}
X25519, SECP256R1, SECP384R1 = 0x001D, 0x0017, 0x0018
ECDSA_SHA256, RSA_PSS_SHA256 = 0x0403, 0x0804
TLS12, TLS13 = 0x0303, 0x0304
AES_128_GCM, CHACHA20 = 0x1301, 0x1303
SUITES = {AES_128_GCM: (AESGCM, 16), CHACHA20: (ChaCha20Poly1305, 32)}
HRR_RANDOM = bytes.fromhex("CF21AD74E59A6111BE1D8C021E65B891C2A211167ABB8C5E079E09E2C8A8339C")
EMPTY_HASH = hashlib.sha256(b"").digest()


def u8(b: bytes) -> bytes:
    return bytes([len(b)]) + b


def u16(b: bytes) -> bytes:
    return struct.pack(">H", len(b)) + b


def u24(b: bytes) -> bytes:
    return struct.pack(">I", len(b))[1:] + b


def extension(kind: int, body: bytes) -> bytes:
    return struct.pack(">H", kind) + u16(body)


def message(kind: int, body: bytes) -> bytes:
    """One handshake message: type, 24-bit length, body."""
    return bytes([kind]) + u24(body)


def record(content_type: int, payload: bytes, version: int = TLS12) -> bytes:
    return struct.pack(">BHH", content_type, version, len(payload)) + payload


def alert(description: int, level: int = 2) -> bytes:
    return bytes([level, description])


# --- the key schedule (RFC 8446 section 7.1) -----------------------------------------------------

def hkdf_extract(salt: bytes, ikm: bytes) -> bytes:
    return hmac.new(salt, ikm, hashlib.sha256).digest()


def expand_label(secret: bytes, label: bytes, context: bytes, length: int) -> bytes:
    full = b"tls13 " + label
    info = struct.pack(">H", length) + u8(full) + u8(context)
    out, block, i = b"", b"", 1
    while len(out) < length:
        block = hmac.new(secret, block + info + bytes([i]), hashlib.sha256).digest()
        out, i = out + block, i + 1
    return out[:length]


def derive(secret: bytes, label: bytes, transcript_hash: bytes) -> bytes:
    return expand_label(secret, label, transcript_hash, 32)


@dataclass
class Schedule:
    """Early secret (no PSK) -> handshake secret -> master secret."""
    handshake_secret: bytes = b""

    def handshake(self, shared: bytes, transcript_hash: bytes) -> tuple[bytes, bytes]:
        early = hkdf_extract(b"\0" * 32, b"\0" * 32)
        self.handshake_secret = hkdf_extract(derive(early, b"derived", EMPTY_HASH), shared)
        return (derive(self.handshake_secret, b"c hs traffic", transcript_hash),
                derive(self.handshake_secret, b"s hs traffic", transcript_hash))

    def application(self, transcript_hash: bytes) -> tuple[bytes, bytes]:
        master = hkdf_extract(derive(self.handshake_secret, b"derived", EMPTY_HASH), b"\0" * 32)
        return derive(master, b"c ap traffic", transcript_hash), derive(master, b"s ap traffic", transcript_hash)


def finished_mac(base_secret: bytes, transcript_hash: bytes) -> bytes:
    return hmac.new(expand_label(base_secret, b"finished", b"", 32), transcript_hash, hashlib.sha256).digest()


# --- record protection (RFC 8446 section 5.2) ------------------------------------------------------

class Protection:
    """One direction's AEAD state: the traffic secret, its key and IV, the sequence number."""

    def __init__(self, suite: int, secret: bytes):
        self.suite = suite
        self.set_secret(secret)

    def set_secret(self, secret: bytes) -> None:
        aead, key_len = SUITES[self.suite]
        self.secret, self.seq = secret, 0
        self.aead = aead(expand_label(secret, b"key", b"", key_len))
        self.iv = expand_label(secret, b"iv", b"", 12)

    def update(self) -> None:
        """KeyUpdate: the next generation of this direction's secret."""
        self.set_secret(expand_label(self.secret, b"traffic upd", b"", 32))

    def nonce(self) -> bytes:
        n = bytes(a ^ b for a, b in zip(self.iv, self.seq.to_bytes(12, "big")))
        self.seq += 1
        return n

    def seal(self, content_type: int, data: bytes, pad: int = 0, outer: int = APPDATA,
             version: int = TLS12, extra_ciphertext: int = 0) -> bytes:
        """One protected record. EXTRA_CIPHERTEXT bytes of junk after the tag make the record
        longer than its AEAD output (a ciphertext-length row); the content type byte is TYPE."""
        inner = data + bytes([content_type]) + b"\0" * pad
        header = struct.pack(">BHH", outer, version, len(inner) + 16 + extra_ciphertext)
        return header + self.aead.encrypt(self.nonce(), inner, header) + b"\0" * extra_ciphertext

    def open(self, header: bytes, body: bytes) -> tuple[int, bytes]:
        inner = self.aead.decrypt(self.nonce(), body, header).rstrip(b"\0")
        if not inner:
            raise ValueError("inner plaintext with no content type")
        return inner[-1], inner[:-1]


# --- the ClientHello ------------------------------------------------------------------------------

@dataclass
class ClientHello:
    raw: bytes
    session_id: bytes = b""
    suites: list[int] = field(default_factory=list)
    versions: list[int] = field(default_factory=list)
    groups: list[int] = field(default_factory=list)
    shares: dict[int, bytes] = field(default_factory=dict)
    sig_algs: list[int] = field(default_factory=list)
    extensions: list[int] = field(default_factory=list)
    client_random: bytes = b""
    renegotiation_info: Optional[bytes] = None
    bodies: dict[int, bytes] = field(default_factory=dict)  # each extension's body, by type


def parse_client_hello(msg: bytes) -> ClientHello:
    """MSG is the whole handshake message (header included). ValueError when malformed."""
    ch, b = ClientHello(raw=msg), memoryview(msg)[4:]
    ch.client_random = bytes(b[2:34])
    at = 34
    sid_len = b[at]
    ch.session_id = bytes(b[at + 1:at + 1 + sid_len])
    at += 1 + sid_len
    n = struct.unpack(">H", b[at:at + 2])[0]
    ch.suites = [struct.unpack(">H", b[at + 2 + i:at + 4 + i])[0] for i in range(0, n, 2)]
    at += 2 + n
    at += 1 + b[at]  # compression methods
    end = at + 2 + struct.unpack(">H", b[at:at + 2])[0]
    at += 2
    while at < end:
        kind, length = struct.unpack(">HH", b[at:at + 4])
        body = bytes(b[at + 4:at + 4 + length])
        ch.extensions.append(kind)
        ch.bodies[kind] = body
        read_extension(ch, kind, body)
        at += 4 + length
    return ch


def u16_list(body: bytes) -> list[int]:
    return [struct.unpack(">H", body[i:i + 2])[0] for i in range(0, len(body) - 1, 2)]


def read_extension(ch: ClientHello, kind: int, body: bytes) -> None:
    if kind == EXT_SUPPORTED_VERSIONS:
        ch.versions = u16_list(body[1:])
    elif kind == EXT_GROUPS:
        ch.groups = u16_list(body[2:])
    elif kind == EXT_SIG_ALGS:
        ch.sig_algs = u16_list(body[2:])
    elif kind == EXT_RENEGOTIATION_INFO:
        ch.renegotiation_info = body[1:]
    elif kind == EXT_KEY_SHARE:
        at = 2
        while at + 4 <= len(body):
            group, length = struct.unpack(">HH", body[at:at + 4])
            ch.shares[group] = body[at + 4:at + 4 + length]
            at += 4 + length


# --- key exchange and signatures --------------------------------------------------------------------

def key_share(group: int, peer: bytes) -> tuple[bytes, bytes]:
    """(our public key share, the shared secret) for GROUP against the client's share PEER."""
    if group == X25519:
        mine, public = x25519_pair()
        return public, x25519_shared(mine, peer)
    mine = ec.generate_private_key(ec.SECP256R1())
    shared = mine.exchange(ec.ECDH(), ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), peer))
    return mine.public_key().public_bytes(serialization.Encoding.X962,
                                          serialization.PublicFormat.UncompressedPoint), shared


def x25519_pair() -> tuple[x25519.X25519PrivateKey, bytes]:
    mine = x25519.X25519PrivateKey.generate()
    return mine, mine.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def x25519_shared(mine: x25519.X25519PrivateKey, peer: bytes) -> bytes:
    return mine.exchange(x25519.X25519PublicKey.from_public_bytes(peer))


def load_key(path: str):
    with open(path, "rb") as f:
        return serialization.load_pem_private_key(f.read(), password=None)


def load_chain(path: str) -> list[bytes]:
    """The DER certificates of a PEM file, in order (base64 by hand: cryptography.x509 costs a
    tenth of a second to import, paid by every row)."""
    with open(path) as f:
        blocks = f.read().split("-----BEGIN CERTIFICATE-----")[1:]
    return [base64.b64decode(b.split("-----END CERTIFICATE-----")[0]) for b in blocks]


def scheme_of(key) -> int:
    return RSA_PSS_SHA256 if isinstance(key, rsa.RSAPrivateKey) else ECDSA_SHA256


def sign(key, content: bytes) -> bytes:
    if isinstance(key, rsa.RSAPrivateKey):
        return key.sign(content, padding.PSS(padding.MGF1(hashes.SHA256()), 32), hashes.SHA256())
    return key.sign(content, ec.ECDSA(hashes.SHA256()))


def certificate_verify_input(transcript_hash: bytes) -> bytes:
    return b" " * 64 + b"TLS 1.3, server CertificateVerify\0" + transcript_hash


def sign_as(key, content: bytes, scheme: int) -> bytes:
    """CONTENT signed by KEY the way SCHEME says (hash, and PSS or PKCS#1 v1.5 for RSA), whatever the key's
    curve: the catalogue's CertificateVerify forms (a P-256 key signing as ecdsa_secp384r1_sha384)."""
    digest = {0x0201: hashes.SHA1(), 0x0203: hashes.SHA1(), 0x0401: hashes.SHA256(), 0x0403: hashes.SHA256(),
              0x0503: hashes.SHA384(), 0x0804: hashes.SHA256()}.get(scheme, hashes.SHA256())
    if isinstance(key, rsa.RSAPrivateKey):
        if scheme in (0x0201, 0x0401):
            return key.sign(content, padding.PKCS1v15(), digest)
        return key.sign(content, padding.PSS(padding.MGF1(digest), digest.digest_size), digest)
    return key.sign(content, ec.ECDSA(digest))
