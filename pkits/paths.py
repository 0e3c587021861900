"""A test's path, built by the lab out of the suite's certificates, and the CRLs that go with it.

    served = serve(suite, "InvalidRevokedEETest3EE")
    served.path      # the end entity, its issuers, the trust anchor last
    served.extras    # the certificates a CRL of the test needs that the path lacks (a CRL signer)
    served.crls      # every CRL of an issuer on either: by the CA's name or a cRLIssuer of a distribution point

Issuer by name and key identifier: a certificate's issuer is the suite's CA certificate whose subject
is its issuer name and whose subjectKeyIdentifier is its authorityKeyIdentifier; by the name alone
when the key identifiers do not meet (or are absent); by the key identifier alone when no name
matches (4.3.1 and 4.3.2 chain only so: their names are what the tests break). Two candidates
either way is an error, never a guess.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat, pkcs12

from .suite import Cert, Crl, Suite, pem

MAX_PATH = 12


class PathError(Exception):
    """No path, or more than one: the test cannot be served as the lab builds paths."""


def one(found: list, what: str):
    if len(found) > 1:
        raise PathError(f"{what}: {len(found)} candidates ({', '.join(c.stem for c in found)})")
    return found[0] if found else None


def issuer_of(cert: Cert, suite: Suite) -> Optional[Cert]:
    """The CA certificate that issued CERT (the module's rule), or None."""
    pool = [c for c in suite.certs.values() if not c.is_end_entity and c is not cert]
    by_name = [c for c in pool if c.subject == cert.issuer]
    if cert.aki is not None:
        both = [c for c in by_name if c.ski == cert.aki]
        if both or not by_name:
            return one(both or [c for c in pool if c.ski == cert.aki], f"issuer of {cert.stem}")
    return one(by_name, f"issuer of {cert.stem}")


def path_to_anchor(cert: Cert, suite: Suite) -> list[Cert]:
    """CERT, its issuer, ..., the trust anchor."""
    path = [cert]
    while path[-1] is not suite.anchor:
        if len(path) > MAX_PATH:
            raise PathError(f"{cert.stem}: no anchor within {MAX_PATH} certificates")
        issuer = issuer_of(path[-1], suite)
        if issuer is None or issuer in path:
            raise PathError(f"{cert.stem}: {path[-1].stem} has no issuer in the suite"
                            + (" but one already on the path" if issuer else ""))
        path.append(issuer)
    return path


def signer_of(crl: Crl, suite: Suite) -> Optional[Cert]:
    """The certificate that signed CRL: its issuer's name and, when the CRL says, its key identifier."""
    named = [c for c in suite.certs.values() if c.subject == crl.issuer and not c.is_end_entity]
    keyed = [c for c in named if crl.aki is not None and c.ski == crl.aki]
    return one(keyed or named, f"signer of {crl.stem}")


@dataclass
class Served:
    ee: Cert
    path: list[Cert]
    extras: list[Cert] = field(default_factory=list)
    crls: list[Crl] = field(default_factory=list)

    @property
    def chain(self) -> list[Cert]:
        """What the server sends after its certificate: the path's CAs, then the extras (no anchor)."""
        return [c for c in self.path[1:] + self.extras if c is not self.path[-1]]


def serve(suite: Suite, ee_stem: str) -> Served:
    """The path of EE_STEM and, to a fixed point, the CRLs of every issuer named on it and the
    paths of their signers (an indirect CRL's issuer, a separate CRL-signing key)."""
    ee = suite.certs.get(ee_stem)
    if ee is None:
        raise PathError(f"{ee_stem}: not a certificate of the suite (certs/{ee_stem}.crt)")
    served = Served(ee, path_to_anchor(ee, suite))
    while True:
        held = served.path + served.extras
        names = {c.subject for c in held} | {n for c in held for n in c.crl_issuers}
        crls, seen = [], set()
        for crl in suite.crls.values():
            if crl.issuer in names and crl.der not in seen:   # WrongCRLCACRL is TrustAnchorRootCRL's bytes
                crls.append(crl)
                seen.add(crl.der)
        more = []
        for crl in crls:
            signer = signer_of(crl, suite)
            if signer is not None and signer not in held + more:
                more += [c for c in path_to_anchor(signer, suite) if c not in held + more]
        served.crls = crls
        if not more:
            return served
        served.extras += more


@dataclass
class Files:
    """The PEM files of one end entity's test, in a run's work folder."""
    leaf: Path
    key: Path
    chain: Optional[Path]    # None: the path has no CA but the anchor
    crls: Optional[Path]     # None: no issuer on the path has a CRL in the suite


def write_files(suite: Suite, served: Served, folder: Path) -> Files:
    """FOLDER/leaf.pem, key.pem (from pkcs12/EE.p12), chain.pem, crls.pem."""
    folder.mkdir(parents=True, exist_ok=True)
    files = Files(folder / "leaf.pem", folder / "key.pem",
                  folder / "chain.pem" if served.chain else None, folder / "crls.pem" if served.crls else None)
    files.leaf.write_text(pem(served.ee.der, "CERTIFICATE"))
    key, _, _ = pkcs12.load_key_and_certificates(suite.key_file(served.ee.stem).read_bytes(), b"password")
    files.key.write_bytes(key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()))
    if files.chain:
        files.chain.write_text("".join(pem(c.der, "CERTIFICATE") for c in served.chain))
    if files.crls:
        files.crls.write_text("".join(pem(c.der, "X509 CRL") for c in served.crls))
    return files
