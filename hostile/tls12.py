"""TLS 1.2 pieces for the hostile peer's 1.2 rows: the PRF (RFC 5246 section 5), the master secret
(RFC 5246 8.1, or RFC 7627's extended one) and AES-128-GCM record protection (RFC 5288), for
ECDHE-ECDSA-AES128-GCM-SHA256 only."""
from __future__ import annotations

import hashlib
import hmac
import struct

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

ECDHE_ECDSA_AES128_GCM = 0xC02B


def prf(secret: bytes, label: bytes, seed: bytes, length: int) -> bytes:
    """P_SHA256(secret, label + seed), LENGTH bytes."""
    seed, out, a = label + seed, b"", label + seed
    while len(out) < length:
        a = hmac.new(secret, a, hashlib.sha256).digest()
        out += hmac.new(secret, a + seed, hashlib.sha256).digest()
    return out[:length]


class Keys:
    """One handshake's keys: the master secret and both directions' key and salt."""

    def __init__(self, pre_master: bytes, client_random: bytes, server_random: bytes, session_hash: bytes = b""):
        """SESSION_HASH given: the extended master secret (RFC 7627 section 4), else RFC 5246 8.1's."""
        self.master = (prf(pre_master, b"extended master secret", session_hash, 48) if session_hash else
                       prf(pre_master, b"master secret", client_random + server_random, 48))
        block = prf(self.master, b"key expansion", server_random + client_random, 40)
        self.client_key, self.server_key = block[0:16], block[16:32]
        self.client_salt, self.server_salt = block[32:36], block[36:40]

    def verify_data(self, label: bytes, transcript: bytes) -> bytes:
        return prf(self.master, label, hashlib.sha256(transcript).digest(), 12)


class Protection12:
    """One direction's AES-128-GCM state: explicit nonce = the sequence number."""

    def __init__(self, key: bytes, salt: bytes):
        self.aead, self.salt, self.seq = AESGCM(key), salt, 0

    def seal(self, content_type: int, data: bytes, version: int = 0x0303, **_) -> bytes:
        """One record of DATA; VERSION is its header's (and its additional data's)."""
        explicit = self.seq.to_bytes(8, "big")
        aad = explicit + struct.pack(">BHH", content_type, version, len(data))
        body = explicit + self.aead.encrypt(self.salt + explicit, data, aad)
        self.seq += 1
        return struct.pack(">BHH", content_type, version, len(body)) + body

    def open(self, header: bytes, body: bytes) -> tuple[int, bytes]:
        explicit, sealed = body[:8], body[8:]
        aad = self.seq.to_bytes(8, "big") + header[:3] + struct.pack(">H", len(sealed) - 16)
        data = self.aead.decrypt(self.salt + explicit, sealed, aad)
        self.seq += 1
        return header[0], data
