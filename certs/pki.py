"""The certificates of pki.toml's rows, made with cryptography or trustme, and what every maker
shares (the row's checks, its subject, serial, validity and key; the registry of what was made).

cryptography (the default) makes everything it can express; trustme makes the rows that show a
stock trustme PKI (RSA-2048, child CAs without AKI); the openssl CLI makes what cryptography 38
cannot (v1 certificates, explicit-curve EC keys): openssl_cli.py, which imports this module and
never the other way. gen.py picks the maker of a row (make_cert).
"""
from __future__ import annotations

import base64
import datetime
import hashlib
import ipaddress
import warnings
from dataclasses import dataclass
from typing import Any, Optional

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from cryptography.utils import CryptographyDeprecationWarning
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID, ObjectIdentifier

# SHA-1 and MD5 rows are the point of those rows; the library's warning is noise.
warnings.filterwarnings("ignore", category=CryptographyDeprecationWarning)


class PkiError(Exception):
    """A row of pki.toml that cannot be made: the message names the row."""


ROW_KEYS = {"name", "what", "tool", "issuer", "ca", "key", "hash", "cn", "subject_as", "san",
            "basic_constraints", "key_usage", "eku", "aki", "not_before", "not_after",
            "unknown_ext", "name_constraints", "tamper", "version", "san_fill", "must_staple"}
KEY_TYPES = {"p256", "p384", "rsa1024", "rsa2048", "rsa4096", "ed25519", "explicit-p256"}
HASHES = {"sha256": hashes.SHA256, "sha384": hashes.SHA384, "sha1": hashes.SHA1, "md5": hashes.MD5}
EKU = {"serverAuth": ExtendedKeyUsageOID.SERVER_AUTH, "clientAuth": ExtendedKeyUsageOID.CLIENT_AUTH,
       "codeSigning": ExtendedKeyUsageOID.CODE_SIGNING, "OCSPSigning": ExtendedKeyUsageOID.OCSP_SIGNING}
KU_FLAGS = ("digital_signature", "content_commitment", "key_encipherment", "data_encipherment",
            "key_agreement", "key_cert_sign", "crl_sign", "encipher_only", "decipher_only")
KU = {"digitalSignature": "digital_signature", "keyEncipherment": "key_encipherment",
      "keyCertSign": "key_cert_sign", "cRLSign": "crl_sign"}
# An extension no verifier knows (a private arc); DER NULL as its value.
UNKNOWN_EXT_OID = ObjectIdentifier("1.3.6.1.4.1.55555.1.1")


@dataclass
class Issued:
    """One made certificate, its key and where it sits in its PKI."""
    name: str
    cert: x509.Certificate
    key: Any                      # a private key object, or None when cryptography cannot load it
    key_pem: bytes
    issuer: Optional["Issued"]
    row: dict
    tool: str
    trustme: Any = None           # the trustme.CA behind a trustme CA row

    @property
    def self_signed(self) -> bool:
        return self.issuer is None

    def chain(self) -> list["Issued"]:
        """This certificate, then its issuers, stopping before the self-signed root."""
        out, up = [self], self.issuer
        while up is not None and not up.self_signed:
            out.append(up)
            up = up.issuer
        return out

    def chain_pem(self) -> bytes:
        return b"".join(c.cert.public_bytes(serialization.Encoding.PEM) for c in self.chain())

    def describe(self) -> dict:
        c = self.cert
        return {"what": self.row["what"], "tool": self.tool,
                "issuer": self.issuer.name if self.issuer else "self",
                "subject": c.subject.rfc4514_string(), "serial": format(c.serial_number, "x"),
                "version": c.version.name, "not_before": c.not_valid_before.isoformat() + "Z",
                "not_after": c.not_valid_after.isoformat() + "Z",
                "key": self.row.get("key", "p256"), "hash": self.row.get("hash", "sha256"),
                "sha256": hashlib.sha256(c.public_bytes(serialization.Encoding.DER)).hexdigest(),
                "spki_sha256": spki_pin(c),
                "chain": [i.name for i in self.chain()]}


def spki_pin(cert: x509.Certificate) -> Optional[str]:
    """RFC 7469's pin-sha256 of the certificate (None for a key cryptography cannot read: explicit curves)."""
    try:
        spki = cert.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    except ValueError:
        return None
    return base64.b64encode(hashlib.sha256(spki).digest()).decode()


def serial_for(name: str) -> int:
    """A serial fixed by the row name: same structure on every run."""
    return (int.from_bytes(hashlib.sha256(name.encode()).digest()[:16], "big") >> 1) | 1


def utc(value: Any, row: str, what: str) -> datetime.datetime:
    if not isinstance(value, datetime.datetime):
        raise PkiError(f"row {row}: {what} must be a TOML date-time, got {value!r}")
    if value.tzinfo is not None:
        value = value.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    return value


def new_key(kind: str):
    if kind == "p256":
        return ec.generate_private_key(ec.SECP256R1())
    if kind == "p384":
        return ec.generate_private_key(ec.SECP384R1())
    if kind.startswith("rsa"):
        return rsa.generate_private_key(65537, int(kind[3:]))
    if kind == "ed25519":
        return ed25519.Ed25519PrivateKey.generate()
    raise PkiError(f"key type {kind!r} needs the openssl tool")


def key_pem(key) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def subject_for(row: dict, registry: dict) -> x509.Name:
    if "subject_as" in row:
        return lookup(registry, row["subject_as"], row["name"]).cert.subject
    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "tlslab"),
                      x509.NameAttribute(NameOID.COMMON_NAME, row.get("cn", row["name"]))])


def general_name(entry: str, row: str) -> x509.GeneralName:
    kind, _, value = entry.partition(":")
    if kind == "dns":
        return x509.DNSName(value)
    if kind == "ip":
        return x509.IPAddress(ipaddress.ip_address(value))
    if kind == "ipnet":
        return x509.IPAddress(ipaddress.ip_network(value))
    raise PkiError(f"row {row}: name {entry!r} is not dns:, ip: or ipnet:")


def lookup(registry: dict, name: str, row: str) -> Issued:
    if name not in registry:
        raise PkiError(f"row {row}: {name!r} is not an earlier row")
    return registry[name]


def defaults_for(row: dict) -> dict:
    """What a CA row and a leaf row carry when they do not say otherwise."""
    rsa_key = row.get("key", "p256").startswith("rsa")
    if row.get("ca"):
        return {"basic_constraints": "ca", "key_usage": ["keyCertSign", "cRLSign"], "eku": []}
    return {"basic_constraints": "leaf", "eku": ["serverAuth"], "san": ["dns:hooks.test"],
            "key_usage": ["digitalSignature", "keyEncipherment"] if rsa_key else ["digitalSignature"]}


def extensions(row: dict, public_key, issuer: Optional[Issued]) -> list[tuple[x509.ExtensionType, bool]]:
    """The extensions a row asks for, each with its criticality."""
    d = {**defaults_for(row), **row}
    exts: list[tuple[x509.ExtensionType, bool]] = []
    bc = d["basic_constraints"]
    if bc != "none":
        ca = bc.startswith("ca")
        pathlen = int(bc.split(":")[1]) if ca and ":" in bc else None
        exts.append((x509.BasicConstraints(ca=ca, path_length=pathlen), True))
    if d["key_usage"]:
        unknown = set(d["key_usage"]) - set(KU)
        if unknown:
            raise PkiError(f"row {row['name']}: unknown key usage {sorted(unknown)}")
        flags = {f: False for f in KU_FLAGS}
        flags.update({KU[k]: True for k in d["key_usage"]})
        exts.append((x509.KeyUsage(**flags), True))
    if set(d["eku"]) - set(EKU):
        raise PkiError(f"row {row['name']}: unknown EKU {sorted(set(d['eku']) - set(EKU))} (known: {', '.join(EKU)})")
    if d["eku"]:
        exts.append((x509.ExtendedKeyUsage([EKU[e] for e in d["eku"]]), False))
    names = [f"dns:n{i:04d}.fill.test" for i in range(d.get("san_fill", 0))] + d.get("san", [])
    if names:
        exts.append((x509.SubjectAlternativeName([general_name(n, row["name"]) for n in names]), False))
    exts.append((x509.SubjectKeyIdentifier.from_public_key(public_key), False))
    if issuer is not None and d.get("aki", True):
        exts.append((x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer.cert.public_key()), False))
    if "name_constraints" in d:
        nc = d["name_constraints"]
        exts.append((x509.NameConstraints(
            permitted_subtrees=[general_name(n, row["name"]) for n in nc.get("permitted", [])] or None,
            excluded_subtrees=[general_name(n, row["name"]) for n in nc.get("excluded", [])] or None), True))
    if d.get("must_staple"):  # RFC 7633 TLS Feature: status_request
        exts.append((x509.TLSFeature([x509.TLSFeatureType.status_request]), False))
    if "unknown_ext" in d:
        exts.append((x509.UnrecognizedExtension(UNKNOWN_EXT_OID, b"\x05\x00"), d["unknown_ext"] == "critical"))
    return exts


def tamper_signature(cert: x509.Certificate) -> x509.Certificate:
    """Flip the last byte of the signature: the DER still parses, the signature no longer verifies."""
    der = bytearray(cert.public_bytes(serialization.Encoding.DER))
    der[-1] ^= 0x01
    return x509.load_der_x509_certificate(bytes(der))


def validity(row: dict, defaults: dict) -> tuple[datetime.datetime, datetime.datetime]:
    return (utc(row.get("not_before", defaults["not_before"]), row["name"], "not_before"),
            utc(row.get("not_after", defaults["not_after"]), row["name"], "not_after"))


def make_with_cryptography(row: dict, issuer: Optional[Issued], defaults: dict, registry: dict) -> Issued:
    key = new_key(row.get("key", "p256"))
    signer = key if issuer is None else issuer.key
    subject = subject_for(row, registry)
    not_before, not_after = validity(row, defaults)
    builder = (x509.CertificateBuilder()
               .subject_name(subject)
               .issuer_name(subject if issuer is None else issuer.cert.subject)
               .public_key(key.public_key())
               .serial_number(serial_for(row["name"]))
               .not_valid_before(not_before)
               .not_valid_after(not_after))
    for ext, critical in extensions(row, key.public_key(), issuer):
        builder = builder.add_extension(ext, critical=critical)
    algorithm = None if isinstance(signer, ed25519.Ed25519PrivateKey) else HASHES[row.get("hash", "sha256")]()
    cert = builder.sign(signer, algorithm)
    if row.get("tamper") == "signature":
        cert = tamper_signature(cert)
    return Issued(row["name"], cert, key, key_pem(key), issuer, row, "cryptography")


def make_with_trustme(row: dict, issuer: Optional[Issued]) -> Issued:
    import trustme  # only these rows need it
    if row.get("ca"):
        ca = trustme.CA(parent_cert=issuer.trustme if issuer else None, organization_unit_name=row["name"])
        pem = ca.private_key_pem.bytes()
        return Issued(row["name"], x509.load_pem_x509_certificate(ca.cert_pem.bytes()),
                      serialization.load_pem_private_key(pem, None), pem, issuer, row, "trustme", trustme=ca)
    if issuer is None or issuer.trustme is None:
        raise PkiError(f"row {row['name']}: a trustme leaf needs a trustme CA as issuer")
    names = [n.partition(":")[2] for n in row.get("san", ["dns:hooks.test"])]
    not_after = utc(row["not_after"], row["name"], "not_after") if "not_after" in row else None
    leaf = issuer.trustme.issue_cert(*names, common_name=row.get("cn", row["name"]), not_after=not_after)
    pem = leaf.private_key_pem.bytes()
    return Issued(row["name"], x509.load_pem_x509_certificate(leaf.cert_chain_pems[0].bytes()),
                  serialization.load_pem_private_key(pem, None), pem, issuer, row, "trustme")


def check_row(row: dict, defaults: dict) -> None:
    name = row.get("name", "?")
    missing = {"name", "what"} - set(row)
    if missing:
        raise PkiError(f"row {name}: missing {sorted(missing)}")
    unknown = set(row) - ROW_KEYS
    if unknown:
        raise PkiError(f"row {name}: unknown keys {sorted(unknown)}")
    if row.get("key", "p256") not in KEY_TYPES:
        raise PkiError(f"row {name}: unknown key type {row['key']!r}")
    if row.get("hash", "sha256") not in HASHES:
        raise PkiError(f"row {name}: unknown hash {row['hash']!r}")
    if not {"not_before", "not_after"} <= set(defaults):
        raise PkiError("[defaults] needs not_before and not_after")


CRL_KEYS = {"name", "what", "issuer", "revoked", "last_update", "next_update", "tamper"}


def crl_pem(row: dict, registry: dict, defaults: dict) -> bytes:
    """A [[crl]]: the issuer's CRL listing the named certificates as revoked (dated at not_before;
    last_update/next_update move its window; tamper = "signature" flips the signature's last byte)."""
    for k in ("name", "what", "issuer", "revoked"):
        if k not in row:
            raise PkiError(f"crl {row.get('name', '?')}: missing {k!r}")
    if set(row) - CRL_KEYS:
        raise PkiError(f"crl {row['name']}: unknown keys {sorted(set(row) - CRL_KEYS)}")
    issuer = lookup(registry, row["issuer"], row["name"])
    when = utc(defaults["not_before"], row["name"], "not_before")
    builder = (x509.CertificateRevocationListBuilder()
               .issuer_name(issuer.cert.subject)
               .last_update(utc(row.get("last_update", defaults["not_before"]), row["name"], "last_update"))
               .next_update(utc(row.get("next_update", defaults["not_after"]), row["name"], "next_update")))
    for name in row["revoked"]:
        revoked = lookup(registry, name, row["name"])
        if revoked.issuer is not issuer:
            raise PkiError(f"crl {row['name']}: {name} is not issued by {issuer.name}")
        builder = builder.add_revoked_certificate(
            x509.RevokedCertificateBuilder().serial_number(revoked.cert.serial_number).revocation_date(when).build())
    crl = builder.sign(issuer.key, HASHES["sha256"]())
    if row.get("tamper") == "signature":
        der = bytearray(crl.public_bytes(serialization.Encoding.DER))
        der[-1] ^= 0x01
        crl = x509.load_der_x509_crl(bytes(der))
    return crl.public_bytes(serialization.Encoding.PEM)


def bundle_pem(row: dict, registry: dict) -> bytes:
    """A [[bundle]]: the named certificates, each alone, in the order given."""
    for k in ("name", "what", "certs"):
        if k not in row:
            raise PkiError(f"bundle {row.get('name', '?')}: missing {k!r}")
    return b"".join(lookup(registry, n, row["name"]).cert.public_bytes(serialization.Encoding.PEM)
                    for n in row["certs"])
