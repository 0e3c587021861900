"""The hostile peer's bugs: every way it may break or stretch the protocol, one typed, documented
field each (BoringSSL runner's ProtocolBugs, as data). A scenario (scenarios.py) is a named
combination of these fields; peer.py implements each field once, and each time a field acts it
counts one in the REPORT's `fired` table under the field's name, so a row can hold that the
scenario happened (`server.fired[app_padding]=2`) beside the client's outcome.

Data only: hostile_gate.py and the README's table read it without the peer's TLS code.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional


@dataclass(frozen=True)
class Bug:
    """One field: its type, its default (the correct server's), when it acts and what it sends."""
    name: str
    type: type
    default: Any
    does: str
    choices: tuple[str, ...] = ()  # a word field's words

    def check(self, value: Any) -> Optional[str]:
        """Why VALUE cannot be this field's, or None."""
        if self.type is bool:
            return None if isinstance(value, bool) else f"{self.name} takes true or false, not {value!r}"
        if self.type is int:
            ok = isinstance(value, int) and not isinstance(value, bool) and value >= 0
            return None if ok else f"{self.name} takes a count or a code (an integer >= 0), not {value!r}"
        if self.choices and value not in self.choices:
            return f"{self.name} takes one of {', '.join(self.choices)}, not {value!r}"
        return None if isinstance(value, str) and value else f"{self.name} takes a word, not {value!r}"


# The `staple` field's words and the staples they send (RFC 6960 4.2.1's OCSPResponse, by hand): each
# one way a staple is not a basic response a client can verify. peer.py's --staple FILE staples a real one.
STAPLES = {
    "not-der": b"this is not an OCSP response",
    "one-byte": b"\x30",                                             # a SEQUENCE's tag, no length
    "try-later": bytes.fromhex("3003" "0a0103"),                     # responseStatus tryLater, no bytes
    "not-basic": bytes.fromhex("3016" "0a0100" "a011" "300f"         # successful, responseBytes:
                               "06092b0601050507300102" "04023000"),  # id-pkix-ocsp-nonce, OCTET STRING
}

# The alert_before_response field's words: the alert it sends, at warning level.
WARNINGS = {"unrecognized_name": 112, "user_canceled": 90}



def _bug(name: str, kind: type, does: str, *choices: str) -> Bug:
    return Bug(name, kind, kind(), does, choices)


# Where a field acts, in the connection's order: the ServerHello, the server's flight, between
# the handshake and the response, the response, after it. A TLS 1.2 field acts only in a scenario
# of version 1.2 (scenarios.py).
BUGS: dict[str, Bug] = {b.name: b for b in (
    # --- the ServerHello and HelloRetryRequest (TLS 1.3) ---
    _bug("retry_group", str, "a HelloRetryRequest for this group (`p256`) when the first ClientHello has no share in it; "
         "counts the HelloRetryRequests sent", "p256"),
    _bug("retry_twice", bool, "a second HelloRetryRequest after the retried ClientHello, then nothing (the client must abort)"),
    _bug("server_share_group", int, "the ServerHello's key share names this group (0x1234) with 32 random bytes, "
         "then the peer waits for the client's alert"),
    _bug("server_suite", int, "the ServerHello chooses this cipher suite (0x1304), whatever the client offered"),
    _bug("session_id_mismatch", bool, "the ServerHello's legacy_session_id_echo is 32 bytes of 0x01, not the client's"),
    # --- the server's flight ---
    _bug("handshake_fragment", int, "every handshake message split into records of this many bytes (1), the "
         "ServerHello included; counts the messages split"),
    _bug("pack_flight", bool, "EncryptedExtensions, Certificate, CertificateVerify and Finished in one record"),
    _bug("chain_padding_kib", int, "the CA certificate repeated after the leaf until the chain grows this many KiB (60), "
         "the Certificate message split over 2^14-byte records"),
    _bug("ccs_before_encrypted_extensions", bool, "a ChangeCipherSpec record between the ServerHello and the "
         "encrypted flight (RFC 8446 D.4's middlebox compatibility)"),
    _bug("ee_duplicate_server_name", bool, "EncryptedExtensions carries an empty server_name extension twice"),
    _bug("ee_unsolicited_alpn", str, "EncryptedExtensions carries ALPN naming this protocol (`h2`), never offered"),
    _bug("cv_skip_certificate", bool, "the CertificateVerify signs a transcript without the Certificate message"),
    _bug("finished_flip_bit", bool, "the server Finished's first byte has its low bit flipped"),
    _bug("alert_inside_certificate", bool, "a warning alert (unrecognized_name) record between two halves of the "
         "Certificate message"),
    _bug("staple", str, "the leaf's OCSP staple, when the client asks for one, is this malformed response: "
         "`not-der` (28 bytes of text), `one-byte` (0x30), `try-later` (status 3, no bytes), `not-basic` "
         "(responseBytes of a nonce OID)", *STAPLES),
    # --- after the handshake, before the response ---
    _bug("rst_after_finished", bool, "the handshake to the client's Finished, then RST"),
    _bug("ccs_after_handshake", bool, "a ChangeCipherSpec record after the handshake"),
    _bug("keyupdates_before_response", int, "this many KeyUpdates (update_not_requested) in one write"),
    _bug("keyupdate_value", int, "a KeyUpdate whose request_update is this value (2: neither of the two legal ones)"),
    _bug("tickets_before_response", int, "this many NewSessionTickets in one write"),
    _bug("ticket_kib", int, "one NewSessionTicket whose ticket is this many KiB (60), over 2^14-byte records"),
    _bug("ticket_extension", int, "one NewSessionTicket carrying an empty extension of this type (0x7777)"),
    _bug("post_certificate_request", bool, "a post-handshake CertificateRequest (the client offered no "
         "post_handshake_auth)"),
    _bug("alert_before_response", str, "a warning-level alert of this name (`unrecognized_name`, `user_canceled`)",
         *WARNINGS),
    _bug("empty_records_before_response", int, "this many protected application records of zero bytes"),
    _bug("outer_type_before_response", int, "an unprotected record of this content type (99), 20 zero bytes"),
    _bug("inner_type_before_response", int, "a protected record whose inner content type is this (99)"),
    _bug("padding_only_record", bool, "a protected record of 20 zero bytes: padding with no inner content type"),
    _bug("record_overflow", str, "one application record past the limit: `plaintext` (2^14+1 bytes) or "
         "`ciphertext` (2^14 bytes and junk after the tag: 2^14+256+1 on the wire)", "plaintext", "ciphertext"),
    # --- the response ---
    _bug("app_record_size", int, "the response in application records of at most this many bytes (1; 0: 2^14)"),
    _bug("app_padding", int, "every response record padded with this many zero bytes (legal in TLS 1.3); counts the "
         "records padded"),
    _bug("response_record_version", int, "every response record's legacy_record_version is this (0x0301)"),
    _bug("ticket_between_records", bool, "a NewSessionTicket after every record of the response"),
    _bug("keyupdate_mid_response", bool, "half the response, a KeyUpdate with update_requested, the rest under the "
         "new keys; the client's next data must follow its own KeyUpdate (RFC 8446 4.6.3)"),
    _bug("close_notify_mid_response", bool, "half the response, close_notify, then the rest; the connection ends"),
    _bug("fatal_alert_mid_response", bool, "half the response, then a fatal internal_error alert"),
    _bug("fin_mid_record", bool, "half the response, then the first 20 bytes of the next record, then FIN"),
    _bug("renegotiate_mid_response", bool, "TLS 1.2: half the response, a HelloRequest, a whole new handshake once "
         "the client's ClientHello came (written from inside its read), then the rest; counts HelloRequests sent"),
    # --- after the response ---
    _bug("close_notify_then_data", bool, "the whole response, close_notify and another application record, one write"),
    _bug("fatal_alert_after_response", bool, "the whole response, then a fatal internal_error alert"),
    _bug("rst_after_request", bool, "the client's request read, then RST instead of a response"),
    # --- TLS 1.2 only ---
    _bug("downgrade_sentinel", bool, "TLS 1.2: the ServerHello random ends DOWNGRD\\x01 (RFC 8446 4.1.3), then the "
         "peer waits for the client's alert"),
    _bug("renegotiation_info_mismatch", bool, "TLS 1.2: a renegotiation's ServerHello carries a renegotiation_info "
         "of zeros for the server's verify_data (RFC 5746 3.5)"),
    _bug("omit_renegotiation_info", bool, "TLS 1.2: no renegotiation_info in the ServerHello (a legacy server, "
         "RFC 5746 3.4)"),
    _bug("renegotiate_mid_request", bool, "TLS 1.2: a HelloRequest once the request's first record is in and more of "
         "it waits unread (up to 2 s), then 300 ms of reading nothing, the body taken wherever its records fall"),
    # the TLS 1.2 catalogue (RFC 5246, 5746, 7627, 8422, 6066, 7301, 7366, 8449; RFC 8446 4.1.3 for a 1.2
    # ServerHello): one word field a message, each word one way that message breaks or stretches its clause
    _bug("sh12", str, "TLS 1.2: the ServerHello's own fields: `version-0302`, `version-0300`, `version-0304` "
         "(server_version, no supported_versions), `session-id-33` (a session id of 33 bytes), "
         "`compression-deflate` (compression method 1), `suite-unoffered` (the first of 0x0005, 0x000A, 0x1234 "
         "the client did not offer), `sentinel-tls11` (random ends DOWNGRD\\x00), `sentinel-tls12` (random "
         "ends DOWNGRD\\x01: legal to a client that offered at most 1.2); the rest of the flight as ever",
         *("version-0302 version-0300 version-0304 session-id-33 compression-deflate suite-unoffered "
           "sentinel-tls11 sentinel-tls12").split()),
    _bug("sh12_extension", str, "TLS 1.2: the ServerHello's extensions, whatever the client offered: "
         "`unknown-7777` (an empty extension of type 0x7777), `alpn-two` (ALPN naming h2 and http/1.1), "
         "`alpn-unoffered` (ALPN naming spdy/1), `alpn-empty` (an empty ProtocolNameList), `status-request` "
         "(status_request), `max-fragment-length` (max_fragment_length 2^9), `record-size-limit-63` "
         "(record_size_limit 63), `encrypt-then-mac` (encrypt_then_mac with an AEAD suite), `ems-with-body` "
         "(extended_master_secret holding one byte), `sni-ack` (an empty server_name: legal once SNI was "
         "sent), `sni-with-body` (server_name holding a name), `duplicate-ec-point-formats`, "
         "`duplicate-renegotiation-info` (the extension twice), `ec-point-formats-compressed-only` "
         "(ec_point_formats without uncompressed), `renegotiation-info-nonempty` (12 bytes on the first "
         "handshake), `renegotiation-info-bad-length` (an inner length of 5 with no bytes), "
         "`extensions-trailing-byte` (a zero byte after the last extension, inside the block)", 
         *("unknown-7777 alpn-two alpn-unoffered alpn-empty status-request max-fragment-length "
           "record-size-limit-63 encrypt-then-mac ems-with-body sni-ack sni-with-body duplicate-ec-point-formats "
           "duplicate-renegotiation-info ec-point-formats-compressed-only renegotiation-info-nonempty "
           "renegotiation-info-bad-length extensions-trailing-byte").split()),
    _bug("cert12", str, "TLS 1.2: the server's Certificate: `empty-list` (no certificate), `list-length-over` "
         "(certificate_list's length 3 past the message), `entry-length-over` (the leaf's length past the list), "
         "`trailing-byte` (a byte after the list), `rsa-leaf` (leaf-rsa's chain under an ECDHE-ECDSA suite)",
         *("empty-list list-length-over entry-length-over trailing-byte rsa-leaf").split()),
    _bug("ske12", str, "TLS 1.2: the ServerKeyExchange: `bad-signature` (the last byte of its signature "
         "flipped), `scheme-not-offered` (ecdsa_sha1, 0x0203, a real SHA-1 signature), "
         "`scheme-key-mismatch` (rsa_pss_rsae_sha256 over an ECDSA signature), `curve-not-offered` "
         "(secp256k1, 0x0016, 65 random bytes), `x25519-all-zero` (a share of 32 zero bytes), `x25519-short` "
         "(31 bytes), `explicit-prime` (curve_type explicit_prime), `p256` (a real P-256 share: legal once "
         "offered), `p256-off-curve` (a P-256 point whose y is off the curve), `p256-compressed` (a compressed "
         "P-256 point), `missing` (none sent), `twice` (sent twice), `trailing-byte` (a byte after the "
         "signature)", 
         *("bad-signature scheme-not-offered scheme-key-mismatch curve-not-offered x25519-all-zero "
           "x25519-short explicit-prime p256 p256-off-curve p256-compressed missing twice trailing-byte").split()),
    _bug("flight12", str, "TLS 1.2: the server's first flight: `done-with-body` (ServerHelloDone of one byte), "
         "`no-certificate` (Certificate left out), `server-hello-twice`, `certificate-status-unasked` (a "
         "CertificateStatus after the Certificate, unasked), `hello-request-mid-flight` (a HelloRequest "
         "between Certificate and ServerKeyExchange, out of the transcript: legal), "
         "`hello-request-body-mid-flight` (the same with a one-byte body), `certificate-request` (a "
         "CertificateRequest: legal, an empty client Certificate answers it), `one-byte-fragments` (every "
         "plaintext handshake record of one byte: legal), `coalesced` (ServerHello to ServerHelloDone in one "
         "record: legal), `empty-handshake-record` (a zero-length handshake record after the ServerHello), "
         "`unknown-message-type` (an empty handshake message of type 99 after the Certificate)", 
         *("done-with-body no-certificate server-hello-twice certificate-status-unasked "
           "hello-request-mid-flight hello-request-body-mid-flight certificate-request one-byte-fragments coalesced "
           "empty-handshake-record unknown-message-type").split()),
    _bug("finish12", str, "TLS 1.2: the server's ChangeCipherSpec and Finished: `finished-bad` (verify_data's "
         "first bit flipped), `finished-short` (11 bytes of verify_data), `finished-before-ccs` (an "
         "unprotected Finished and no ChangeCipherSpec), `ccs-twice` (the second under the new keys), `ccs-two-bytes` (a ChangeCipherSpec of "
         "01 01), `ccs-payload-02` (a ChangeCipherSpec of 02), `appdata-before-finished` (a protected "
         "application record between ChangeCipherSpec and Finished), `appdata-before-ccs` (an unprotected "
         "application record before the ChangeCipherSpec)", 
         *("finished-bad finished-short finished-before-ccs ccs-twice ccs-two-bytes ccs-payload-02 "
           "appdata-before-finished appdata-before-ccs").split()),
    _bug("rec12", str, "TLS 1.2: the record layer after the handshake: `version-0300`, `version-0301`, "
         "`version-0304` (every response record's version; counts the records), `app-one-byte` (the response "
         "in one-byte records: legal; counts the records), `ciphertext-over` (a record of 2^14+2048+1 "
         "ciphertext bytes), `plaintext-over` (a record of 2^14+1 plaintext bytes), `bad-tag` (a record whose "
         "tag's last byte is flipped), `unknown-type` (a protected record of content type 99), `empty-appdata` "
         "(16 empty application records in one write: legal; counts them), `alert-fragmented` (a warning "
         "unrecognized_name alert in two one-byte records), `warning-alert` (a warning unrecognized_name: "
         "legal), `hello-request-with-body` (a HelloRequest of one byte), `unknown-handshake-type` (a handshake "
         "message of type 99), `ccs-after-handshake` (a protected ChangeCipherSpec); all before the response "
         "but the first four", 
         *("version-0300 version-0301 version-0304 app-one-byte ciphertext-over plaintext-over bad-tag "
           "unknown-type empty-appdata alert-fragmented warning-alert hello-request-with-body "
           "unknown-handshake-type ccs-after-handshake").split()),
    _bug("ems12", str, "TLS 1.2, when the client offers extended_master_secret (RFC 7627): `negotiated` (echo it "
         "and derive the master secret from the session hash: legal), `wrong-master` (echo it and derive the "
         "keys it writes with and its Finished without the session hash; it reads with the client's)", 
         *("negotiated wrong-master").split()),
)}

TLS12_ONLY = frozenset({"downgrade_sentinel", "renegotiation_info_mismatch", "omit_renegotiation_info",
                        "renegotiate_mid_request", "renegotiate_mid_response",
                        "sh12", "sh12_extension", "cert12", "ske12", "flight12", "finish12", "rec12", "ems12"})


@dataclass(frozen=True)
class Bugs:
    """A scenario's fields as the peer reads them: every field's value, the default where unset."""
    values: tuple[tuple[str, Any], ...]

    def __getattr__(self, name: str) -> Any:
        for key, value in self.values:
            if key == name:
                return value
        if name in BUGS:
            return BUGS[name].default
        raise AttributeError(name)

    def set(self) -> list[str]:
        """The fields this scenario sets, in BUGS' order."""
        given = {k for k, _ in self.values}
        return [name for name in BUGS if name in given]


def make_bugs(given: dict[str, Any], version: str) -> Bugs:
    """GIVEN's fields checked against BUGS (a ValueError says which is wrong and why)."""
    for name, value in given.items():
        if name not in BUGS:
            raise ValueError(f"{name}: not a field of hostile/bugs.py")
        if why := BUGS[name].check(value):
            raise ValueError(why)
        if name in TLS12_ONLY and version != "1.2":
            raise ValueError(f"{name}: a TLS 1.2 field in a TLS {version} scenario")
        if value == BUGS[name].default:
            raise ValueError(f"{name}: {value!r} is the correct server's own value (leave it out)")
    return Bugs(tuple(sorted(given.items())))

