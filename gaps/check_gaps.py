#!/usr/bin/python3
"""Run every gap program and hold its observation to the record in gaps/gaps.tsv.

    /usr/bin/python3 gaps/check_gaps.py --bin BUILD/gaps [--certs DIR] [NAME ...]

Each gap program prints one `OBSERVED key=value ...` line (compared whole with the
row's `expected`) and any number of `FIGURE key=value` lines (shown, never compared).
A row whose observation differs fails, a gap that got fixed included: update the row
and gaps/README.md. A program that exits 77 (its situation cannot be built here, e.g.
no namespaces without root) is a SKIP. Bad input: one line on stderr, exit 2.
"""
from __future__ import annotations

import argparse
import csv
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from harness import ROOT, Gate

HERE = Path(__file__).resolve().parent
COLUMNS = ["name", "expected", "reason", "guard", "fix_at"]
SKIP_EXIT = 77
TIMEOUT_S = 60

DNS_STUB = ROOT / "servers" / "dns_stub.py"
# Arguments a gap needs beyond --certs, and files it cannot run without (else SKIP).
EXTRA_ARGS = {"getaddrinfo_blocks": ["--dns-stub", str(DNS_STUB)]}
REQUIRES = {"getaddrinfo_blocks": [DNS_STUB]}


class BadInput(Exception):
    """The record, the folders or the names given are unusable: exit 2."""


@dataclass
class Run:
    rc: int
    observed: str | None
    figures: list[str]
    stderr: str


def load_record(path: Path) -> list[dict[str, str]]:
    """The rows of gaps.tsv: a header naming COLUMNS, then one tab-separated row per gap."""
    try:
        lines = [ln for ln in path.read_text().splitlines() if ln and not ln.startswith("#")]
    except OSError as e:
        raise BadInput(f"cannot read {path}: {e.strerror}") from e
    rows = list(csv.reader(lines, delimiter="\t", quoting=csv.QUOTE_NONE))
    if not rows or rows[0] != COLUMNS:
        raise BadInput(f"{path}: the header must be {' '.join(COLUMNS)}")
    record = []
    for number, cells in enumerate(rows[1:], start=2):
        if len(cells) != len(COLUMNS) or not all(c.strip() for c in cells):
            raise BadInput(f"{path}: row {number} must have {len(COLUMNS)} non-empty fields")
        record.append(dict(zip(COLUMNS, cells)))
    names = [r["name"] for r in record]
    if len(set(names)) != len(names):
        raise BadInput(f"{path}: a gap is named twice")
    return record


def run_gap(bin_dir: Path, name: str, certs: str) -> Run:
    argv = [str(bin_dir / name), "--certs", certs, *EXTRA_ARGS.get(name, [])]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return Run(rc=-1, observed=None, figures=[], stderr=f"timed out after {TIMEOUT_S}s")
    observed = None
    figures = []
    for line in proc.stdout.splitlines():
        if line.startswith("OBSERVED "):
            observed = line[len("OBSERVED "):]
        elif line.startswith("FIGURE "):
            figures.append(line[len("FIGURE "):])
    return Run(rc=proc.returncode, observed=observed, figures=figures, stderr=proc.stderr.strip())


def differences(expected: str, observed: str) -> str:
    """The key=value pairs that differ, so a long row's failure reads at a glance."""
    def pairs(s: str) -> dict[str, str]:
        return dict(tok.split("=", 1) if "=" in tok else (tok, "") for tok in s.split())
    want, got = pairs(expected), pairs(observed)
    diff = [f"{k}: expected {want.get(k, '(absent)')}, got {got.get(k, '(absent)')}"
            for k in dict.fromkeys([*want, *got]) if want.get(k) != got.get(k)]
    return "; ".join(diff)


def check(gate: Gate, row: dict[str, str], bin_dir: Path, certs: str) -> None:
    name = row["name"]
    absent = [str(p.relative_to(ROOT)) for p in REQUIRES.get(name, []) if not p.is_file()]
    if absent:
        gate.skip(name, f"{', '.join(absent)} is not there")
        return
    run = run_gap(bin_dir, name, certs)
    if run.rc == SKIP_EXIT:
        gate.skip(name, run.stderr or "cannot be set up here")
        return
    if run.rc != 0 or run.observed is None:
        gate.check(name, False, f"the program failed (exit {run.rc}): {run.stderr[-300:]}")
        return
    figures = ", ".join(run.figures)
    if run.observed == row["expected"]:
        gate.check(name, True, figures)
        return
    gate.check(name, False, f"{differences(row['expected'], run.observed)}"
                            + (f"  [{figures}]" if figures else "")
                            + f"\n    observed: {run.observed}"
                            + "\n    the record no longer holds: if the gap was fixed, update gaps/gaps.tsv and"
                            + f" gaps/README.md (fix_at: {row['fix_at']})")


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("names", nargs="*", metavar="NAME", help="run only these gaps (default: all)")
    p.add_argument("--bin", type=Path, default=os.environ.get("TLSLAB_GAPS_BIN", ROOT / "build" / "gaps"),
                   help="folder of the built gap programs (default: $TLSLAB_GAPS_BIN or build/gaps)")
    p.add_argument("--certs", default=os.environ.get("TLSLAB_CERTS"),
                   help="generated certificate folder (default: $TLSLAB_CERTS)")
    p.add_argument("--record", type=Path, default=HERE / "gaps.tsv", help="the record (default: gaps/gaps.tsv)")
    p.add_argument("--list", action="store_true", help="print the gap names and exit")
    return p.parse_args()


def main() -> int:
    args = parse_args()
    try:
        record = load_record(args.record)
        if args.list:
            print("\n".join(r["name"] for r in record))
            return 0
        known = {r["name"] for r in record}
        unknown = [n for n in args.names if n not in known]
        if unknown:
            raise BadInput(f"no gap named {', '.join(unknown)} (see --list)")
        if not args.certs or not Path(args.certs, "manifest.json").is_file():
            raise BadInput(f"no certificate folder with manifest.json at {args.certs!r} (build the 'certs' target)")
        rows = [r for r in record if not args.names or r["name"] in args.names]
        missing = [r["name"] for r in rows if not os.access(args.bin / r["name"], os.X_OK)]
        if missing:
            raise BadInput(f"not built in {args.bin}: {', '.join(missing)} (build the 'gap_programs' target)")
    except BadInput as e:
        print(f"check_gaps.py: {e}", file=sys.stderr)
        return 2
    gate = Gate("gaps")
    for row in rows:
        check(gate, row, args.bin, args.certs)
    return gate.finish()


if __name__ == "__main__":
    sys.exit(main())
