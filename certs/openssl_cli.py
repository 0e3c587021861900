"""The rows cryptography 38 cannot make, made with the openssl CLI (`openssl ca`).

cryptography always writes v3 and refuses explicit-curve EC keys ("ECDSA keys with
explicit parameters are unsupported"); `openssl ca` writes v1 when no extension
section is given, signs any key it can read, and takes pinned -startdate/-enddate
(`openssl x509` in 3.0 has no way to set notBefore).
"""
from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import serialization

from pki import Issued, PkiError, defaults_for, key_pem, new_key, serial_for, subject_for, validity

CA_CONFIG = """\
[ca]
default_ca = lab
[lab]
database = {dir}/index.txt
new_certs_dir = {dir}
serial = {dir}/serial
default_md = {md}
policy = any
unique_subject = no
[any]
organizationName = optional
commonName = supplied
"""
KU_NAMES = {"digitalSignature": "digitalSignature", "keyEncipherment": "keyEncipherment",
            "keyCertSign": "keyCertSign", "cRLSign": "cRLSign"}


def run(argv: list[str], row: str) -> bytes:
    proc = subprocess.run(argv, capture_output=True)
    if proc.returncode != 0:
        raise PkiError(f"row {row}: {' '.join(argv[:3])} failed: {proc.stderr.decode(errors='replace').strip()[-400:]}")
    return proc.stdout


def openssl_key(row: dict) -> bytes:
    if row.get("key") == "explicit-p256":
        # The named curve P-256, written out as explicit field, curve and generator parameters.
        return run(["openssl", "ecparam", "-name", "prime256v1", "-param_enc", "explicit", "-genkey", "-noout"],
                   row["name"])
    return key_pem(new_key(row.get("key", "p256")))


def extension_section(row: dict) -> str:
    """The v3 extensions as an openssl config section; '' for a v1 certificate."""
    if row.get("version") == 1:
        return ""
    d = {**defaults_for(row), **row}
    lines = ["[ext]", "subjectKeyIdentifier = hash"]
    if row.get("issuer", "self") != "self":
        lines.append("authorityKeyIdentifier = keyid")
    bc = d["basic_constraints"]
    if bc != "none":
        lines.append("basicConstraints = critical," + ("CA:TRUE" + (f",pathlen:{bc.split(':')[1]}" if ":" in bc else "")
                                                      if bc.startswith("ca") else "CA:FALSE"))
    if d["key_usage"]:
        lines.append("keyUsage = critical," + ",".join(KU_NAMES[k] for k in d["key_usage"]))
    if d["eku"]:
        lines.append("extendedKeyUsage = " + ",".join(d["eku"]))
    if d.get("san"):
        lines.append("subjectAltName = " + ",".join(n.replace("dns:", "DNS:").replace("ip:", "IP:") for n in d["san"]))
    return "\n".join(lines) + "\n"


def make_with_openssl(row: dict, issuer, defaults: dict, registry: dict, out: Path) -> Issued:
    unsupported = set(row) & {"name_constraints", "unknown_ext", "tamper", "subject_as", "aki", "san_fill"}
    if unsupported:
        raise PkiError(f"row {row['name']}: the openssl tool does not do {sorted(unsupported)}")
    not_before, not_after = validity(row, defaults)
    md = row.get("hash", "sha256")
    with tempfile.TemporaryDirectory(prefix="tlslab-ca-") as tmp:
        d = Path(tmp)
        (d / "index.txt").write_text("")
        (d / "serial").write_text(format(serial_for(row["name"]), "x") + "\n")
        (d / "ca.cnf").write_text(CA_CONFIG.format(dir=d, md=md) + extension_section(row))
        key = openssl_key(row)
        (d / "key.pem").write_bytes(key)
        if issuer is None:
            signer = ["-selfsign", "-keyfile", str(d / "key.pem")]
        else:
            (d / "issuer.pem").write_bytes(issuer.cert.public_bytes(serialization.Encoding.PEM))
            (d / "issuer.key").write_bytes(issuer.key_pem)
            signer = ["-cert", str(d / "issuer.pem"), "-keyfile", str(d / "issuer.key")]
        subject = "".join(f"/{a.rfc4514_attribute_name}={a.value}" for a in subject_for(row, registry))
        run(["openssl", "req", "-new", "-key", str(d / "key.pem"), "-subj", subject, "-out", str(d / "req.csr")],
            row["name"])
        run(["openssl", "ca", "-batch", "-notext", "-preserveDN", "-config", str(d / "ca.cnf"), *signer,
             "-in", str(d / "req.csr"), "-out", str(d / "cert.pem"),
             "-startdate", not_before.strftime("%Y%m%d%H%M%SZ"), "-enddate", not_after.strftime("%Y%m%d%H%M%SZ"),
             *(["-extensions", "ext"] if extension_section(row) else [])], row["name"])
        cert = x509.load_pem_x509_certificate((d / "cert.pem").read_bytes())
    loaded = None if row.get("key") == "explicit-p256" else serialization.load_pem_private_key(key, None)
    return Issued(row["name"], cert, loaded, key, issuer, row, "openssl")
