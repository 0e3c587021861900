#!/usr/bin/python3
"""README tables written from the data they describe, never by hand: each sits between a pair of
markers in its README, `--write` rewrites every one, and `--check` (unit `harness_readme_tables`)
fails while a README says otherwise.

    <!-- table NAME: written by `python3 -m harness.readme_tables --write`; do not edit -->
    ...
    <!-- end of table NAME -->

The tables (TABLES below): matrix-rows (matrix/README.md, from matrix/rows.toml and certs/pki.toml),
hostile-rows and hostile-clients (hostile/README.md, from hostile/hostile.toml and the clients'
hostile.toml) and hang-guards (README.md, from the case rows, the clients' records and
bench/hang_guards.tsv). A count a README gives in a sentence sits between `<!-- count NAME -->` and
`<!-- /count -->` and is written the same way (COUNTS below).

    /usr/bin/python3 -m harness.readme_tables --check      # one line per README that disagrees
    /usr/bin/python3 -m harness.readme_tables --write
"""
from __future__ import annotations

import argparse
import csv
import functools
import re
import sys
import tomllib
from pathlib import Path
from typing import Callable

from harness.cases import CaseRow, load_cases
from harness.clients import Profile, load_profile

ROOT = Path(__file__).resolve().parent.parent
BEGIN = "<!-- table {name}: written by `python3 -m harness.readme_tables --write`; do not edit -->"
END = "<!-- end of table {name} -->"
COUNT = re.compile(r"<!-- count ([a-z0-9-]+) -->(.*?)<!-- /count -->", re.S)


# --- matrix/README.md: the rows -----------------------------------------------------------------

def outcome_text(value: str) -> str:
    """A recorded cell as the table shows it: ok, the X509_V_ERR_ name bare, ssl: and ocsp: reasons,
    the stage in front when it is not the handshake."""
    if value == "ok":
        return "ok"
    stage, _, name = value.partition("/")
    for prefix, shown in (("X509_V_ERR_", ""), ("SSL_R_", "ssl:"), ("OCSP_R_", "ocsp:")):
        if name.startswith(prefix):
            name = shown + name[len(prefix):]
    return name if stage == "handshake" else f"{stage} {name}"


def cells_text(value) -> str:
    if isinstance(value, dict):
        return "; ".join(f"{k}: {outcome_text(v)}" for k, v in value.items())
    return outcome_text(value) if value is not None else ""


def tools(pki: dict, chain: str) -> str:
    """The tools that made the certificates a chain file holds (certs/pki.toml: a bundle's certs, or
    the certificate and its issuers below the root; `tool`, cryptography unless it says)."""
    certs = {c["name"]: c for c in pki.get("cert", [])}
    name = chain.removesuffix(".pem")
    bundle = next((b for b in pki.get("bundle", []) if b["name"] == name), None)
    held = list(bundle["certs"]) if bundle else []
    if not bundle:
        at = certs.get(name)
        while at is not None and (at["name"] == name or "issuer" in at):
            held.append(at["name"])
            at = certs.get(at.get("issuer", ""))
    made: list[str] = []
    for cert in held:
        tool = certs.get(cert, {}).get("tool", "cryptography")
        if tool not in made:
            made.append(tool)
    return ", ".join(made) or "?"


def server_settings(row: dict) -> list[str]:
    out = []
    low, high = row.get("server_min"), row.get("server_max")
    ciphers, level = row.get("ciphers"), row.get("server_seclevel")
    if low or high:
        out.append(f"TLS {low or ''}..{high or ''}" + (f", {ciphers}" if ciphers else ""))
    elif ciphers:
        out.append(ciphers)
    if level is not None:
        if out:
            out[-1] += f", level {level}"
        else:
            out.append(f"level {level}")
    if row.get("client_ca"):
        out.append(f"{'asks' if row.get('client_optional') else 'requires'} a client cert of {row['client_ca']}")
    if row.get("staple"):
        out.append(f"staple {row['staple']}" + (", s_server only" if row.get("lab") is False else ""))
    return out


def client_flags(row: dict) -> str:
    flags = []
    if "host" in row:
        flags += ["--name", row["host"]]
    if "cafile" in row:
        flags += ["--cafile", row["cafile"]] if row["cafile"] else ["(no --cafile)"]
    for key, flag in (("no_verify", "--no-verify"), ("no_verify_name", "--no-verify-name"),
                      ("partial_chain", "--partial-chain")):
        if row.get(key):
            flags.append(flag)
    if "verify_depth" in row:
        flags += ["--verify-depth", str(row["verify_depth"])]
    for crl in row.get("crl", []):
        flags += ["--crl", crl]
    if row.get("crl_all"):
        flags += ["--crl-all"] + ([] if row.get("crl") else ["(no --crl)"])
    if row.get("ocsp_staple"):
        flags += ["--ocsp-staple", row["ocsp_staple"]]
    if row.get("client_cert"):
        flags += ["--cert", row["client_cert"]]
    for pin in row.get("pins", []):
        flags += ["--pin-sha256", f"({pin})"]
    if row.get("hold_ms"):
        flags += ["--hold-ms", str(row["hold_ms"])]
    if "versions" in row:
        flags += ["(TLS " + ", ".join(row["versions"]) + " only)"]
    return " ".join(flags)


def matrix_rows() -> str:
    rows = tomllib.loads((ROOT / "matrix" / "rows.toml").read_text())["row"]
    pki = tomllib.loads((ROOT / "certs" / "pki.toml").read_text())
    lines = ["| row | group | server chain (tool); settings | client flags | bio = fd | depth |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        server = "; ".join([f"{r['chain']} ({tools(pki, r['chain'])})", *server_settings(r)])
        bio, fd = cells_text(r.get("bio")), cells_text(r.get("fd"))
        outcome = bio if bio == fd else f"bio {bio}; fd {fd}"
        depth = r.get("depth", "")
        if isinstance(depth, dict):
            depth = "; ".join(f"{k}: {v}" for k, v in depth.items())
        lines.append(f"| {r['name']} | {r['group']} | {server} | {client_flags(r)} | {outcome} | {depth} |")
    return "\n".join(lines)


def matrix_counts() -> dict[str, str]:
    rows = tomllib.loads((ROOT / "matrix" / "rows.toml").read_text())["row"]
    groups = {r["group"] for r in rows}
    cells = sum(2 * len(r.get("versions", ["1.2", "1.3"])) * (r.get("lab", True) + r.get("interop", True)) for r in rows)
    return {"matrix-rows": str(len(rows)), "matrix-groups": str(len(groups)), "matrix-cells": str(cells)}


# --- hostile/README.md: the rows ---------------------------------------------------------------

OUTCOME_TERM = re.compile(r"^([a-z]+)/(-?\d+)(\*\d+)?$")


def detail_names() -> Callable[[str, int], str]:
    """(stage, detail) -> the name harness/outcomes.py gives it, ASN1_R_ reasons named too."""
    from harness.outcomes import ERR_LIB_SHIFT, OutcomeNames, _defines
    include = Path("/usr/include/openssl")
    names = OutcomeNames(include)
    lib_asn1 = _defines(include / "err.h", "ERR_LIB_ASN1")["ERR_LIB_ASN1"]
    asn1 = {(lib_asn1 << ERR_LIB_SHIFT) | reason: name for name, reason in _defines(include / "asn1err.h", "ASN1_R_").items()}
    return lambda stage, detail: f"{stage}/{asn1[detail]}" if detail in asn1 else names.name(stage, detail)


def expect_outcomes(expect: str, name: Callable[[str, int], str]) -> str:
    """The outcome terms of an expectation, each numbered one followed by its name."""
    shown = []
    for term in expect.split():
        alternatives = term.split("|")
        if not all(OUTCOME_TERM.match(a) for a in alternatives):
            continue
        parts = []
        for a in alternatives:
            m = OUTCOME_TERM.match(a)
            named = name(m[1], int(m[2]))
            parts.append(a if m[1] in ("ok", "deadline", "setup") or named.endswith(f"/{m[2]}")
                         else f"{a} ({named})")
        shown.append(" or ".join(parts))
    return " ".join(shown)


@functools.cache
def hostile_cases() -> list[CaseRow]:
    return load_cases(ROOT / "hostile" / "hostile.toml")


@functools.cache
def profiles() -> list[Profile]:
    """Every room of clients/ (the reference's too), by the harness's own profile loader."""
    return [load_profile(p, ROOT / "build") for p in sorted((ROOT / "clients").glob("*/profile.toml"))]


def hostile_asked(profile: Profile) -> int:
    """The hostile cases a client is asked: every cell with --transport, else every row once."""
    rows = hostile_cases()
    return sum(len(r.crossed()) for r in rows) if profile.has("--transport") else len(rows)


def hostile_rows() -> str:
    name = detail_names()
    lines = ["| case | tlsnb | transports | control |", "|---|---|---|---|"]
    for r in hostile_cases():
        transports = "both" if set(r.transports.split()) == {"bio", "fd"} else r.transports
        lines.append(f"| {r.case} | {expect_outcomes(r.expect, name)} | {transports} | {r.control} |")
    return "\n".join(lines)


def hostile_clients() -> str:
    """Per client of clients/: how many cases its hostile record holds, of those it is asked, by kind."""
    lines = ["| client | differs in | bug | policy | limit |", "|---|---|---|---|---|"]
    for profile in profiles():
        record = profile.room / "hostile.toml"
        if not record.is_file():
            continue
        kinds = [e.get("kind") for e in tomllib.loads(record.read_text()).get("difference", [])]
        lines.append(f"| {profile.room.name} | {len(kinds)} of {hostile_asked(profile)} | {kinds.count('bug')} | "
                     f"{kinds.count('policy')} | {kinds.count('limit')} |")
    return "\n".join(lines)


def hostile_counts() -> dict[str, str]:
    rows = hostile_cases()
    scenarios = {r.peers.split()[2] for r in rows if r.peers.startswith("hostile ")}
    cells = sum(len(r.crossed()) for r in rows)
    return {"hostile-rows": str(len(rows)), "hostile-scenarios": str(len(scenarios)), "hostile-cells": f"{cells:,}"}


# --- counts of the clients and of PKITS ---------------------------------------------------------

WORDS = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen " \
        "sixteen seventeen eighteen nineteen twenty".split()


def record_counts() -> dict[str, str]:
    """records-GATE-CLIENT: the entries of clients/CLIENT/GATE.toml; hostile-asked-CLIENT: the hostile
    cases that client is asked."""
    counts = {f"records-{r.stem}-{r.parent.name}": str(len(tomllib.loads(r.read_text()).get("difference", [])))
              for r in (ROOT / "clients").glob("*/*.toml") if r.stem != "profile"}
    counts.update({f"hostile-asked-{p.room.name}": str(hostile_asked(p)) for p in profiles()})
    return counts


def other_counts() -> dict[str, str]:
    with (ROOT / "pkits" / "tests.tsv").open() as f:
        tests = list(csv.DictReader((line for line in f if not line.startswith("#")), delimiter="\t"))
    n = sum(not p.reference for p in profiles())
    return {"clients-under-test": WORDS[n] if n < len(WORDS) else str(n), "pkits-tests": str(len(tests)),
            "pkits-end-entities": str(len({t["ee"] for t in tests}))}


# --- the registry ------------------------------------------------------------------------------

def hang_guards() -> str:
    from bench.hang_guards import guards, load_data, table
    return table(guards(), load_data())[0]


TABLES: dict[str, tuple[Path, Callable[[], str]]] = {
    "matrix-rows": (ROOT / "matrix" / "README.md", matrix_rows),
    "hostile-rows": (ROOT / "hostile" / "README.md", hostile_rows),
    "hostile-clients": (ROOT / "hostile" / "README.md", hostile_clients),
    "hang-guards": (ROOT / "README.md", hang_guards),
}
COUNTS: list[Callable[[], dict[str, str]]] = [matrix_counts, hostile_counts, other_counts, record_counts]


def rewritten(path: Path, text: str, tables: dict[str, str], counts: dict[str, str]) -> tuple[str, list[str]]:
    """TEXT with every table and count of PATH written; and what could not be (a marker missing)."""
    problems = []
    for name, body in tables.items():
        begin, end = BEGIN.format(name=name), END.format(name=name)
        if begin not in text or end not in text:
            problems.append(f"{path.relative_to(ROOT)}: no markers for table {name} ({begin!r} ... {end!r})")
            continue
        head, rest = text.split(begin, 1)
        text = head + begin + "\n" + body + "\n" + end + rest.split(end, 1)[1]

    def count(m: re.Match) -> str:
        if m[1] not in counts:
            problems.append(f"{path.relative_to(ROOT)}: count {m[1]!r} is none this module writes "
                            f"({', '.join(sorted(counts))})")
            return m[0]
        return f"<!-- count {m[1]} -->{counts[m[1]]}<!-- /count -->"
    return COUNT.sub(count, text), problems


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="fail unless every README holds what --write writes")
    mode.add_argument("--write", action="store_true", help="write every table and count")
    ns = p.parse_args()
    counts: dict[str, str] = {}
    for made in COUNTS:
        counts.update(made())
    readmes = sorted({path for path, _ in TABLES.values()} | {p for p in ROOT.glob("**/README.md")
                                                             if "build" not in p.relative_to(ROOT).parts[:1]})
    problems, stale = [], []
    for path in readmes:
        text = path.read_text()
        mine = {name: make() for name, (where, make) in TABLES.items() if where == path}
        if not mine and not COUNT.search(text):
            continue
        new, trouble = rewritten(path, text, mine, counts)
        problems += trouble
        if new != text:
            if ns.write:
                path.write_text(new)
                print(f"readme_tables: wrote {path.relative_to(ROOT)}")
            else:
                stale.append(f"{path.relative_to(ROOT)}: a table or count differs from what its data makes "
                             f"(python3 -m harness.readme_tables --write, then read the diff)")
    for line in problems + stale:
        print(f"readme_tables: {line}", file=sys.stderr)
    print(f"readme_tables: {len(TABLES)} tables, {len(counts)} counts, {len(problems) + len(stale)} problem(s)")
    return 1 if problems or stale else 0


if __name__ == "__main__":
    sys.exit(main())
