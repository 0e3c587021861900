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
    # --- the catalogue (TLS 1.3): word fields, one implementation each, one scenario a word ---
    _bug("sh_form", str, "the ServerHello altered as the word says, the handshake then carried on as if it were "
         "right: legacy_version 0x0304 or 0x0301; compression method 1; supported_versions naming 0x0303, 0x0305 or "
         "0x7f1c, in the ClientHello's list form, missing, or twice; key_share missing, without a public value, or "
         "twice; the random ending DOWNGRD\\x01 or DOWNGRD\\x00; 2 bytes after the extensions; an empty "
         "legacy_session_id_echo",
         "legacy-version-0304", "legacy-version-0301", "compression-1", "version-0303", "version-0305",
         "version-7f1c", "versions-list", "no-supported-versions", "supported-versions-twice", "no-key-share",
         "key-share-no-public", "key-share-twice", "random-downgrd-tls12", "random-downgrd-tls11",
         "trailing-bytes", "session-id-empty"),
    _bug("sh_extension", str, "the ServerHello carries one more extension of this name (tls13.py's EXT_CODES), "
         "with a minimal body; the handshake then goes on",
         "server-name", "status-request", "supported-groups", "signature-algorithms", "alpn", "early-data",
         "cookie", "pre-shared-key", "psk-key-exchange-modes", "renegotiation-info", "extended-master-secret",
         "ec-point-formats", "record-size-limit", "unknown"),
    _bug("retry_form", str, "a HelloRetryRequest altered as the word says (counts it): `no-change` (supported_versions "
         "alone), `offered-group` (X25519, whose share the client sent), `unoffered-group` (0x1234), "
         "`unoffered-suite` (0x1304), `suite-changes` (AES-128-GCM, then a ServerHello of ChaCha20), "
         "`sh-other-group` (P-256, then a ServerHello share in X25519), `version-0303`, `no-supported-versions`, "
         "`session-id-mismatch`, `compression-1`, `cookie` (a cookie to echo: counts cookie_echoed), `cookie-empty`, "
         "`unknown-extension` (0x7777)",
         "no-change", "offered-group", "unoffered-group", "unoffered-suite", "suite-changes", "sh-other-group",
         "version-0303", "no-supported-versions", "session-id-mismatch", "compression-1", "cookie", "cookie-empty",
         "unknown-extension"),
    _bug("server_share", str, "the ServerHello's key share is this malformed public value (a P-256 word asks for a "
         "P-256 share first: a HelloRetryRequest for P-256, not counted as retry_group): X25519 of 31, 33 or 0 bytes, or all zero (the handshake then goes on with "
         "the all-zero secret); a P-256 point off the curve, compressed, the point at infinity (0x00), or 64 bytes",
         "x25519-short", "x25519-long", "x25519-empty", "x25519-zero", "p256-off-curve", "p256-compressed",
         "p256-infinity", "p256-no-prefix"),
    _bug("ee_extension", str, "EncryptedExtensions carries one more extension of this name (tls13.py's EXT_CODES) "
         "with a minimal body; `*-twice` twice; `alpn-two`, `alpn-empty-list` and `alpn-empty-name` malformed ALPN "
         "answers; `server-name-list` a server_name holding a name list (an acknowledgement is empty)",
         "unknown", "key-share", "supported-versions", "supported-groups", "signature-algorithms", "status-request",
         "pre-shared-key", "early-data", "cookie", "psk-key-exchange-modes", "renegotiation-info", "ec-point-formats",
         "extended-master-secret", "encrypt-then-mac", "session-ticket", "padding", "max-fragment-length",
         "record-size-limit", "heartbeat", "certificate-authorities", "post-handshake-auth",
         "signature-algorithms-cert", "oid-filters", "sct", "server-name", "server-name-list", "alpn-two",
         "alpn-empty-list", "alpn-empty-name", "unknown-twice", "supported-groups-twice"),
    _bug("certificate_form", str, "the server's Certificate altered: `empty-list` (no entries), `request-context` "
         "(a one-byte certificate_request_context), `not-der` (the leaf's bytes replaced by text), "
         "`entry-extension` (the leaf's entry carries an unknown extension 0x7777), `entry-sct` (an "
         "unrequested signed_certificate_timestamp), `trailing-bytes` (2 bytes after the list)",
         "empty-list", "request-context", "not-der", "entry-extension", "entry-sct", "trailing-bytes"),
    _bug("cv_form", str, "the CertificateVerify altered: labelled `unknown-scheme` (0x7777), `rsa-pkcs1` "
         "(0x0401), `ecdsa-sha1` (0x0203), `ecdsa-p384` (0x0503, over SHA-384 by the P-256 key), `rsa-pss-label` "
         "(0x0804 on an ECDSA signature); signed over the `client-context` string or with `no-prefix` (no 64 "
         "spaces); the signature `truncated` by a byte, `empty`, or followed by `trailing-bytes`",
         "unknown-scheme", "rsa-pkcs1", "ecdsa-sha1", "ecdsa-p384", "rsa-pss-label", "client-context", "no-prefix",
         "truncated", "empty", "trailing-bytes"),
    _bug("finished_form", str, "the server Finished's verify_data is `short` (31 bytes), `long` (33), `empty`, or "
         "`zero` (32 zero bytes)", "short", "long", "empty", "zero"),
    _bug("flight_order", str, "the encrypted flight out of order: a message left out (`no-encrypted-extensions`, "
         "`no-certificate`, `no-certificate-verify`), sent twice (`encrypted-extensions-twice`, "
         "`certificate-twice`), swapped (`finished-before-certificate-verify`, `certificate-verify-first`), or one "
         "more message before the Finished: `server-hello`, `key-update`, `new-session-ticket`, `hello-request`, "
         "`end-of-early-data`, `certificate-request-late` (after the Certificate), `server-hello-done`, "
         "`unknown-message` (type 99)",
         "no-encrypted-extensions", "no-certificate", "no-certificate-verify", "encrypted-extensions-twice",
         "certificate-twice", "finished-before-certificate-verify", "certificate-verify-first", "server-hello",
         "key-update", "new-session-ticket", "hello-request", "end-of-early-data", "certificate-request-late",
         "server-hello-done", "unknown-message"),
    _bug("inject_after_server_hello", str, "one record between the ServerHello and EncryptedExtensions: `ccs-twice` "
         "(two ChangeCipherSpecs), `ccs-02` (payload 0x02), `ccs-empty`, `ccs-long` (0x01 0x01), `ccs-protected` "
         "(a ChangeCipherSpec under the handshake keys), `handshake-plaintext` (EncryptedExtensions unprotected), "
         "`handshake-empty` (a protected handshake record of zero bytes), `appdata` (application data under the "
         "handshake keys)",
         "ccs-twice", "ccs-02", "ccs-empty", "ccs-long", "ccs-protected", "handshake-plaintext", "handshake-empty",
         "appdata"),
    _bug("inject_after_handshake", str, "one record after the handshake, before the response (the application "
         "keys): an alert `alert-empty` (0 bytes), `alert-short` (1 byte), `alert-long` (3 bytes), `alert-split` "
         "(a close_notify in two 1-byte records), `alert-level-3` (close_notify at level 3), `alert-unknown` "
         "(description 255, warning), `alert-bad-certificate` / `alert-handshake-failure` / `alert-decode-error` "
         "(warning level), `alert-close-notify-fatal` (close_notify at level fatal), `alert-plaintext` (an "
         "unprotected warning unrecognized_name), `handshake-empty` (a zero-length handshake record), "
         "`handshake-plaintext` (a NewSessionTicket unprotected), `appdata-plaintext` (an unprotected application "
         "record); a post-handshake message the server never sends there: `server-hello`, `encrypted-extensions`, "
         "`certificate`, `certificate-verify`, `finished`, `hello-request`, `end-of-early-data`, `client-hello`, "
         "`unknown-message`; a KeyUpdate with a body of 2 bytes (`key-update-long`) or none (`key-update-empty`)",
         "alert-empty", "alert-short", "alert-long", "alert-split", "alert-level-3", "alert-unknown",
         "alert-bad-certificate", "alert-handshake-failure", "alert-decode-error", "alert-close-notify-fatal",
         "alert-plaintext", "handshake-empty", "handshake-plaintext", "appdata-plaintext", "server-hello",
         "encrypted-extensions", "certificate", "certificate-verify", "finished", "hello-request",
         "end-of-early-data", "client-hello", "unknown-message", "key-update-long", "key-update-empty"),
    _bug("response_record", str, "the first record of the response broken: `bad-tag` (the tag's last bit flipped), "
         "`handshake-keys` (sealed under the server's handshake key), `skip-sequence` (a nonce one ahead), "
         "`replayed` (sent twice), `short` (15 bytes: shorter than a tag), `outer-handshake` (opaque_type 22), "
         "`outer-alert` (opaque_type 21)",
         "bad-tag", "handshake-keys", "skip-sequence", "replayed", "short", "outer-handshake", "outer-alert"),
    _bug("ticket_form", str, "one NewSessionTicket before the response: `lifetime-over-week` (604801 s), "
         "`lifetime-zero`, `empty-ticket` (ticket of 0 bytes), `truncated` (cut after the nonce), `early-data` "
         "(max_early_data_size 16384), `early-data-short` (an early_data body of 2 bytes), `early-data-twice`, "
         "`server-name` (an extension not for this message)",
         "lifetime-over-week", "lifetime-zero", "empty-ticket", "truncated", "early-data", "early-data-short",
         "early-data-twice", "server-name"),
    _bug("certificate_request", str, "a CertificateRequest after EncryptedExtensions: `plain` (signature_algorithms "
         "only: the client answers with an empty Certificate, counted as client_certificates), `context` (a non-empty "
         "certificate_request_context), `no-signature-algorithms` (no extensions), `unknown-extension` (and "
         "0x7777, which a client ignores)", "plain", "context", "no-signature-algorithms", "unknown-extension"),
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

