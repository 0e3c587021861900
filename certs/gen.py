#!/usr/bin/python3
"""Generate every certificate the lab serves or trusts, from certs/pki.toml.

    /usr/bin/python3 certs/gen.py --out build/certs/out

Writes NAME.pem (the certificate, then its issuers up to but not including the
self-signed root: the chain a server sends), NAME.key (its private key, PEM), one
file per [[bundle]], NAME.crl per [[crl]], NAME.ocsp (DER) per [[ocsp]], and manifest.json (every row of pki.toml with its files, the
tool that made it and the reason it exists). Keys are random; names, serials,
dates and extensions are fixed by pki.toml, so the structure is the same on every
run. The folder is emptied of .pem/.key/.crl files first, so nothing stale survives.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tomllib
from pathlib import Path

from ocsp import ocsp_der
from openssl_cli import make_with_openssl
from pki import (Issued, PkiError, bundle_pem, check_row, crl_pem, lookup, make_with_cryptography,
                 make_with_trustme)

HERE = Path(__file__).resolve().parent


def make_cert(row: dict, registry: dict, defaults: dict, out: Path) -> Issued:
    """One [[cert]] row by its tool: cryptography (pki.py), trustme, or the openssl CLI (openssl_cli.py)."""
    check_row(row, defaults)
    if row["name"] in registry:
        raise PkiError(f"row {row['name']}: defined twice")
    issuer = None if row.get("issuer", "self") == "self" else lookup(registry, row["issuer"], row["name"])
    tool = row.get("tool", "cryptography")
    if tool == "cryptography":
        return make_with_cryptography(row, issuer, defaults, registry)
    if tool == "trustme":
        return make_with_trustme(row, issuer)
    if tool == "openssl":
        return make_with_openssl(row, issuer, defaults, registry, out)
    raise PkiError(f"row {row['name']}: unknown tool {tool!r}")



def load_spec(path: Path) -> dict:
    try:
        with path.open("rb") as f:
            return tomllib.load(f)
    except tomllib.TOMLDecodeError as e:
        raise PkiError(f"{path}: {e}") from e


def table_lines(text: str, table: str) -> list[int]:
    """The line of each [[table]] header, in order."""
    return [n for n, line in enumerate(text.splitlines(), 1) if line.strip() == f"[[{table}]]"]


def at_line(spec_path: Path, line: int, err: Exception) -> PkiError:
    return PkiError(f"{spec_path}:{line}: {err}")


def write_cert(out: Path, made: Issued) -> list[str]:
    chain = out / f"{made.name}.pem"
    chain.write_bytes(made.chain_pem())
    files = [chain.name]
    if made.key_pem:
        key = out / f"{made.name}.key"
        key.write_bytes(made.key_pem)
        key.chmod(0o600)
        files.append(key.name)
    return files


def generate(spec_path: Path, out: Path) -> dict:
    spec = load_spec(spec_path)
    out.mkdir(parents=True, exist_ok=True)
    for stale in [*out.glob("*.pem"), *out.glob("*.key"), *out.glob("*.crl"), *out.glob("*.ocsp"),
                  *out.glob("manifest.json")]:
        stale.unlink()
    registry: dict[str, Issued] = {}
    manifest: dict = {"generator": "certs/gen.py", "spec": "certs/pki.toml",
                      "spec_sha256": hashlib.sha256(spec_path.read_bytes()).hexdigest(),
                      "certs": {}, "bundles": {}, "crls": {}, "ocsp": {}}
    text = spec_path.read_text()
    for row, line in zip(spec.get("cert", []), table_lines(text, "cert")):
        try:
            made = make_cert(row, registry, spec.get("defaults", {}), out)
        except (PkiError, ValueError, KeyError, TypeError) as e:
            raise at_line(spec_path, line, e) from e
        registry[made.name] = made
        manifest["certs"][made.name] = {**made.describe(), "files": write_cert(out, made)}
    for row, line in zip(spec.get("bundle", []), table_lines(text, "bundle")):
        try:
            (out / f"{row['name']}.pem").write_bytes(bundle_pem(row, registry))
        except (PkiError, KeyError) as e:
            raise at_line(spec_path, line, e) from e
        manifest["bundles"][row["name"]] = {"files": [f"{row['name']}.pem"], "certs": row["certs"], "what": row["what"]}
    for row, line in zip(spec.get("crl", []), table_lines(text, "crl")):
        try:
            (out / f"{row['name']}.crl").write_bytes(crl_pem(row, registry, spec["defaults"]))
        except (PkiError, KeyError) as e:
            raise at_line(spec_path, line, e) from e
        manifest["crls"][row["name"]] = {"files": [f"{row['name']}.crl"], "issuer": row["issuer"],
                                         "revoked": row["revoked"], "what": row["what"], "tool": "cryptography"}
    for row, line in zip(spec.get("ocsp", []), table_lines(text, "ocsp")):
        try:
            (out / f"{row['name']}.ocsp").write_bytes(ocsp_der(row, registry, out))
        except (PkiError, KeyError) as e:
            raise at_line(spec_path, line, e) from e
        manifest["ocsp"][row["name"]] = {"files": [f"{row['name']}.ocsp"], "cert": row["cert"],
                                         "status": row["status"], "what": row["what"],
                                         "tool": row.get("tool", "openssl")}
    entries = [*manifest["certs"].values(), *manifest["bundles"].values(), *manifest["crls"].values(),
               *manifest["ocsp"].values()]
    manifest["files"] = sorted(f for entry in entries for f in entry["files"])
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return manifest


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True, type=Path, help="output folder (under the build tree)")
    p.add_argument("--spec", default=HERE / "pki.toml", type=Path, help="certificate table (default certs/pki.toml)")
    args = p.parse_args()
    try:
        manifest = generate(args.spec, args.out)
    except PkiError as e:
        print(f"gen.py: {e}", file=sys.stderr)
        return 2
    print(f"gen.py: {len(manifest['certs'])} certificates, {len(manifest['bundles'])} bundles, "
          f"{len(manifest['crls'])} CRLs, {len(manifest['ocsp'])} OCSP responses in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
