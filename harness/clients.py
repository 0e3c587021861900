"""Clients under test: each a profile (clients/NAME/profile.toml, clients/README.md) the lab reads.

    profile = find_client("go", build=Path("build"))     # or a path to any profile.toml
    run_client(profile.command, args, ...)

A profile that cannot be used (an unknown name, a missing key, a program that is not
installed) raises ClientError with one line naming the client and the problem.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from .layout import ROOT
from .rows import RowError, load_table

CLIENTS = ROOT / "clients"
UNSUPPORTED_EXIT = 89       # the contract: a case the client cannot do; a SKIP, never a pass
OPTIONAL_FLAGS = ("--transport", "--resume", "--hold-ms", "--sigpipe", "--partial-chain", "--verify-depth",
                  "--system-trust", "--ns", "--dns-udp", "--dns-timeout-ms", "--allow-private",
                  "--crl", "--crl-all", "--ocsp-staple", "--cert", "--key", "--pin-sha256", "--no-verify-name",
                  # RFC 5280 6.1.1's policy inputs (pkits/: the settings of NIST's tests)
                  "--policy", "--explicit-policy", "--inhibit-policy-mapping", "--inhibit-any-policy")
# key -> (type, required)
PROFILE_KEYS = {"name": (str, True), "library": (str, True), "command": (list, True), "requires": (list, False),
                "packages": (list, False), "flags": (list, True), "shim_sees_io": (bool, True),
                "reference": (bool, False), "error_map": (dict, False), "disabled": (dict, False),
                "outcome_as": (dict, False), "heap_env": (dict, False)}


class ClientError(Exception):
    """A client the lab cannot run: one line, naming the client."""


@dataclass
class Profile:
    name: str
    path: Path                       # the profile.toml
    library: str
    command: list[str]               # placeholders expanded
    flags: list[str]
    shim_sees_io: bool
    requires: list[str] = field(default_factory=list)
    packages: list[str] = field(default_factory=list)
    reference: bool = False
    error_map: dict = field(default_factory=dict)
    disabled: dict[str, str] = field(default_factory=dict)
    # "label:case" -> {outcome, why}: a row whose question is not its outcome (a leak row asks what is
    # left after the attempts) held to this client's outcome for the same path, with the reason
    outcome_as: dict[str, dict] = field(default_factory=dict)
    # NAME -> {value, why}: the environment the client runs with under the heap shim (leaks/), so
    # that the shim sees its runtime's objects (CPython: PYTHONMALLOC=malloc)
    heap_env: dict[str, dict] = field(default_factory=dict)

    def heap_environment(self) -> dict[str, str]:
        """heap_env's variables and values, for a run under the heap shim."""
        return {k: v["value"] for k, v in self.heap_env.items()}

    @property
    def room(self) -> Path:
        return self.path.parent

    @property
    def program(self) -> str:
        """The process name the LD_PRELOAD shims act in: the program's own file, links resolved
        (/usr/bin/python3 runs as python3.11)."""
        return Path(os.path.realpath(self.command[0])).name

    def has(self, flag: str) -> bool:
        return flag in self.flags

    def disabled_reason(self, label: str, *cases: str) -> Optional[str]:
        """The profile's reason for not asking any of CASES (a case id, or its row's name) of LABEL."""
        return next((self.disabled[f"{label}:{c}"] for c in cases if f"{label}:{c}" in self.disabled), None)

    def lacks(self, args: str) -> Optional[str]:
        """The first optional flag of the contract in ARGS that this client does not offer, or None."""
        return next((a for a in args.split() if a in OPTIONAL_FLAGS and a not in self.flags), None)

    def outcome_for(self, label: str, case: str, outcome: str) -> str:
        """The outcome this client is held to where a row of LABEL expects OUTCOME (outcome_as)."""
        return self.outcome_as.get(f"{label}:{case}", {}).get("outcome", outcome)

    def check_installed(self) -> None:
        missing = [r for r in self.requires if not Path(r).exists()]
        if missing:
            raise ClientError(f"client {self.name}: not installed: {missing[0]} is missing "
                              f"(build it, or install {', '.join(self.packages) or 'what its README says'})")


def expand(text: str, build: Path) -> str:
    return text.replace("{root}", str(ROOT)).replace("{build}", str(build))


def load_profile(path: Path, build: Path) -> Profile:
    """The profile at PATH, every key checked: ClientError (file:line and the client's name) otherwise."""
    try:
        data = load_table(path)
    except RowError as e:
        raise ClientError(f"client profile {e}") from e
    name = data.get("name", path.parent.name)
    for key, value in data.items():
        if key not in PROFILE_KEYS:
            raise ClientError(f"client {name}: {path}: unknown key {key!r} (known: {', '.join(PROFILE_KEYS)})")
        kind, _ = PROFILE_KEYS[key]
        if not isinstance(value, kind):
            raise ClientError(f"client {name}: {path}: {key} must be a {kind.__name__}")
    missing = [k for k, (_, required) in PROFILE_KEYS.items() if required and k not in data]
    if missing:
        raise ClientError(f"client {name}: {path}: missing key {missing[0]!r} (clients/README.md lists the keys)")
    unknown = [f for f in data["flags"] if f not in OPTIONAL_FLAGS]
    if unknown:
        raise ClientError(f"client {name}: {path}: flags: {unknown[0]!r} is not an optional flag of the contract "
                          f"({', '.join(OPTIONAL_FLAGS)})")
    if not data["command"] or not all(isinstance(a, str) for a in data["command"]):
        raise ClientError(f"client {name}: {path}: command must be a non-empty list of strings")
    for key, entry in data.get("error_map", {}).items():
        if not isinstance(entry, dict) or "outcome" not in entry:
            raise ClientError(f"client {name}: {path}: error_map {key!r} needs an outcome (and a note where lossy)")
    for case, why in data.get("disabled", {}).items():
        if ":" not in case or not isinstance(why, str) or not why.strip():
            raise ClientError(f"client {name}: {path}: disabled {case!r} must be \"label:case\" = \"reason\"")
    for case, entry in data.get("outcome_as", {}).items():
        if ":" not in case or not isinstance(entry, dict) or not entry.get("outcome") or not str(entry.get("why", "")).strip():
            raise ClientError(f"client {name}: {path}: outcome_as {case!r} must be \"label:case\" = {{ outcome, why }}")
    for var, entry in data.get("heap_env", {}).items():
        if not isinstance(entry, dict) or not isinstance(entry.get("value"), str) or not str(entry.get("why", "")).strip() \
                or set(entry) - {"value", "why"}:
            raise ClientError(f"client {name}: {path}: heap_env {var!r} must be NAME = {{ value = \"...\", why = \"...\" }}")
    return Profile(name=name, path=path.resolve(), library=data["library"],
                   command=[expand(a, build) for a in data["command"]], flags=list(data["flags"]),
                   shim_sees_io=data["shim_sees_io"], requires=[expand(r, build) for r in data.get("requires", [])],
                   packages=list(data.get("packages", [])), reference=data.get("reference", False),
                   error_map=data.get("error_map", {}), disabled=data.get("disabled", {}),
                   outcome_as=data.get("outcome_as", {}), heap_env=data.get("heap_env", {}))


def find_client(name_or_path: str, build: Path) -> Profile:
    """A client by room name (clients/NAME/profile.toml) or by a profile's path."""
    path = Path(name_or_path)
    if path.suffix == ".toml" or "/" in name_or_path:   # a path; a bare word is a room of clients/
        path = path / "profile.toml" if path.is_dir() else path
        if not path.is_file():
            raise ClientError(f"client profile {name_or_path}: no such file")
    else:
        path = CLIENTS / name_or_path / "profile.toml"
        if not path.is_file():
            known = ", ".join(sorted(p.parent.name for p in CLIENTS.glob("*/profile.toml")))
            raise ClientError(f"client {name_or_path!r}: unknown (clients with a profile: {known})")
    return load_profile(path, build)


def gate_client(name_or_path: Optional[str], tlsnb: str, build: Optional[Path]) -> Profile:
    """The client a gate asks: the one --client names (installed), or the reference, whose profile
    is clients/tlsnb's with the gate's own --tlsnb as its program (a mutant's, in the mutants gate)."""
    build = build or Path(tlsnb).resolve().parent.parent
    if name_or_path:
        client = find_client(name_or_path, build)
        client.check_installed()
        return client
    reference = load_profile(CLIENTS / "tlsnb" / "profile.toml", build)
    reference.command = reference.requires = [tlsnb]
    return reference


def all_clients(build: Path) -> list[Profile]:
    """Every profile under clients/, the reference first."""
    found = [load_profile(p, build) for p in sorted(CLIENTS.glob("*/profile.toml"))]
    return sorted(found, key=lambda p: (not p.reference, p.name))
