"""Run every gap program and hold its observation to the record in gaps/gaps.toml.

    /usr/bin/python3 -m gaps.check_gaps --bin BUILD/gaps [--certs DIR] [NAME ...]
    /usr/bin/python3 -m gaps.check_gaps --write-readme     # gaps/README.md's table, from gaps.toml

Each gap program prints one `OBSERVED key=value ...` line (compared whole with the
row's `expected`) and any number of `FIGURE key=value` lines (shown, never compared).
A row whose observation differs fails, a gap that got fixed included: update the row.
A program that exits 77 (its situation cannot be built here, e.g. no namespaces without
root) is a SKIP. The README's table is made from gaps.toml; a table that differs from the
record is a failure (`readme-table`). Bad input: one line on stderr, exit 2.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from harness import ROOT, Gate, RowError, bad_input
from harness.rows import NONE, case_key, load_case_file

HERE = Path(__file__).resolve().parent
SKIP_EXIT = 77
TIMEOUT_S = 60
README = HERE / "README.md"
TABLE_BEGIN = "<!-- the gaps table: made by check_gaps.py --write-readme from gaps.toml; do not edit by hand -->"
TABLE_END = "<!-- end of the gaps table -->"


@dataclass
class Gap:
    """A [[case]] of gaps.toml (args may be left out: none; expected may be an array of its words)."""
    name: str = case_key()
    args: str = case_key(default=NONE)     # beyond --certs; {root} is the repository
    expected: str = case_key(join=" ")
    summary: str = case_key()
    reason: str = case_key()
    guard: str = case_key()
    fix_at: str = case_key()
    where: str = ""

    def argv(self) -> list[str]:
        return [] if self.args == "-" else self.args.replace("{root}", str(ROOT)).split()

    def missing(self) -> list[str]:
        """Files of the repository the program needs that are not there (then: SKIP)."""
        return [a for a in self.argv() if a.startswith(str(ROOT)) and not Path(a).exists()]


@dataclass
class Run:
    rc: int
    observed: str | None
    figures: list[str]
    stderr: str


def load_record(path: Path) -> list[Gap]:
    gaps = load_case_file(path, Gap)
    for g in gaps:
        if not (HERE / f"{g.name}.cc").is_file():
            raise RowError(f"{g.where}: no program gaps/{g.name}.cc for gap {g.name!r}")
    return gaps


def readme_table(gaps: list[Gap]) -> str:
    lines = ["| gap | observed on OpenSSL 3.0.19 / Linux | guard in tlslab | fix would live in |",
             "|---|---|---|---|"]
    lines += [f"| `{g.name}` | {g.summary} | {g.guard} | {g.fix_at} |" for g in gaps]
    return "\n".join(lines)


def readme_with_table(text: str, table: str) -> str:
    if TABLE_BEGIN not in text or TABLE_END not in text:
        raise RowError(f"{README}:1: no table markers ({TABLE_BEGIN} ... {TABLE_END})")
    head, rest = text.split(TABLE_BEGIN, 1)
    return f"{head}{TABLE_BEGIN}\n{table}\n{TABLE_END}{rest.split(TABLE_END, 1)[1]}"


def run_gap(bin_dir: Path, gap: Gap, certs: str) -> Run:
    argv = [str(bin_dir / gap.name), "--certs", certs, *gap.argv()]
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


def check(gate: Gate, gap: Gap, bin_dir: Path, certs: str) -> None:
    if absent := gap.missing():
        gate.skip(gap.name, f"{', '.join(absent)} is not there")
        return
    run = run_gap(bin_dir, gap, certs)
    if run.rc == SKIP_EXIT:
        gate.skip(gap.name, run.stderr or "cannot be set up here")
        return
    if run.rc != 0 or run.observed is None:
        gate.check(gap.name, False, f"the program failed (exit {run.rc}): {run.stderr[-300:]}")
        return
    figures = ", ".join(run.figures)
    if run.observed == gap.expected:
        gate.check(gap.name, True, figures)
        return
    gate.check(gap.name, False, f"{differences(gap.expected, run.observed)}"
                                + (f"  [{figures}]" if figures else "")
                                + f"\n    observed: {run.observed}"
                                + "\n    the record no longer holds: if the gap was fixed, update its row in gaps/gaps.toml"
                                + f" and the client comment that cites it (fix_at: {gap.fix_at})"
                                + f"\n    rerun: {bin_dir / gap.name} --certs {certs} {' '.join(gap.argv())}")


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("names", nargs="*", metavar="NAME", help="run only these gaps (default: all)")
    p.add_argument("--bin", type=Path, default=os.environ.get("TLSLAB_GAPS_BIN", ROOT / "build" / "gaps"),
                   help="folder of the built gap programs (default: $TLSLAB_GAPS_BIN or build/gaps)")
    p.add_argument("--certs", default=os.environ.get("TLSLAB_CERTS"),
                   help="generated certificate folder (default: $TLSLAB_CERTS)")
    p.add_argument("--record", type=Path, default=HERE / "gaps.toml", help="the record (default: gaps/gaps.toml)")
    p.add_argument("--list", action="store_true", help="print the gap names and exit")
    p.add_argument("--write-readme", action="store_true", help="rewrite gaps/README.md's table from the record")
    return p.parse_args()


def main() -> int:
    args = parse_args()
    try:
        record = load_record(args.record)
        if args.write_readme:
            README.write_text(readme_with_table(README.read_text(), readme_table(record)))
            print(f"check_gaps.py: wrote the table of {len(record)} gaps into {README}")
            return 0
    except RowError as e:
        bad_input("check_gaps.py", e)
    if args.list:
        print("\n".join(g.name for g in record))
        return 0
    unknown = [n for n in args.names if n not in {g.name for g in record}]
    if unknown:
        bad_input("check_gaps.py", f"no gap named {', '.join(unknown)} (see --list)")
    if not args.certs or not Path(args.certs, "manifest.json").is_file():
        bad_input("check_gaps.py", f"no certificate folder with manifest.json at {args.certs!r} (build the 'certs' target)")
    gaps = [g for g in record if not args.names or g.name in args.names]
    missing = [g.name for g in gaps if not os.access(args.bin / g.name, os.X_OK)]
    if missing:
        bad_input("check_gaps.py", f"not built in {args.bin}: {', '.join(missing)} (build the 'gap_programs' target)")
    gate = Gate("gaps")
    if not args.names:
        text = README.read_text()
        fresh = readme_with_table(text, readme_table(record)) if TABLE_BEGIN in text else ""
        gate.check("readme-table", fresh == text, "" if fresh == text else
                   "gaps/README.md's table differs from gaps.toml: run check_gaps.py --write-readme")
    for gap in gaps:
        check(gate, gap, args.bin, args.certs)
    return gate.finish()


if __name__ == "__main__":
    sys.exit(main())
