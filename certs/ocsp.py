"""Make one OCSP response (DER, a staple) from one [[ocsp]] row of pki.toml.

`openssl ocsp` answers a request file as a responder would (index file, -rsigner, -CA):
good, revoked, unknown, signed by the issuer, by a delegated responder (OCSP-signing EKU)
or by a certificate the issuer never authorised. It stamps thisUpdate with the clock, so
the one response that must be stale (nextUpdate in the past) is built with cryptography's
OCSPResponseBuilder at the row's fixed dates instead. `tamper = "signature"` flips the
last byte of a response made with `no_certs` (the signature is then the DER's end).
"""
from __future__ import annotations

import datetime
import tempfile
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.x509 import ocsp

from openssl_cli import run
from pki import Issued, PkiError, lookup, utc

OCSP_KEYS = {"name", "what", "cert", "issuer", "signer", "status", "tool", "this_update", "next_update",
             "tamper", "no_certs"}
STATUSES = ("good", "revoked", "unknown")
REVOKED_AT = datetime.datetime(2020, 1, 1)


def index_line(cert: x509.Certificate, status: str) -> str:
    """One line of openssl ca's index file: V (valid) or R (revoked); unknown: the cert is left out."""
    expiry = cert.not_valid_after.strftime("%y%m%d%H%M%SZ")
    revoked = REVOKED_AT.strftime("%y%m%d%H%M%SZ") if status == "revoked" else ""
    return f"{'R' if status == 'revoked' else 'V'}\t{expiry}\t{revoked}\t{cert.serial_number:X}\tunknown\t" \
           f"/{cert.subject.rfc4514_string().replace(',', '/')}\n"


def with_openssl(row: dict, cert: Issued, issuer: Issued, signer: Issued, out: Path) -> bytes:
    name = row["name"]
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        (d / "index.txt").write_text(index_line(cert.cert, row["status"]) if row["status"] != "unknown" else "")
        pem = serialization.Encoding.PEM
        (d / "cert.pem").write_bytes(cert.cert.public_bytes(pem))
        (d / "issuer.pem").write_bytes(issuer.cert.public_bytes(pem))
        (d / "signer.pem").write_bytes(signer.cert.public_bytes(pem))
        (d / "signer.key").write_bytes(signer.key_pem)
        run(["openssl", "ocsp", "-issuer", str(d / "issuer.pem"), "-cert", str(d / "cert.pem"), "-no_nonce",
             "-reqout", str(d / "req.der")], name)
        run(["openssl", "ocsp", "-index", str(d / "index.txt"), "-CA", str(d / "issuer.pem"),
             "-rsigner", str(d / "signer.pem"), "-rkey", str(d / "signer.key"), "-reqin", str(d / "req.der"),
             "-respout", str(d / "resp.der"), "-ndays", "10000",
             *(["-resp_no_certs"] if row.get("no_certs") else [])], name)
        return (d / "resp.der").read_bytes()


def with_cryptography(row: dict, cert: Issued, issuer: Issued, signer: Issued) -> bytes:
    status = {"good": ocsp.OCSPCertStatus.GOOD, "revoked": ocsp.OCSPCertStatus.REVOKED,
              "unknown": ocsp.OCSPCertStatus.UNKNOWN}[row["status"]]
    builder = ocsp.OCSPResponseBuilder().add_response(
        cert=cert.cert, issuer=issuer.cert, algorithm=hashes.SHA1(), cert_status=status,
        this_update=utc(row["this_update"], row["name"], "this_update"),
        next_update=utc(row["next_update"], row["name"], "next_update"),
        revocation_time=REVOKED_AT if row["status"] == "revoked" else None, revocation_reason=None)
    builder = builder.responder_id(ocsp.OCSPResponderEncoding.HASH, signer.cert)
    if not row.get("no_certs") and signer is not issuer:
        builder = builder.certificates([signer.cert])
    return builder.sign(signer.key, hashes.SHA256()).public_bytes(serialization.Encoding.DER)


def ocsp_der(row: dict, registry: dict, out: Path) -> bytes:
    name = row.get("name", "?")
    missing = {"name", "what", "cert", "issuer", "status"} - set(row)
    if missing:
        raise PkiError(f"ocsp {name}: missing {sorted(missing)}")
    if set(row) - OCSP_KEYS:
        raise PkiError(f"ocsp {name}: unknown keys {sorted(set(row) - OCSP_KEYS)}")
    if row["status"] not in STATUSES:
        raise PkiError(f"ocsp {name}: status must be one of {', '.join(STATUSES)}")
    cert, issuer = lookup(registry, row["cert"], name), lookup(registry, row["issuer"], name)
    signer = lookup(registry, row.get("signer", row["issuer"]), name)
    tool = row.get("tool", "openssl")
    if tool == "openssl":
        der = with_openssl(row, cert, issuer, signer, out)
    elif tool == "cryptography":
        der = with_cryptography(row, cert, issuer, signer)
    else:
        raise PkiError(f"ocsp {name}: tool must be openssl or cryptography")
    if row.get("tamper") == "signature":
        if not row.get("no_certs"):
            raise PkiError(f"ocsp {name}: tamper = signature needs no_certs (the signature must end the DER)")
        der = der[:-1] + bytes([der[-1] ^ 0x01])
    return der
