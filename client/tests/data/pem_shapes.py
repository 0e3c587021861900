#!/usr/bin/python3
"""The static PKI of client.toml's pem/* rows: PEM files of shapes build/certs/out has none of.

certs/gen.py makes new keys on every build, so a file holding a copy of its certificates or CRLs
would go stale; a case row cannot run a shell to put one together. These rows serve and trust a
PKI of their own instead, made once by this script and kept beside it (valid 2020-01-01 to
2049-12-31, as the lab's CRLs): a root, a leaf for hooks.test it signs (the tls peer serves it:
the row gives tls_server.py its --chain/--key after the lab's, and the last one given is used),
two CRLs of the root, and the files the rows hand tlsnb:

    pem-ca.pem                      the root alone (the control: the plain file)
    pem-ca-commented.pem            text lines, then the root: OpenSSL's PEM reader passes over text
                                    before a BEGIN line
    pem-leaf.pem, pem-leaf.key      what the server sends
    pem-cert-then-crl.pem           a certificate, then the root's CRL that revokes nothing
    pem-cert-then-revoking-crl.pem  a certificate, then the root's CRL that revokes the leaf
    pem-ca-then-crl.pem             the root, then its CRL: given as --crl beside another CA file, its
                                    certificate must not become a trust anchor

    /usr/bin/python3 -m client.tests.data.pem_shapes     # from the repository root: rewrites them all
"""
from __future__ import annotations

import datetime
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

HERE = Path(__file__).resolve().parent
BEGIN, END = datetime.datetime(2020, 1, 1), datetime.datetime(2049, 12, 31, 23, 59, 59)
LEAF_SERIAL = 0x5E_ED_0001
COMMENT = """# pem-ca: the root of client.tsv's pem/* rows (client/tests/data/pem_shapes.py)
Subject: O=tlslab, CN=pem-shapes ca
(text before the BEGIN line: OpenSSL's PEM reader passes over it)
"""


def name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "tlslab"), x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def crl(ca: x509.Certificate, key, revoked: list[int], number: int) -> bytes:
    builder = (x509.CertificateRevocationListBuilder().issuer_name(ca.subject).last_update(BEGIN).next_update(END)
               .add_extension(x509.CRLNumber(number), critical=False)
               .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(key.public_key()), critical=False))
    for serial in revoked:
        builder = builder.add_revoked_certificate(
            x509.RevokedCertificateBuilder().serial_number(serial).revocation_date(BEGIN).build())
    return builder.sign(key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM)


def main() -> None:
    ca_key, leaf_key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca = (x509.CertificateBuilder().subject_name(name("pem-shapes ca")).issuer_name(name("pem-shapes ca"))
          .public_key(ca_key.public_key()).serial_number(0x5E_ED_0000).not_valid_before(BEGIN).not_valid_after(END)
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False, key_encipherment=False,
                                       data_encipherment=False, key_agreement=False, key_cert_sign=True, crl_sign=True,
                                       encipher_only=False, decipher_only=False), critical=True)
          .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
          .sign(ca_key, hashes.SHA256()))
    leaf = (x509.CertificateBuilder().subject_name(name("hooks.test")).issuer_name(ca.subject)
            .public_key(leaf_key.public_key()).serial_number(LEAF_SERIAL).not_valid_before(BEGIN).not_valid_after(END)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("hooks.test")]), critical=False)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256()))
    files = {
        "pem-ca.pem": pem(ca),
        "pem-ca-commented.pem": COMMENT.encode() + pem(ca),
        "pem-leaf.pem": pem(leaf),
        "pem-leaf.key": leaf_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                               serialization.NoEncryption()),
        "pem-cert-then-crl.pem": pem(leaf) + crl(ca, ca_key, [], 1),
        "pem-cert-then-revoking-crl.pem": pem(leaf) + crl(ca, ca_key, [LEAF_SERIAL], 2),
        "pem-ca-then-crl.pem": pem(ca) + crl(ca, ca_key, [], 1),
    }
    for file, body in files.items():
        (HERE / file).write_bytes(body)
        print(f"{HERE / file}: {len(body)} bytes")


if __name__ == "__main__":
    main()
