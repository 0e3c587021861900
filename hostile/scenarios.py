"""The hostile peer's scenarios, one line each: the table peer.py dispatches on and prints with
--help, and the names hostile_gate checks a row against (data only, so the gate imports no TLS code)."""
from __future__ import annotations

# name -> what the peer does
SCENARIOS: dict[str, str] = {
    "normal": "a correct TLS 1.3 server: the control of every row",
    "hrr": "a HelloRetryRequest for P-256 (legal: the client's first key share is X25519)",
    "hrr-twice": "a second HelloRetryRequest after the client's retried hello (RFC 8446 4.1.4: abort)",
    "group-not-offered": "a ServerHello key share in group 0x1234, which the client never offered",
    "downgrade-sentinel": "tls12-normal's ServerHello with a random ending DOWNGRD\\x01 (RFC 8446 4.1.3: a 1.3 client aborts)",
    "suite-not-offered": "a ServerHello choosing cipher suite 0x1304 (AES-128-CCM), which OpenSSL does not offer by default",
    "session-id-mismatch": "a ServerHello that does not echo the client's legacy_session_id",
    "hs-one-byte": "every handshake message split one byte per record (ServerHello included)",
    "hs-packed": "EncryptedExtensions, Certificate, CertificateVerify and Finished in one record",
    "cert-60k": "a Certificate message of 60 KiB (the CA repeated as a long chain), split over 16 KiB records",
    "ccs-compat": "a ChangeCipherSpec before EncryptedExtensions (middlebox compatibility: legal)",
    "ccs-after-handshake": "a ChangeCipherSpec record after the handshake, before the response",
    "ee-duplicate-extension": "EncryptedExtensions carrying server_name twice",
    "ee-unsolicited-extension": "EncryptedExtensions carrying ALPN (h2), which the client did not offer",
    "cv-wrong-transcript": "a CertificateVerify signed over the transcript without the Certificate",
    "bad-finished": "a server Finished with one bit flipped",
    "alert-mid-message": "a warning alert record between two fragments of the Certificate message",
    "app-one-byte": "the response in 1-byte application records",
    "app-max-record": "the response in records of exactly 2^14 plaintext bytes (the limit itself)",
    "padded-records": "every response record padded with 1,000 zero bytes (legal in TLS 1.3)",
    "record-overflow-plaintext": "a record of 2^14+1 plaintext bytes (record_overflow)",
    "record-overflow-ciphertext": "a record of 2^14+256+1 ciphertext bytes (record_overflow)",
    "empty-records-32": "32 empty application records before the response (OpenSSL's limit: allowed)",
    "empty-records-1000": "1,000 empty application records before the response",
    "wrong-record-version": "a response record whose legacy_record_version is 0x0301",
    "unknown-content-type": "a record of outer content type 99 before the response",
    "unknown-inner-type": "a protected record whose inner content type is 99",
    "no-inner-type": "a protected record of zero padding only (no inner content type)",
    "keyupdate-requested": "half the response, a KeyUpdate (update_requested), the rest under the new keys: the "
                           "client owes a KeyUpdate before its next application data (RFC 8446 4.6.3)",
    "keyupdate-100": "100 KeyUpdates (not requested) in a row before the response",
    "keyupdate-bad-value": "a KeyUpdate whose request_update is 2 (illegal_parameter)",
    "tickets-50": "50 NewSessionTickets before the response",
    "ticket-60k": "one NewSessionTicket of 60 KiB",
    "ticket-unknown-extension": "a NewSessionTicket carrying an extension of unknown type 0x7777",
    "tickets-mid-response": "a NewSessionTicket between every two records of the response",
    "staple-not-der": "the leaf's OCSP staple (RFC 8446 4.4.2.1, when the client asked) is 28 bytes of text, not DER",
    "staple-one-byte": "the leaf's OCSP staple is one byte (0x30: a SEQUENCE's tag and nothing more)",
    "staple-try-later": "the leaf's OCSP staple is an OCSPResponse of status tryLater (3): no response bytes",
    "staple-not-basic": "the leaf's OCSP staple is a successful OCSPResponse whose responseBytes are not "
                        "id-pkix-ocsp-basic (a nonce OID)",
    "certificate-request-post": "a post-handshake CertificateRequest (the client did not offer post_handshake_auth)",
    "warning-alert": "a warning alert (unrecognized_name, level 1) before the response: fatal in TLS 1.3",
    "user-canceled": "a user_canceled warning alert before the response",
    "close-notify-mid-response": "half the response, close_notify, then the rest",
    "close-notify-then-data": "the whole response, close_notify, then another application record",
    "fatal-alert-mid-response": "half the response, then a fatal internal_error alert",
    "fatal-alert-after-response": "the whole response, then a fatal internal_error alert",
    "fin-mid-record": "half the response, then half of a record, then FIN",
    "rst-after-finished": "the handshake to the client's Finished, then RST",
    "tls12-normal": "a correct TLS 1.2-only server (ECDHE-ECDSA-AES128-GCM-SHA256, secure renegotiation): the 1.2 control",
    "tls12-renegotiation": "half the response, a HelloRequest, a whole new handshake once the client's ClientHello came "
                           "(written from inside its read), then the rest",
    "tls12-renegotiation-mismatch": "tls12-renegotiation with a wrong renegotiation_info in the second ServerHello (RFC 5746)",
    "tls12-no-renegotiation-info": "a TLS 1.2 ServerHello without renegotiation_info (a legacy server)",
    "tls12-renegotiation-mid-request": "a HelloRequest once the request's first record is in and more of it waits "
                                       "unread behind it (up to 2 s), while the client is still sending its body "
                                       "(seed 004: data queued when a renegotiation starts); "
                                       "the peer then reads nothing for 300 ms so the client's writes back up, takes "
                                       "the body's records wherever they fall, and checks the body (--verify-body-seed)",
    "rst-after-request": "the handshake, the client's request read, then RST instead of a response",
}
