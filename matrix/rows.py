"""matrix/rows.toml: load it and refuse anything malformed before a single connection.

A malformed row (unknown key, missing certificate, unknown outcome name, a failure
row without a control) raises RowError naming the file and line; the runner exits 2.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional, Union

from harness.outcomes import OutcomeNames, UnknownOutcome
from harness.rows import RowError, TomlRow, expand_globs, load_toml

VERSIONS = ("1.2", "1.3")
TRANSPORTS = ("bio", "fd")
SERVERS = ("lab", "s_server")      # tls_server.py, openssl s_server
SERVER_VERSIONS = ("1.0", "1.1", "1.2", "1.3")
GROUPS = ("chain", "ca", "time", "revocation", "names", "no-verify-name", "keys", "constraints", "precedence", "protocol",
          "trustme", "identity")
# key -> (type, required). `bio`/`fd` may also be a table keyed by client version ("1.2"), or by
# version and server ("1.2 lab") where the two servers end a cell differently; `depth` by "bio 1.2".
ROW_KEYS: dict[str, tuple[type, bool]] = {
    "name": (str, True), "group": (str, True), "reason": (str, True),
    "chain": (str, True), "key": (str, True),                       # the server's chain and key (cert files)
    "server_min": (str, False), "server_max": (str, False), "ciphers": (str, False),
    "server_seclevel": (int, False),  # the servers' OpenSSL security level (OPENSSL_CONF), e.g. 0 to load RSA-1024
    "host": (str, False),             # --name (default hooks.test)
    "cafile": (str, False),           # --cafile (default ca.pem; "" for none)
    "no_verify": (bool, False), "partial_chain": (bool, False), "verify_depth": (int, False),
    "no_verify_name": (bool, False),  # --no-verify-name: the chain verified, the name not matched
    "versions": (list, False),        # client --tls-max values crossed (default 1.2 and 1.3)
    "bio": (object, False), "fd": (object, False), "depth": (object, False),
    "control": (str, False),          # the nearest row that succeeds (required for failure rows)
    "interop": (bool, False),         # also run against openssl s_server (default true)
    "interop_why": (str, False),      # why not, when interop = false
    "servers_differ": (str, False),   # why an expectation names a server ("1.2 lab"): the peers end it differently
    "lab": (bool, False),             # also run against tls_server.py (default true)
    "lab_why": (str, False),          # why not, when lab = false (a server feature Python's ssl lacks)
    # the server's side of revocation and identity
    "staple": (str, False),           # an OCSP response file (certs/*.ocsp) stapled by s_server (-status_file)
    "client_ca": (str, False),        # the server asks for a client certificate and verifies it against this
    "client_optional": (bool, False), # ... asks without requiring one (default: required)
    # the client's side: tlsnb --crl (each), --crl-all, --ocsp-staple, --cert/--key, --pin-sha256 (the
    # SPKI pin of each named certificate, read from the manifest), --hold-ms (read what arrives after
    # the handshake: a TLS 1.3 server's refusal of the client certificate)
    "crl": (list, False), "crl_all": (bool, False), "ocsp_staple": (str, False),
    "client_cert": (str, False), "client_key": (str, False), "pins": (list, False), "hold_ms": (int, False),
}
STAPLE_POLICIES = ("off", "check", "require")

Expect = Union[str, dict]


def cell_value(value, version: str, server: str):
    """An expectation's value for one cell: VALUE itself, or its table's entry for "VERSION SERVER",
    else for "VERSION"."""
    if isinstance(value, dict):
        return value.get(f"{version} {server}", value.get(version))
    return value


class Row(TomlRow):
    """One [[row]] of rows.toml."""

    @property
    def versions(self) -> list[str]:
        return self.fields.get("versions", list(VERSIONS))

    @property
    def servers(self) -> list[str]:
        return [s for s in SERVERS if self.fields.get({"lab": "lab", "s_server": "interop"}[s], True)]

    @property
    def failure(self) -> bool:
        return any(self.expected(t, v, s) not in ("ok", None)
                   for t in TRANSPORTS for v in self.versions for s in self.servers)

    def expected(self, transport: str, version: str, server: str) -> Optional[str]:
        return cell_value(self.fields.get(transport), version, server)

    def expected_depth(self, transport: str, version: str) -> Optional[int]:
        value = self.fields.get("depth")
        if isinstance(value, dict):
            return value.get(f"{transport} {version}", value.get(version))
        return value


class RowFile:
    def __init__(self, path: Path, certs: Path, names: OutcomeNames, require_expectations: bool = True):
        self.path, self.certs, self.names = path, certs, names
        self.rows = [Row(r.fields, r.line, r.path, r.key_lines) for r in load_toml(path, "row", ROW_KEYS)]
        self.require_expectations = require_expectations
        self._check_all()

    def fail(self, row: Row, key: Optional[str], message: str) -> RowError:
        return row.error(key, message)

    def _check_all(self) -> None:
        manifest_files = self._manifest_files()
        seen = {row.name: row for row in self.rows}
        for row in self.rows:
            self._check_expectations_present(row)
            self._check_values(row, manifest_files)
        for row in self.rows:
            control = row.get("control")
            if control is not None and control not in seen:
                raise self.fail(row, "control", f"control {control!r} is not a row")
            if self.require_expectations and row.failure and control is None:
                raise self.fail(row, None, "a failure row needs a control (the nearest row that succeeds)")

    def _manifest_files(self) -> set[str]:
        import json
        manifest = self.certs / "manifest.json"
        try:
            data = json.loads(manifest.read_text())
            self.pins = {name: cert.get("spki_sha256") for name, cert in data["certs"].items()}
            return set(data["files"])
        except (OSError, ValueError, KeyError) as e:
            raise RowError(f"{manifest}:1: not a certs manifest ({e}); build the 'certs' target") from e

    def pin_of(self, cert: str) -> Optional[str]:
        """RFC 7469's pin-sha256 of a certificate of the manifest (gen.py computed it)."""
        return self.pins.get(cert)

    def _check_expectations_present(self, row: Row) -> None:
        if self.require_expectations:
            for key in TRANSPORTS:
                if key not in row.fields:
                    raise self.fail(row, None, f"missing expectation {key!r} (run with --update to record one)")

    def _check_values(self, row: Row, manifest_files: set[str]) -> None:
        if row.get("group") not in GROUPS:
            raise self.fail(row, "group", f"group must be one of {', '.join(GROUPS)}")
        for key in ("chain", "key", "cafile", "staple", "client_ca", "client_cert", "client_key"):
            value = row.get(key)
            if value and (value not in manifest_files or not (self.certs / value).is_file()):
                raise self.fail(row, key, f"certificate file {value!r} is not in {self.certs}/manifest.json")
        for value in row.get("crl", []):
            if value not in manifest_files:
                raise self.fail(row, "crl", f"CRL file {value!r} is not in {self.certs}/manifest.json")
        for value in row.get("pins", []):
            if not self.pin_of(value):
                raise self.fail(row, "pins", f"{value!r} is not a certificate with a pin in {self.certs}/manifest.json")
        if row.get("ocsp_staple", "off") not in STAPLE_POLICIES:
            raise self.fail(row, "ocsp_staple", f"ocsp_staple must be one of {', '.join(STAPLE_POLICIES)}")
        if not row.servers:
            raise self.fail(row, "lab", "lab = false and interop = false leave no server")
        if row.get("lab") is False and not row.get("lab_why"):
            raise self.fail(row, "lab", "lab = false needs lab_why")
        for key in ("server_min", "server_max"):
            if key in row.fields and row.get(key) not in SERVER_VERSIONS:
                raise self.fail(row, key, f"{key} must be one of {', '.join(SERVER_VERSIONS)}")
        bad = [v for v in row.versions if v not in VERSIONS]
        if bad or not row.versions:
            raise self.fail(row, "versions", f"versions must be a non-empty list of {', '.join(VERSIONS)}")
        for transport in TRANSPORTS:
            self._check_expectation(row, transport)
        depth = row.get("depth")
        if depth is not None and not (isinstance(depth, int) or
                                      (isinstance(depth, dict) and all(isinstance(v, int) for v in depth.values()))):
            raise self.fail(row, "depth", "depth must be an integer or a table of integers")
        if not 0 <= row.get("server_seclevel", 0) <= 5:
            raise self.fail(row, "server_seclevel", "server_seclevel must be 0..5")
        split = any(isinstance(row.get(t), dict) and any(" " in k for k in row.get(t)) for t in TRANSPORTS)
        if row.get("servers_differ") and not split:
            raise self.fail(row, "servers_differ", "servers_differ explains nothing: no expectation names a server")
        if row.get("interop") is False and not row.get("interop_why"):
            raise self.fail(row, "interop", "interop = false needs interop_why")

    def _check_expectation(self, row: Row, transport: str) -> None:
        value = row.get(transport)
        if value is None:
            return
        texts = value.values() if isinstance(value, dict) else [value]
        for text in texts:
            if not isinstance(text, str):
                raise self.fail(row, transport, f"{transport} must be an outcome or a table of outcomes")
            try:
                self.names.parse(text)
            except UnknownOutcome as e:
                raise self.fail(row, transport, str(e)) from e
        if not isinstance(value, dict):
            return
        allowed = {*row.versions, *(f"{v} {s}" for v in row.versions for s in row.servers)}
        if set(value) - allowed:
            raise self.fail(row, transport, f"{transport} keys {sorted(set(value) - allowed)} are not among "
                                            f"{sorted(allowed)}")
        missing = [f"{v} {s}" for v in row.versions for s in row.servers if row.expected(transport, v, s) is None]
        if missing:
            raise self.fail(row, transport, f"{transport} says nothing for {', '.join(missing)}")
        if any(" " in k for k in value) and not row.get("servers_differ"):
            raise self.fail(row, transport, "an expectation that names a server needs servers_differ (why)")

    def select(self, names: list[str]) -> list[Row]:
        if not names:
            return self.rows
        known = {r.name: r for r in self.rows}
        names, empty = expand_globs(names, list(known))
        if empty:
            raise RowError(f"{self.path}:1: no row matches {', '.join(empty)}")
        missing = [n for n in names if n not in known]
        if missing:
            raise RowError(f"{self.path}:1: no row named {', '.join(missing)}")
        return [known[n] for n in names]
