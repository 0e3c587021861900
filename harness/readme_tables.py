#!/usr/bin/python3
"""README tables written from the data they describe, never by hand: each sits between a pair of
markers in its README, `--write` rewrites every one, and `--check` (unit `harness_readme_tables`)
fails while a README says otherwise.

    <!-- table NAME: written by `python3 -m harness.readme_tables --write`; do not edit -->
    ...
    <!-- end of table NAME -->

The tables (TABLES below): matrix-rows (matrix/README.md, from matrix/rows.toml and certs/pki.toml),
hostile-rows and hostile-clients (hostile/README.md, from hostile/hostile.toml and the clients'
hostile.toml), hang-guards (README.md, from the case rows, the clients' records and
bench/hang_guards.tsv), clients-rooms and clients-flags (clients/README.md, from the profiles of the
results page's list of clients), mutants-recorded and mutants-operators (mutants/README.md, from
mutants.toml, operator_rows.toml, the operators' generator and survivors.toml). A count a README
gives in a sentence sits between `<!-- count NAME -->` and `<!-- /count -->` and is written the same
way (COUNTS below): rows, cases and samples of the gates, the clients, PKITS' table, the mutants.
Measurements (seconds, CPU-seconds, wake-ups and blocks a run saw) are observations with a date and
stay typed.

    /usr/bin/python3 -m harness.readme_tables --check      # one line per README that disagrees
    /usr/bin/python3 -m harness.readme_tables --write
"""
from __future__ import annotations

import argparse
import functools
import re
import sys
import tomllib
from pathlib import Path
from typing import Callable

from harness.cases import CaseRow, case_record, client_cells, load_cases
from harness.clients import Profile, load_profile
from harness.layout import CASE_FILES

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

def expect_outcomes(expect: str) -> str:
    """The outcome terms of an expectation, each by name (harness/outcomes.py), alternatives joined by `or`."""
    from harness.expect import OUTCOME, outcome_key, outcome_text
    shown = []
    for term in expect.split():
        if m := OUTCOME.match(term):
            shown.append(" or ".join(outcome_text(outcome_key(a)) for a in m[1].split("|")) + f"*{m[2]}")
    return " ".join(shown)


@functools.cache
def hostile_cases() -> list[CaseRow]:
    return load_cases(CASE_FILES["hostile"])


@functools.cache
def profiles() -> list[Profile]:
    """Every room of clients/ (the reference's first), the results page's own list of clients
    (clients/results_page.py clients_here), each by the harness's own profile loader."""
    from clients.results_page import clients_here
    return [load_profile(ROOT / "clients" / name / "profile.toml", ROOT / "build") for name in clients_here()]


def hostile_asked(profile: Profile) -> int:
    """The hostile cases a client is asked: every cell with --transport, else every row once."""
    rows = hostile_cases()
    return sum(len(r.crossed()) for r in rows) if profile.has("--transport") else len(rows)


def hostile_rows() -> str:
    lines = ["| case | tlsnb | transports | control |", "|---|---|---|---|"]
    for r in hostile_cases():
        transports = "both" if set(r.transports.split()) == {"bio", "fd"} else r.transports
        lines.append(f"| {r.case} | {expect_outcomes(r.expect)} | {transports} | {r.control} |")
    return "\n".join(lines)


def hostile_scenarios() -> str:
    """hostile/scenarios.py: each scenario's version, clause, requirement and the bugs it sets."""
    from hostile.scenarios import SCENARIOS
    lines = ["| scenario | TLS | clause | what a client must do | the peer's bugs (bugs.py) |", "|---|---|---|---|---|"]
    for s in SCENARIOS.values():
        bugs = ", ".join(f"`{f}={getattr(s.bugs, f)!r}`".replace("'", "") for f in s.bugs.set()) or "none (a control)"
        lines.append(f"| {s.name} | {s.version} | {s.clause} | {cell(s.requires)} | {bugs} |")
    return "\n".join(lines)


def hostile_bugs() -> str:
    """hostile/bugs.py: every field, its type and what it does."""
    from hostile.bugs import BUGS
    lines = ["| field | type | what the peer does | the self-test's reader sees |", "|---|---|---|---|"]
    from hostile.peer_selftest import CHECKS
    for b in BUGS.values():
        kind = b.type.__name__ + (f" ({', '.join(b.choices)})" if b.choices else "")
        lines.append(f"| {b.name} | {kind} | {cell(b.does)} | {cell(CHECKS[b.name][0]) if b.name in CHECKS else '-'} |")
    return "\n".join(lines)


def recorded_cases(profile: Profile, label: str) -> dict[str, str]:
    """The cases of a case gate (LABEL) that PROFILE's record holds a difference for, with its kind
    (several entries applying: their kinds joined), read as the gate reads them (harness/record.py)."""
    cells = client_cells(load_cases(CASE_FILES[label]), profile)
    record = case_record(profile, label, cells)
    return {c: d.kind for c in cells if (d := record.get(c)) is not None}


def hostile_clients() -> str:
    """Per client of clients/: how many cases its hostile record holds, of those it is asked, by kind."""
    lines = ["| client | differs in | bug | policy | limit |", "|---|---|---|---|---|"]
    for profile in profiles():
        if not (profile.room / "hostile.toml").is_file():
            continue
        kinds = list(recorded_cases(profile, "hostile").values())
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
    """records-GATE-CLIENT: the cases of a case gate that clients/CLIENT/GATE.toml holds a difference for;
    hostile-asked-CLIENT: the hostile cases that client is asked."""
    counts = {f"records-{label}-{p.room.name}": str(len(recorded_cases(p, label)))
              for p in profiles() for label in CASE_FILES if (p.room / f"{label}.toml").is_file()}
    counts.update({f"hostile-asked-{p.room.name}": str(hostile_asked(p)) for p in profiles()})
    return counts


def word(n: int) -> str:
    return WORDS[n] if n < len(WORDS) else str(n)


def other_counts() -> dict[str, str]:
    """The clients; PKITS' table (pkits/table.py, as the results page counts it)."""
    from pkits.table import rows
    tests = rows()
    n = sum(not p.reference for p in profiles())
    libraries = ", ".join(f"{p.room.name} ({library_short(p)})" for p in profiles() if not p.reference)
    return {"clients-under-test": word(n), "clients-all": str(len(profiles())), "clients-under-test-libraries": libraries,
            "pkits-tests": str(len(tests)),
            "pkits-end-entities": str(len({t.ee for t in tests})),
            "pkits-invalid": str(sum(not t.valid for t in tests)), "pkits-valid": str(sum(t.valid for t in tests)),
            "pkits-settings": str(sum(not t.default_settings for t in tests))}


# --- clients/README.md: the rooms, their flags; the default gate's samples ----------------------

def cell(text: str) -> str:
    """TEXT as one cell of a Markdown table: a pipe and a tag's bracket escaped, the lines joined."""
    return " ".join(text.replace("|", "\\|").replace("<", "\\<").split())


def shown_command(profile: Profile) -> str:
    """A profile's command as the tree holds it: the build tree as build/, this repository as ./."""
    build, root = str(ROOT / "build"), str(ROOT)
    return " ".join(a.replace(build, "build").replace(root + "/", "") for a in profile.command)


def library_short(profile: Profile) -> str:
    """The first words of a profile's `library` (up to its first parenthesis, colon or semicolon)."""
    return re.split(r" \(|:|;|,", profile.library, maxsplit=1)[0].strip()


def clients_rooms() -> str:
    lines = ["| room | library (profile.toml `library`) | started as (`command`) |", "|---|---|---|"]
    for p in profiles():
        library = p.library + (" (the reference)" if p.reference else "")
        lines.append(f"| {p.room.name}/ | {cell(library)} | `{shown_command(p)}` |")
    return "\n".join(lines)


def clients_flags() -> str:
    lines = ["| client | the optional flags it has (profile.toml `flags`) | shims see its I/O and heap |", "|---|---|---|"]
    for p in profiles():
        flags = " ".join(f"`{f}`" for f in p.flags) or "none"
        lines.append(f"| {p.room.name} | {flags} | {'yes' if p.shim_sees_io else 'no'} |")
    return "\n".join(lines)


def cmake_words(path: Path, name: str) -> list[str]:
    """The words of `set(NAME ...)` in a CMakeLists.txt: the one place a sample list is written."""
    m = re.search(rf"^\s*set\({re.escape(name)}\s+([^)]*)\)", path.read_text(), re.M)
    if not m:
        raise SystemExit(f"readme_tables: {path.relative_to(ROOT)}: no set({name} ...)")
    return m[1].split()


def cmake_number(path: Path, flag: str) -> str:
    """The value of FLAG N in a CMakeLists.txt's commands (it must be given exactly one value there)."""
    values = set(re.findall(rf"{re.escape(flag)} (\d+)", path.read_text()))
    if len(values) != 1:
        raise SystemExit(f"readme_tables: {path.relative_to(ROOT)}: {flag} given {sorted(values) or 'no'} values, one expected")
    return values.pop()


def sample_counts() -> dict[str, str]:
    """The default gate's crossings of a client under test, as clients/CMakeLists.txt and pkits/ give them."""
    clients = ROOT / "clients" / "CMakeLists.txt"
    hostile, faults = cmake_words(clients, "HOSTILE_SAMPLE"), cmake_words(clients, "FAULTS_SAMPLE")
    fuzz = ROOT / "fuzz" / "CMakeLists.txt"
    targets = cmake_words(fuzz, "FUZZ_TARGETS") + re.findall(r"list\(APPEND FUZZ_TARGETS (\S+)\)", fuzz.read_text())
    return {"hostile-sample": ", ".join(hostile), "hostile-sample-size": word(len(hostile)),
            "faults-sample": ", ".join(faults), "pkits-sample": cmake_number(ROOT / "pkits" / "CMakeLists.txt", "--sample"),
            "alloc-sweep-budget": cmake_number(clients, "--budget"), "fuzz-targets": word(len(targets))}


# --- the other gates' rows ------------------------------------------------------------------------

def and_list(words: list[str]) -> str:
    return ", ".join(words[:-1]) + f" and {words[-1]}" if len(words) > 1 else "".join(words)


def gate_counts() -> dict[str, str]:
    """faults-rows, faults-cases (a row crossed over both transports is two); the matrix rows whose
    servers differ; the hostile rows a client without --ocsp-staple check skips."""
    faults = load_cases(CASE_FILES["faults"])
    differ = [r["name"] for r in tomllib.loads((ROOT / "matrix" / "rows.toml").read_text())["row"] if "servers_differ" in r]
    staple = [r for r in hostile_cases() if "--ocsp-staple check" in r.client]
    return {"faults-rows": str(len(faults)), "faults-cases": str(sum(len(r.crossed()) for r in faults)),
            "matrix-servers-differ": word(len(differ)), "matrix-servers-differ-rows": and_list(differ),
            "hostile-staple-check-rows": word(len(staple))}


# --- mutants/README.md: the recorded mutants and the operator scores -------------------------------

@functools.cache
def recorded_mutants() -> list:
    from mutants.rows import load
    return load(ROOT / "mutants" / "mutants.toml", ROOT)


def mutants_recorded() -> str:
    """The client's recorded mutants (mutants.toml; the lab library's are counted, not listed)."""
    lines = ["| mutant | file | what it breaks | killer (gate row) | verdict | also |", "|---|---|---|---|---|---|"]
    for m in recorded_mutants():
        if m.in_harness:
            continue
        verdict = m.expect if m.expect == "killed" else f"**{m.expect}**"
        also = "; ".join(f"{row}: {v}" for row, v in m.also.items())
        lines.append(f"| {m.name} | {m.file.removeprefix('client/')} | {cell(m.breaks)} | {m.killer} | {verdict} | {also} |")
    return "\n".join(lines)


def fates(kinds: list[str]) -> str:
    from mutants.scan import FATES
    parts = [f"{kinds.count(k)} {k}" for k in FATES if kinds.count(k)]
    return f"{len(kinds)} ({', '.join(parts)})" if kinds else "0"


@functools.cache
def operator_files() -> tuple[dict[str, int], dict[str, list[str]], set[str]]:
    """Each mapped file's operator mutants (scan.py --list's count), its recorded survivors' fates, the
    files whose survivors are recorded: by scan.py's own loaders and operators.py's generator."""
    from mutants.operators import generate
    from mutants.scan import load_map, survivors
    mapping, complete = load_map(ROOT / "mutants" / "operator_rows.toml")
    record = survivors(ROOT / "mutants" / "survivors.toml")
    made = {f: len(generate(ROOT / f, (ROOT / f).read_text(), ROOT)) for f in mapping}
    kinds = {f: [d.kind for d in record.entries.values() if d.keys.get("file") == f] for f in mapping}
    return made, kinds, complete


def mutants_operators() -> str:
    made, kinds, complete = operator_files()
    lines = ["| file | mutants | recorded survivors |", "|---|---|---|"]
    files = [f for f in made if f in complete]
    for f in files:
        lines.append(f"| {f.removeprefix('client/')} | {made[f]:,} | {fates(kinds[f])} |")
    lines.append(f"| **the {len(files)} recorded files** | {sum(made[f] for f in files):,} | "
                 f"{fates([k for f in files for k in kinds[f]])} |")
    return "\n".join(lines)


def mutant_counts() -> dict[str, str]:
    client = [m for m in recorded_mutants() if not m.in_harness]
    made, _, complete = operator_files()
    pending = [f for f in made if f not in complete]
    return {"mutants-client": str(len(client)), "mutants-client-cases": str(sum(len(m.cases()) for m in client)),
            "mutants-client-rows": str(len({row for m in client for row, _ in m.cases()})),
            "mutants-harness": str(sum(m.in_harness for m in recorded_mutants())),
            "mutants-judge": str(sum(m.name.startswith(("judge_", "cases_")) for m in recorded_mutants())),
            "mutants-operator-pending": ", ".join(pending) if pending else "none"}


# --- the registry ------------------------------------------------------------------------------

def hang_guards() -> str:
    from bench.hang_guards import guards, load_data, table
    return table(guards(), load_data())[0]


LOWER = re.compile(r"^((?:each|summary)\.(?:ms|wall_ms))>(\d+(?:\.\d+)?)$")
SERVERS_OWN = "(no flag: the client's default or the peer's)"
WAIT = re.compile(r"(--[a-z-]*-(?:ms|s))[ =](\d+)")


def lower_bounds() -> str:
    """Every lower bound of time in a case row or a client's record of one (each.ms>N, summary.wall_ms>N)
    with the waits the row gives (its client's and peers' flags in ms or s): the wait it holds. A
    client is listed for a bound of its own record, not for its row's."""
    from bench.hang_guards import held_expectations
    out = ["| gate | client | case | bound | the waits the row gives |", "|---|---|---|---|---|"]
    seen = set()
    for gate, client, row, expect, row_expect, _ in held_expectations():
        terms = expect.split() if client == "tlsnb" else \
            sorted(set(expect.split()) - set(row_expect.split())) if expect != "skip" else []
        given = " ".join(f"{f} {v}" for f, v in WAIT.findall(" ".join([row.client, *row.peers]))) or SERVERS_OWN
        for m in filter(None, map(LOWER.match, terms)):
            if client == "tlsnb" or (gate, client, row.case, m[0]) not in seen:
                seen.add((gate, client, row.case, m[0]))
                out.append(f"| {gate} | {client} | {row.case} | `{m[1]}>{m[2]}` | {cell(given)} |")
    return "\n".join(out)


TABLES: dict[str, tuple[Path, Callable[[], str]]] = {
    "matrix-rows": (ROOT / "matrix" / "README.md", matrix_rows),
    "hostile-rows": (ROOT / "hostile" / "README.md", hostile_rows),
    "hostile-clients": (ROOT / "hostile" / "README.md", hostile_clients),
    "hostile-scenarios": (ROOT / "hostile" / "README.md", hostile_scenarios),
    "hostile-bugs": (ROOT / "hostile" / "README.md", hostile_bugs),
    "hang-guards": (ROOT / "README.md", hang_guards),
    "lower-bounds": (ROOT / "README.md", lower_bounds),
    "clients-rooms": (ROOT / "clients" / "README.md", clients_rooms),
    "clients-flags": (ROOT / "clients" / "README.md", clients_flags),
    "mutants-recorded": (ROOT / "mutants" / "README.md", mutants_recorded),
    "mutants-operators": (ROOT / "mutants" / "README.md", mutants_operators),
}
COUNTS: list[Callable[[], dict[str, str]]] = [matrix_counts, hostile_counts, other_counts, record_counts,
                                              sample_counts, gate_counts, mutant_counts]


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
