#!/usr/bin/python3
"""Operator mode: mutants made by operator over the client's sources, each run by the gate rows
that cover its file, scored per file (label mutants: a seeded sample; --full: every mutant).

Beside the recorded catalogue (run_mutants.py), which replays bugs someone thought of, this
mode makes every mutant the operators of mutants/operators.py can make in each file that
operator_rows.toml maps to its gate rows. Each mutant is compiled with the flags of the object
it replaces (mutants/build.py, -Werror dropped: a warning is not a different program); an
object byte-identical to the unmutated source's is equivalent and skipped (trivial compiler
equivalence). The others are relinked and their file's rows run in order, by their own gates
(mutants/gate_rows.py), until one kills the mutant. The first time a row kills, it is run
once against an unmutated relink of the same file: it must hold (control), or the kill
proves nothing. A survivor is recorded in survivors.toml (harness/record.py: got = "survived",
kind equivalent, no input can tell it, or no-row, not worth a row, and why); an unrecorded
survivor, or one recorded without kind and why, fails the gate. --update records each survivor
of the run (a new one with kind and why empty), drops the record of a mutant now killed or
byte-identical and of any that no operator makes any more, and keeps kind and why.

Prints one line per mutant, the score (killed / non-equivalent) per file and overall, the
survivors (file:line, operator, change, fate) and the time per mutant.

    scan.py --build-dir BUILD [--full | --sample N] [--seed S] [--file client/x.cc ...]
    scan.py --build-dir BUILD --list [--file ...]     # the mutants, nothing built
    scan.py --build-dir BUILD --full --file F --unrecorded   # only those without a recorded fate
    scan.py --build-dir BUILD --full --file F --update       # record the file's survivors, then write kind and why
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import random
import shutil
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Optional

from mutants.build import Builder, BuildError, Compiled
from mutants.gate_rows import GateRow, GateRows
from harness import Gate, RowError, bad_input, choose_seed, load_toml, rerun_line
from harness.record import Difference, Record
from mutants.operators import Mutant, generate
from mutants.run_mutants import build_flags, built_paths, programs

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
FATES = ("equivalent", "no-row")   # a survivor's kind
SURVIVED = "survived"              # a survivor's got
FILE_SCHEMA = {"file": (str, True), "rows": (list, True), "recorded": (bool, True)}
NOTE = """got: survived. kind, the survivor's fate: equivalent (no input can tell it from the client: left
out of the score) or no-row (a real difference not worth a gate row: counted as survived).
Written grouped by file (each group's first line generated); nth tells identical lines apart."""


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    build_flags(p)
    p.add_argument("--full", action="store_true", help="every mutant of every recorded file (CTest: label full)")
    p.add_argument("--sample", type=int, default=2, help="mutants drawn at random (seeded) when not --full (default 2)")
    p.add_argument("--seed", type=int,
                   help="the sample's seed (default: derived from the tree, printed; give one to explore)")
    p.add_argument("--file", action="append", default=[], help="only this mapped source, recorded or not (repeatable)")
    p.add_argument("--line", type=int, action="append", default=[], help="only the mutants on this line (repeatable; with --file)")
    p.add_argument("--only", nargs="+", default=[], metavar="ID",
                   help="only these mutants, by the case id a run prints (client/attempt.cc:263:rel)")
    p.add_argument("--unrecorded", action="store_true",
                   help="only the mutants survivors.toml has no record of (a file being scanned: what is left to see)")
    p.add_argument("--map", type=Path, default=HERE / "operator_rows.toml", help="file -> gate rows")
    p.add_argument("--survivors", type=Path, default=HERE / "survivors.toml", help="the survivors' record")
    p.add_argument("--update", action="store_true",
                   help="record the run's survivors in --survivors (a new one with kind and why empty: it fails until "
                        "a person writes them), drop the records of mutants now killed or no longer made")
    p.add_argument("--row-limit", type=float, default=30.0, help="seconds a row may run against a mutant (a kill past it)")
    p.add_argument("--shard", type=shard, metavar="K/N",
                   default=os.environ.get("TLSLAB_SHARD") or None,
                   help="with --full (default: TLSLAB_SHARD): the Kth of N equal shares of the mutants (every Nth, from the Kth: each share "
                        "spans every file), so that N jobs scan the whole side by side (.github/workflows/tlslab.yml)")
    p.add_argument("--list", action="store_true", help="print the mutants, build nothing")
    ns = p.parse_args()
    if not ns.full:  # a share of the whole scan; the sample draws from all of it
        ns.shard = None
    return ns


def shard(text: str) -> tuple[int, int]:
    """K/N, 1 <= K <= N."""
    try:
        k, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: K/N, two whole numbers") from None
    if not 1 <= k <= n:
        raise argparse.ArgumentTypeError(f"{text!r}: K must be within 1..N")
    return k, n


def load_map(path: Path) -> tuple[dict[str, list[str]], set[str]]:
    """File -> its rows; and the files whose every survivor is recorded (the sample and --full draw from those)."""
    mapping, complete = {}, set()
    for row in load_toml(path, "file", FILE_SCHEMA):
        name = row.get("file")
        if not (ROOT / name).is_file() or not name.startswith("client/") or not name.endswith(".cc"):
            raise row.error("file", f"{name!r} is not a client/*.cc source")
        if name in mapping:
            raise row.error("file", f"{name} is mapped twice")
        if not row.get("rows") or not all(isinstance(r, str) and ":" in r for r in row.get("rows")):
            raise row.error("rows", "rows must be gate rows LABEL:CASE")
        mapping[name] = list(row.get("rows"))
        if row.get("recorded"):
            complete.add(name)
    return mapping, complete


def survivors(path: Path) -> Record:
    """The survivors' record (harness/record.py), a survivor named by its mutant's identity."""
    def check_got(got: object) -> None:
        if got != SURVIVED:
            raise ValueError(f"got must be {SURVIVED!r} (a killed mutant has no record)")
    return Record(path, "mutant operators", kinds=FATES, keys=tuple(Mutant.IDENTITY), defaults={"nth": 0},
                  group="file", check_got=check_got, note=NOTE)


class Scan:
    """One file's mutants: the unmutated object, each mutant compiled, compared, relinked, run."""

    def __init__(self, ns, builder: Builder, rows: GateRows, real: dict[str, str], scratch: Path):
        self.ns, self.builder, self.rows, self.real, self.scratch = ns, builder, rows, real, scratch
        self.base: dict[str, bytes] = {}          # file -> the unmutated Release object
        self.controlled: dict[tuple[str, str], bool] = {}

    def entry(self, program: str, source: Path) -> Compiled:
        e = self.builder.entry_for(program, source)
        return dataclasses.replace(e, argv=strip_depfile([a for a in e.argv if a != "-Werror"]))

    def compile(self, program: str, source: Path, text: str) -> Path:
        """TEXT compiled as SOURCE's object of PROGRAM, always at the same path (the same bytes for the same code)."""
        folder = self.scratch / "src" / program
        folder.mkdir(parents=True, exist_ok=True)
        copy, obj = folder / source.name, folder / f"{source.name}.o"
        copy.write_text(text)
        self.builder.compile_copy(self.entry(program, source), copy, obj)
        return obj

    def link(self, program: str, source: Path, obj: Path) -> Path:
        out = self.scratch / "bin" / program / program  # the same file name: the shims act on tlsnb by name
        out.parent.mkdir(parents=True, exist_ok=True)
        self.builder.link(program, {self.builder.entry_for(program, source).output: obj}, out)
        return out

    def equivalent(self, m: Mutant) -> bool:
        """Trivial compiler equivalence: the mutant's Release object is the unmutated one, byte for byte."""
        source = ROOT / m.file
        if m.file not in self.base:
            self.base[m.file] = self.compile("tlsnb", source, source.read_text()).read_bytes()
        return self.compile("tlsnb", source, m.text).read_bytes() == self.base[m.file]

    def programs_for(self, row: GateRow) -> list[str]:
        paths = self.rows.programs_in(row, set(self.real.values()))
        return sorted(name for name, path in self.real.items() if path in paths)

    def build_into(self, swap: dict[str, str], file: str, text: str, row: GateRow, compiled: bool) -> None:
        """Links the programs ROW runs and SWAP lacks (lazily: a mutant killed by its first row builds one).
        COMPILED: the Release object of TEXT is already in place (equivalent() made it)."""
        source = ROOT / file
        for p in self.programs_for(row):
            if self.real[p] not in swap:
                obj = (self.scratch / "src" / p / f"{source.name}.o") if p == "tlsnb" and compiled \
                    else self.compile(p, source, text)
                swap[self.real[p]] = str(self.link(p, source, obj))

    def kill(self, m: Mutant, refs: list[GateRow]) -> tuple[str, str]:
        """(verdict, detail): killed by the first row that fails, else survived. The first row runs
        alone (it kills most), the rest grouped by gate: one run of each gate with all its cases."""
        swap: dict[str, str] = {}
        for row in refs[:1] + grouped(refs[1:]):
            self.build_into(swap, m.file, m.text, row, compiled=True)
            ok, detail, secs = self.rows.run(row, swap, self.scratch / "work", limit=self.limit(row))
            if not ok:
                if not self.control(m.file, row):
                    return "broken", f"{row.ref} kills it, but fails an unmutated relink too: the kill proves nothing"
                return "killed", f"{row.ref} [{secs:.1f} s]: {detail[:160]}"
        return "survived", f"{len(refs)} rows held: {', '.join(r.ref for r in refs)}"

    def limit(self, row: GateRow) -> float:
        """--row-limit for each case the run holds (a merged run of N cases gets N times it); a whole gate
        (dns:dns, 28 s of rows on a quiet machine) gets its CTest TIMEOUT, as CTest would."""
        if row.case is None and "+" not in row.ref:
            return max(t.timeout for t in row.tests)
        return self.ns.row_limit * (row.ref.count("+") + 1)

    def control(self, file: str, row: GateRow) -> bool:
        """ROW against an unmutated relink of FILE's programs (once): a kill by a row that fails it proves nothing."""
        if (file, row.ref) not in self.controlled:
            swap: dict[str, str] = {}
            self.build_into(swap, file, (ROOT / file).read_text(), row, compiled=False)
            ok, _, _ = self.rows.run(row, swap, self.scratch / "work", limit=self.limit(row))
            self.controlled[(file, row.ref)] = ok
            print(f"control {file} {row.ref}: unmutated relink {'holds' if ok else 'FAILS'}", flush=True)
        return self.controlled[(file, row.ref)]


def grouped(rows: list[GateRow]) -> list[GateRow]:
    """ROWS of one gate script merged into one run (`--only A B C`), in the order each gate first appears."""
    merged: dict[tuple, list[GateRow]] = {}
    for row in rows:
        merged.setdefault(tuple(tuple(t.command) for t in row.tests) if row.case else (row.ref,), []).append(row)
    out = []
    for group in merged.values():
        if len(group) == 1 or not group[0].case:
            out.extend(group)
            continue
        tests = [dataclasses.replace(t, command=[*t.command, "--only", *(r.case for r in group)]) for t in group[0].tests]
        out.append(GateRow("+".join(r.ref for r in group), tests, None))
    return out


def strip_depfile(argv: list[str]) -> list[str]:
    """The compile command without -MD -MT X -MF Y: a mutant writes no dependency file into the build."""
    out, skip = [], 0
    for a in argv:
        if skip:
            skip -= 1
        elif a in ("-MT", "-MF"):
            skip = 1
        elif a != "-MD":
            out.append(a)
    return out


def recorded(record: Record, m: Mutant) -> Optional[Difference]:
    """M's survivor record, if any."""
    return record.get(record.identity(m.identity))


def report(results: list[tuple[Mutant, str, str]], record: Record, seconds: list[float]) -> None:
    """The score per file and overall, and the survivors' table."""
    print("\nscore (killed / non-equivalent; equivalent: TCE byte-identical or recorded equivalent)")
    print(f"  {'file':28} {'mutants':>7} {'tce':>4} {'equiv':>5} {'killed':>6} {'survived':>8} {'score':>6}")
    total = Counter()
    for file in sorted({m.file for m, _, _ in results}):
        c = Counter()
        for m, verdict, _ in results:
            if m.file == file:
                c["mutants"] += 1
                fate = recorded(record, m)
                c["tce" if verdict == "tce" else "equiv" if verdict == "survived" and fate and fate.kind == "equivalent"
                  else verdict] += 1
        total.update(c)
        print(score_line(file, c))
    print(score_line("overall", total))
    if seconds:
        print(f"  time per built mutant: {sum(seconds) / len(seconds):.1f} s mean, {max(seconds):.1f} s max "
              f"({len(seconds)} built)")
    survived = [(m, recorded(record, m)) for m, verdict, _ in results if verdict == "survived"]
    if survived:
        print("\nsurvivors")
        for m, fate in survived:
            print(f"  {m.where}  {m.op:5}  {m.change}  [{fate.kind + ': ' + fate.why if fate and fate.explained else 'UNEXPLAINED'}]")


def score_line(name: str, c: Counter) -> str:
    denominator = c["killed"] + c["survived"]
    score = f"{100 * c['killed'] / denominator:.0f}%" if denominator else "-"
    return (f"  {name:28} {c['mutants']:>7} {c['tce']:>4} {c['equiv']:>5} {c['killed']:>6} {c['survived']:>8} "
            f"{score:>6}" + (f"  (+{c['stillborn']} not compiling)" if c["stillborn"] else ""))


def main() -> int:
    ns = parse_args()
    try:
        mapping, complete = load_map(ns.map)
        record = survivors(ns.survivors)
    except RowError as e:
        bad_input("scan.py", e)
    unknown = [f for f in ns.file if f not in mapping]
    if unknown:
        bad_input("scan.py", f"--file {unknown[0]}: not mapped in {ns.map}")
    only_files = sorted({i.rsplit(":", 2)[0] for i in ns.only})
    if unmapped := [f for f in only_files if f not in mapping]:
        bad_input("scan.py", f"--only: {unmapped[0]} is not a mapped file ({ns.map})")
    files = ns.file or only_files or [f for f in mapping if f in complete]   # a file still being scanned only by --file
    made = {f: generate(ROOT / f, (ROOT / f).read_text(), ROOT) for f in (mapping if ns.update else files)}
    mutants = [m for f in files for m in made[f]
               if (not ns.line or m.line in ns.line) and not (ns.unrecorded and recorded(record, m))
               and (not ns.only or f"{m.where}:{m.op}" in ns.only)]
    selected = {record.identity(m.identity): m for m in mutants}
    if ns.shard:
        k, n = ns.shard
        mutants = mutants[k - 1::n]
    if ns.list:
        for m in mutants:
            print(f"{m.where} {m.op} {m.change}")
        return 0
    seed = None
    if not ns.full:
        # The sample draws from the mutants without a survivor record: each should die, most at the first
        # row (seconds), so a new hole fails the default gate; a recorded survivor runs every row of its
        # file (up to two minutes: attempt.cc's 47) and is held to its record by --full.
        seed = choose_seed(ns.seed)
        pool = [m for m in mutants if not recorded(record, m)] if not ns.only else mutants
        mutants = sorted(random.Random(seed).sample(pool, min(ns.sample, len(pool))), key=lambda m: (m.file, m.line))
    build = ns.build_dir.resolve()
    real = {name: path for name, path in built_paths(build).items() if Path(path).is_file()}
    try:
        gate_rows = GateRows(build)
        refs = {f: [gate_rows.resolve(r) for r in mapping[f]] for f in {m.file for m in mutants}}
        builder = Builder(build, programs(ns))
        run_by_rows: set[str] = set()
        for f, rows in sorted(refs.items()):
            for r in rows:
                ran = gate_rows.programs_in(r, set(real.values()))
                if not ran:  # it would run the unmutated programs only: it can never kill
                    raise RowError(f"{ns.map.name}: {f}: row {r.ref} runs none of the programs a mutant is relinked "
                                   f"into ({', '.join(sorted(real))}): it can never kill")
                run_by_rows |= ran
        for name in run_by_rows:
            builder.objects(next(k for k, v in real.items() if v == name))
    except (RowError, BuildError) as e:
        bad_input("scan.py", e)
    scratch = ns.work / "mutants-operators"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    scan = Scan(ns, builder, gate_rows, real, scratch)
    gate = Gate("mutant operators")
    rerun = [sys.argv[0], *sys.argv[1:]] + ([] if ns.seed is not None or seed is None else ["--seed", seed])
    results, seconds = [], []
    print(f"{len(mutants)} mutants over {', '.join(sorted({m.file for m in mutants}))}", flush=True)
    running = {record.identity(m.identity) for m in mutants}
    for d in record.unexplained():   # a record a person has still to write, of a mutant this run does not run
        if d.case in selected and d.case not in running:
            m = selected[d.case]
            gate.check(f"{m.where}:{m.op}", False, f"{d.where}: a survivor recorded without kind and why: write them "
                                                   f"({m.change})")
    for m in mutants:
        began = time.monotonic()
        try:
            verdict, detail = ("tce", "object byte-identical") if scan.equivalent(m) else scan.kill(m, refs[m.file])
        except RowError as e:  # a row file changed under the scan, or a gate refused its arguments
            bad_input("scan.py", f"{m.where}: {e}")
        except BuildError as e:
            if "newer than its object" in str(e):  # the tree changed under the scan: no verdict after this holds
                bad_input("scan.py", f"{m.where}: {e}")
            verdict, detail = "stillborn", f"does not compile: {str(e)[-160:]}"
        if verdict not in ("tce", "stillborn"):
            seconds.append(time.monotonic() - began)
        results.append((m, verdict, detail))
        case = f"{m.where}:{m.op}"
        fate = recorded(record, m)
        if verdict == SURVIVED and not (fate and fate.explained):
            what = f"{fate.where}: survived, recorded without kind and why: write them" if fate else \
                f"survived, unexplained: {m.change}  ({detail}); kill it with a gate row or record it in " \
                f"{ns.survivors.name} (--update writes it, kind and why are yours)"
            gate.check(case, False, f"{what}\n  rerun: {rerun_line(*rerun[:1], *rerun[1:], '--only', case)}")
        else:
            gate.check(case, verdict != "broken", f"{verdict}{': ' + fate.kind if fate and verdict == SURVIVED else ''}"
                                                  f" — {m.change} — {detail}  [{time.monotonic() - began:.1f} s]")
    report(results, record, seconds)
    made_here = {record.identity(m.identity) for f in files for m in made[f]}
    if ns.full and not ns.file and not ns.only and (not ns.shard or ns.shard[0] == 1):   # a whole scan's records
        for d in record.entries.values():
            if d.case not in made_here:
                gate.check(f"record/{d.where}", False, "a recorded survivor no operator makes any more: delete it "
                                                       "(--update drops it)")
    if ns.update:
        update(record, made, results)
    return gate.finish()


def update(record: Record, made: dict[str, list[Mutant]], results: list[tuple[Mutant, str, str]]) -> None:
    """--update: each survivor of the run recorded (kind and why kept, a new one's empty), the record of
    a mutant now killed or byte-identical dropped, and that of any mutant of a mapped file that no
    operator makes any more. Written in the map's file order, each file's survivors in source order."""
    made_ids = {record.identity(m.identity): m for mutants in made.values() for m in mutants}
    observed = {record.identity(m.identity): (SURVIVED if verdict == SURVIVED else None)
                for m, verdict, _ in results if verdict in (SURVIVED, "killed", "tce")}
    observed.update({d.case: None for d in record.entries.values()
                     if d.keys.get("file") in made and d.case not in made_ids})
    record.write(list(made_ids), observed, keys={case: m.identity for case, m in made_ids.items()})


if __name__ == "__main__":
    sys.exit(main())
