"""NIST's PKITS as Debian installs it (python3-cryptography-vectors 38: PKITS_data/), read where it lies.

    suite = Suite()                       # certs/ (and certpairs/), crls/, pkcs12/
    suite.certs["GoodCACert"].subject     # a name as RFC 5280 compares it (case and spaces folded)

Nothing of the suite is copied into the repository: a run writes the PEM files a server and a client
are given into its work folder (pkits/served.py).
"""
from __future__ import annotations

import base64
import warnings
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Optional

from cryptography import x509
from cryptography.x509.oid import ExtensionOID

PACKAGE = "python3-cryptography-vectors"
SUITE = Path("/usr/lib/python3/dist-packages/cryptography_vectors/x509/PKITS_data")
ANCHOR = "TrustAnchorRootCertificate"

# The string types of a DirectoryString and the codec of each (X.690 tag -> codec)
STRING_CODECS = {0x0C: "utf-8", 0x13: "ascii", 0x16: "ascii", 0x14: "latin-1", 0x1E: "utf-16-be", 0x1C: "utf-32-be"}


class SuiteError(Exception):
    """The suite is not where Debian puts it, or a file of it does not read: one line."""


def tlv(data: bytes, at: int) -> tuple[int, int, int]:
    """(tag, start of the value, its length) of the DER element at AT."""
    tag, length, at = data[at], data[at + 1], at + 2
    if length & 0x80:
        count = length & 0x7F
        length, at = int.from_bytes(data[at:at + count], "big"), at + count
    return tag, at, length


def children(data: bytes, start: int, length: int) -> list[tuple[int, int, int]]:
    """The elements inside a constructed value: [(tag, value start, value length)]."""
    found, at = [], start
    while at < start + length:
        tag, value, size = tlv(data, at)
        found.append((tag, value, size))
        at = value + size
    return found


def name_key(der: bytes) -> tuple:
    """A Name (its DER) as RFC 5280 7.1 compares names: RDNs in order, each a set of (type, value),
    string values case-folded with their spaces collapsed (4.3.3 to 4.3.11 chain through exactly this)."""
    _, start, length = tlv(der, 0)
    rdns = []
    for _, set_start, set_len in children(der, start, length):
        attrs = []
        for _, seq_start, seq_len in children(der, set_start, set_len):
            (_, oid_at, oid_len), (tag, val_at, val_len) = children(der, seq_start, seq_len)[:2]
            raw = der[val_at:val_at + val_len]
            codec = STRING_CODECS.get(tag)
            value = " ".join(raw.decode(codec, "replace").split()).casefold() if codec else raw.hex()
            attrs.append((der[oid_at:oid_at + oid_len].hex(), value))
        rdns.append(tuple(sorted(attrs)))
    return tuple(rdns)


def extension(obj, oid):
    try:
        return obj.extensions.get_extension_for_oid(oid).value
    except x509.ExtensionNotFound:
        return None


@dataclass
class Cert:
    stem: str                # certs/STEM.crt
    der: bytes
    subject: tuple           # name_key
    issuer: tuple
    ski: Optional[bytes]
    aki: Optional[bytes]
    crl_issuers: set = field(default_factory=set)   # the cRLIssuer names of its distribution points
    not_before: datetime = datetime.min.replace(tzinfo=timezone.utc)
    not_after: datetime = datetime.max.replace(tzinfo=timezone.utc)
    key_type: str = ""       # rsa | dsa | ...
    key_loads: bool = True   # false: its key does not read alone (4.1.5: DSA parameters inherited)

    @property
    def is_end_entity(self) -> bool:
        return self.stem.endswith("EE")


@dataclass
class Crl:
    stem: str                # crls/STEM.crl
    der: bytes
    issuer: tuple
    aki: Optional[bytes]


def read_cert(stem: str, der: bytes) -> Cert:
    with warnings.catch_warnings():  # 4.4.14's negative serial number: parsed, and warned about
        warnings.simplefilter("ignore")
        cert = x509.load_der_x509_certificate(der)
    ski, aki = extension(cert, ExtensionOID.SUBJECT_KEY_IDENTIFIER), extension(cert, ExtensionOID.AUTHORITY_KEY_IDENTIFIER)
    points = extension(cert, ExtensionOID.CRL_DISTRIBUTION_POINTS) or []
    crl_issuers = {name_key(n.value.public_bytes()) for p in points for n in (p.crl_issuer or [])
                   if isinstance(n, x509.DirectoryName)}
    key, loads = key_type(cert)
    return Cert(stem, der, name_key(cert.subject.public_bytes()), name_key(cert.issuer.public_bytes()),
                ski.digest if ski else None, aki.key_identifier if aki else None, crl_issuers,
                cert.not_valid_before.replace(tzinfo=timezone.utc), cert.not_valid_after.replace(tzinfo=timezone.utc),
                key, loads)


DSA_KEY_OID = bytes.fromhex("06072a8648ce380401")   # 1.2.840.10040.4.1, as it sits in a SubjectPublicKeyInfo


def key_type(cert: x509.Certificate) -> tuple[str, bool]:
    """(rsa, dsa, ...; whether the key loads alone): 4.1.5's DSA key inherits its parameters from its issuer."""
    try:
        name = type(cert.public_key()).__name__.lower()
    except ValueError:
        return "dsa" if DSA_KEY_OID in cert.tbs_certificate_bytes else "unreadable", False
    return next((k for k in ("dsa", "rsa", "ec", "ed25519") if k in name), name), True


def read_crl(stem: str, der: bytes) -> Crl:
    try:
        crl = x509.load_der_x509_crl(der)
    except ValueError:  # 4.4.15's CRL lists a negative serial number, which cryptography refuses whole
        return Crl(stem, der, name_key(crl_issuer_der(der)), None)
    aki = extension(crl, ExtensionOID.AUTHORITY_KEY_IDENTIFIER)
    return Crl(stem, der, name_key(crl.issuer.public_bytes()), aki.key_identifier if aki else None)


def crl_issuer_der(der: bytes) -> bytes:
    """The issuer Name of a CertificateList, read by hand: TBSCertList's first SEQUENCE after the
    optional version INTEGER and the signature AlgorithmIdentifier."""
    _, start, length = tlv(der, 0)
    _, tbs_start, tbs_len = children(der, start, length)[0]
    fields = children(der, tbs_start, tbs_len)
    _, at, size = fields[2] if fields[0][0] == 0x02 else fields[1]
    header = 2 + (0 if size < 0x80 else (size.bit_length() + 7) // 8)
    return der[at - header:at + size]


def pair_certificates(der: bytes) -> list[bytes]:
    """The forward and reverse certificates of a CertificatePair (certpairs/*.cp): [0] and [1], explicit."""
    _, start, length = tlv(der, 0)
    return [der[value:value + size] for _, value, size in children(der, start, length)]


class Suite:
    """Every certificate (certs/, and any of certpairs/ that certs/ lacks), every CRL, the keys."""

    def __init__(self, root: Path = SUITE):
        self.root = root
        if not (root / "certs" / f"{ANCHOR}.crt").is_file():
            raise SuiteError(f"no PKITS at {root} (Debian's {PACKAGE}: run_all.sh installs it)")
        try:
            self.certs = {p.stem: read_cert(p.stem, p.read_bytes()) for p in sorted((root / "certs").glob("*.crt"))}
            self.crls = {p.stem: read_crl(p.stem, p.read_bytes()) for p in sorted((root / "crls").glob("*.crl"))}
            known = {c.der for c in self.certs.values()}
            for p in sorted((root / "certpairs").glob("*.cp")):
                for i, der in enumerate(pair_certificates(p.read_bytes())):
                    if der not in known:
                        self.certs[f"{p.stem}#{i}"] = read_cert(f"{p.stem}#{i}", der)
                        known.add(der)
        except (OSError, ValueError, IndexError) as e:
            raise SuiteError(f"{root}: the suite does not read ({e})") from e
        self.anchor = self.certs[ANCHOR]

    def key_file(self, stem: str) -> Path:
        """pkcs12/STEM.p12: the end entity's key and certificate, password `password` (RC2: OpenSSL 3's legacy provider)."""
        return self.root / "pkcs12" / f"{stem}.p12"


def pem(der: bytes, label: str) -> str:
    """DER as one PEM block (a CRL cryptography refuses is still written whole)."""
    body = base64.encodebytes(der).decode().replace("\n", "")
    return f"-----BEGIN {label}-----\n" + "\n".join(body[i:i + 64] for i in range(0, len(body), 64)) + \
           f"\n-----END {label}-----\n"


def now() -> datetime:
    return datetime.now(timezone.utc)


__all__ = ["ANCHOR", "Cert", "Crl", "PACKAGE", "SUITE", "Suite", "SuiteError", "now", "pem"]
