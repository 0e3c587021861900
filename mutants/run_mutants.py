#!/usr/bin/python3
"""Replays the recorded mutants of the client (mutants/mutants.toml) against the gate rows
that must kill them, run by their own gates from their own data files (mutants/gate_rows.py).

First the controls: every gate row the selected mutants name runs once against the build's
own programs and must hold, or a kill would prove nothing; and an unmutated relink of each
program must pass one of its rows, so that a broken relink cannot pass for a kill. Then each
mutant: its one source copied and edited, recompiled with the build's flags, relinked with the
build's other objects (mutants/build.py), and every row of its record run with the mutant in
place of the program. A case passes when the verdict (killed / survived) is the recorded one:
a mutant recorded killed that survives is a hole in a gate; one recorded survived that is now
killed must be re-recorded.

A mutant of the lab library (a `file` under harness/: the judge, harness/expect.py, and the case
grammar's load checks) needs no build: it is applied to a copy of harness/ in the scratch folder,
never to the tree (other gates import harness/ while this runs), and its rows (unit:harness_judge)
run as `python3 -m harness.tests.test_judge` from that copy's folder, so the copy is what they
import; the same rows from an unmutated copy are its control. Killed: the self-test exits nonzero.

    run_mutants.py --build-dir BUILD [NAME ...]        # the gate (CTest gives --build-dir)
    run_mutants.py --build-dir BUILD --list            # the mutants and their rows
"""
from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from mutants.build import Builder, BuildError, Program
from mutants.gate_rows import GateRow, GateRows, first_failure
from harness import PY, Gate, RowError, bad_input, rerun_line
from harness.args import default_work
from mutants.rows import Mutant, harness_module, load

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
# The programs a mutant can be relinked into: the build's file, its object folders, its link.
# A source each compiles: its unchanged copy, rebuilt and relinked, is the relink control.
RELINK_SOURCE = {"tlsnb": "client/outcome.cc", "tlsnb_units": "client/outcome.cc",
                 "dns_judge_dump": "client/dns_judge.cc", "fuzz_dns_name": "client/dns_name.cc"}
CONTROL_COPY = "control-harness"   # the scratch folder of the unmutated copy of harness/ every mutant starts from
LIBRARY_LIMIT_S = 60.0   # a self-test of the library takes well under a second: past this, a mutant that hangs it


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("names", nargs="*", help="run only these mutants (default: all)")
    build_flags(p)
    p.add_argument("--rows", type=Path, default=HERE / "mutants.toml", help="the mutant rows (default mutants.toml)")
    p.add_argument("--list", action="store_true", help="print the mutants and their gate rows, run nothing")
    p.add_argument("--jobs", type=int, default=2, help="mutant builds at once, before any row runs (default 2)")
    return p.parse_args()


def build_flags(p: argparse.ArgumentParser) -> None:
    """The flags of a mutant build (CTest gives them): the build tree, the libraries, the sanitizer flags."""
    p.add_argument("--build-dir", required=True, type=Path, help="the build tree (compile_commands.json, objects, CTest)")
    p.add_argument("--ssl-libs", nargs="+", default=["-lssl", "-lcrypto", "-lidn2"],
                   help="the client's libraries to link with: libssl, libcrypto, libidn2")
    p.add_argument("--gtest-libs", nargs="+", default=["-lgtest_main", "-lgtest"], help="GoogleTest to link the units with")
    p.add_argument("--san-flags", default="", help="the ASan+UBSan flags (TLSLAB_SAN_FLAGS), one string")
    p.add_argument("--fuzz-flags", default="", help="the libFuzzer flags (TLSLAB_FUZZ_FLAGS), one string")
    p.add_argument("--objects", action="append", default=[], metavar="PROGRAM=DIR,...",
                   help="a program's object folders, relative to the build tree: its own and its libraries' "
                        "(repeatable; mutants/CMakeLists.txt derives them from the program's links)")
    p.add_argument("--work", type=Path, default=Path(default_work()))


def programs(ns) -> dict[str, Program]:
    """The relinkable programs: the object folders CMake names (--objects), the link flags and libraries."""
    san, fuzz = tuple(shlex.split(ns.san_flags)), tuple(shlex.split(ns.fuzz_flags))
    links = {"tlsnb": (("-O3", "-DNDEBUG"), tuple(ns.ssl_libs)),
             "tlsnb_units": (san, (*ns.gtest_libs, *ns.ssl_libs, "-pthread")),
             "dns_judge_dump": (san, ()),
             "fuzz_dns_name": (fuzz, ())}
    folders = {}
    for arg in ns.objects:
        name, _, dirs = arg.partition("=")
        if name not in links or not dirs:
            bad_input(Path(sys.argv[0]).name, f"--objects {arg}: PROGRAM=DIR,... with PROGRAM one of {', '.join(links)}")
        folders[name] = tuple(dirs.split(","))
    return {name: Program(name, folders.get(name, ()), flags, libs) for name, (flags, libs) in links.items()}


def built_paths(build: Path) -> dict[str, str]:
    """Each relinkable program's file in the build (the path CTest's commands name)."""
    return {"tlsnb": f"{build}/client/tlsnb", "tlsnb_units": f"{build}/client/tests/tlsnb_units",
            "dns_judge_dump": f"{build}/fuzz/dns_judge_dump", "fuzz_dns_name": f"{build}/fuzz/fuzz_dns_name"}


class Replay:
    """One run of the gate: the rows, the builder, the build's programs, the tally."""

    def __init__(self, rows: GateRows, builder: Builder, real: dict[str, str], scratch: Path, rerun: str):
        self.rows, self.builder, self.real, self.scratch, self.rerun = rows, builder, real, scratch, rerun
        self.gate = Gate("mutants")
        self.broken: set[str] = set()   # rows whose control failed
        self.made: dict[tuple[str, str], tuple[Path, float] | BuildError] = {}   # (build, program) -> its result
        self.unappliable: dict[str, RowError] = {}   # mutant -> why its edit no longer applies to the source

    def prebuild(self, wanted: list[tuple[str, str, Path, str]], jobs: int) -> None:
        """Every (build, program, source, text) this run needs, JOBS compilers at once, before any row
        runs: the builds are most of the CPU, and a build beside a row would load the machine its timing meets."""
        def make(w: tuple[str, str, Path, str]) -> tuple[Path, float] | BuildError:
            name, program, source, text = w
            try:
                return self.builder.make(program, source, text, self.scratch / name)
            except BuildError as e:
                return e
        began = time.monotonic()
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            for w, result in zip(wanted, pool.map(make, wanted)):
                self.made[(w[0], w[1])] = result
        print(f"TIME builds {time.monotonic() - began:.1f} s ({len(wanted)} programs, {jobs} at once)", flush=True)

    def product(self, name: str, program: str) -> tuple[Path, float]:
        """The program prebuild() made for build NAME; its BuildError raised again."""
        result = self.made[(name, program)]
        if isinstance(result, BuildError):
            raise result
        return result

    def needs(self, row: GateRow) -> list[str]:
        """The relinkable programs ROW runs."""
        paths = self.rows.programs_in(row, set(self.real.values()))
        return sorted(name for name, path in self.real.items() if path in paths)

    def programs_of(self, m: Mutant, refs: dict[str, GateRow]) -> list[str]:
        """The relinkable programs M's rows run: what it is built into."""
        return sorted({p for ref, _ in m.cases() for p in self.needs(refs[ref])})

    def run(self, row: GateRow, built: dict[str, Path], where: str) -> tuple[bool, str, float]:
        swap = {self.real[name]: str(path) for name, path in built.items()}
        work = self.scratch / where
        work.mkdir(parents=True, exist_ok=True)
        os.environ["TLSLAB_FUZZ_CRASHES"] = str(work / "crashes")  # a mutant's crash stays in its scratch
        return self.rows.run(row, swap, work)

    def wanted(self, refs: dict[str, GateRow], mutants: list[Mutant]) -> list[tuple[str, str, Path, str]]:
        """The builds of the run: the unmutated relink of each program the rows run, then each mutant's programs."""
        out = []
        for program in sorted({p for row in refs.values() for p in self.needs(row)}):
            source = ROOT / RELINK_SOURCE[program]
            out.append((f"relink-{program}", program, source, source.read_text()))
        for m in mutants:
            try:
                text = m.mutated_text(ROOT)
            except RowError as e:  # the source no longer holds its `find`: reported by mutant() in its turn
                self.unappliable[m.name] = e
                continue
            out.extend((m.name, program, ROOT / m.file, text) for program in self.programs_of(m, refs))
        return out

    def controls(self, refs: dict[str, GateRow]) -> None:
        """Each row against the build's programs; then an unmutated relink of each program."""
        for ref, row in refs.items():
            ok, detail, secs = self.run(row, {}, "control")
            if not self.gate.check(f"control/{ref}", ok, f"{detail}  [{secs:.1f} s]"):
                self.broken.add(ref)
        for program in sorted({p for row in refs.values() for p in self.needs(row)}):
            uses = [ref for ref, row in refs.items() if program in self.needs(row)]
            probe = next((ref for ref in uses if ref not in self.broken), None)
            if probe:
                self.relink(program, uses, refs[probe])

    def relink(self, program: str, uses: list[str], probe: GateRow) -> None:
        """The relink of an unchanged source must pass a row: else every "kill" could be the relink's."""
        try:
            built = {p: self.product(f"relink-{p}", p)[0] for p in self.needs(probe)}
            ok, detail, _ = self.run(probe, built, f"relink-{program}")
            detail = f"unmutated relink {'holds' if ok else 'fails'} {probe.ref}: {detail}"
        except BuildError as e:
            ok, detail = False, str(e)
        if not self.gate.check(f"control/relink_{program}", ok, detail):
            self.broken.update(uses)

    def mutant(self, m: Mutant, refs: dict[str, GateRow]) -> None:
        start = time.monotonic()
        if m.name in self.unappliable:
            self.gate.check(m.name, False, str(self.unappliable[m.name]))
            return
        built: dict[str, Path] = {}
        build_s = 0.0
        for program in self.programs_of(m, refs):
            try:
                built[program], secs = self.product(m.name, program)
                build_s += secs
            except BuildError as e:
                self.gate.check(f"{m.name}/build-{program}", False, f"build: {e}")
                return
        judge_cases(self.gate, m, self.broken, f"{self.rerun} {m.name}",
                    lambda ref: self.run(refs[ref], {p: built[p] for p in self.needs(refs[ref])}, m.name))
        print(f"TIME {m.name} {time.monotonic() - start:.1f} s (build {build_s:.1f} s)", flush=True)


def judge_cases(gate: Gate, m: Mutant, broken: set[str], rerun: str, run) -> None:
    """Each row of M's record against the mutant (RUN(ref) -> (held, detail, seconds)), held to its
    verdict; a row whose control failed proves nothing and fails as such."""
    for ref, expected in m.cases():
        case = f"{m.name}/{ref}"
        if ref in broken:
            gate.check(case, False, "its control failed: the row proves nothing")
            continue
        recorded(gate, case, expected, run(ref), rerun)


def recorded(gate: Gate, case: str, expected: str, result: tuple[bool, str, float], rerun: str) -> None:
    """One row's verdict on a mutant, held to its record: a recorded kill that survives is a hole in
    the gate; a recorded survivor that is now killed must be re-recorded."""
    held, detail, secs = result
    got = "survived" if held else "killed"
    if got == expected:
        gate.check(case, True, f"{got} as recorded: {detail}  [row {secs:.1f} s]")
    else:
        hint = "a hole in the gate: the row no longer kills it" if expected == "killed" else "re-record the row"
        gate.check(case, False, f"expected {expected}, got {got} ({hint}): {detail}  [row {secs:.1f} s]"
                                f"\n  rerun: {rerun}")


class LibraryReplay:
    """The mutants of the lab library (harness/*.py), judged by its own self-tests: each applied to a
    copy of harness/ in the scratch folder (the tree's is imported by gates running beside this one),
    each row run from that copy's folder, so that `import harness` is the copy. No build is needed."""

    def __init__(self, gate: Gate, scratch: Path, rerun: str):
        self.gate, self.scratch, self.rerun = gate, scratch, rerun
        self.broken: set[str] = set()   # rows whose control failed

    def copy(self, where: str, m: Mutant | None = None) -> Path:
        """SCRATCH/WHERE holding a copy of harness/: the tree's for the control; for a mutant the control's
        copy with M's edit, so that an edit made in the tree meanwhile cannot pass for a kill."""
        source = ROOT if m is None else self.scratch / CONTROL_COPY
        top = self.scratch / where
        shutil.rmtree(top, ignore_errors=True)
        shutil.copytree(source / "harness", top / "harness", ignore=shutil.ignore_patterns("__pycache__"))
        if m is not None:
            (top / m.file).write_text(m.mutated_text(source))
        return top

    def run(self, ref: str, top: Path) -> tuple[bool, str, float]:
        """REF's self-test from TOP: (held, what it said, seconds). No PYTHONPATH: the copy alone is imported."""
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSAFEPATH", "TLSLAB_JUNIT_DIR")}
        env.update(TLSLAB_FAIL_FAST="1", PYTHONDONTWRITEBYTECODE="1",   # its first FAIL is the kill
                   TLSLAB_TREE=str(ROOT))   # the copy reads the tree's data (rows, the lab's outcome headers)
        start = time.monotonic()
        try:
            p = subprocess.run([PY, "-m", harness_module(ref)], cwd=top, env=env, capture_output=True, text=True,
                               timeout=LIBRARY_LIMIT_S)
        except subprocess.TimeoutExpired:
            return False, f"ran past {LIBRARY_LIMIT_S:.0f} s (killed)", time.monotonic() - start
        if p.returncode:
            return False, f"exit {p.returncode}: {first_failure(p.stdout, p.stderr)}", time.monotonic() - start
        return True, (p.stdout.strip().splitlines() or ["passed"])[-1], time.monotonic() - start

    def controls(self, mutants: list[Mutant]) -> None:
        """Each row the mutants name, from an unmutated copy: it must hold, or a kill proves nothing."""
        top = self.copy(CONTROL_COPY) if mutants else None
        for ref in dict.fromkeys(ref for m in mutants for ref, _ in m.cases()):
            ok, detail, secs = self.run(ref, top)
            if not self.gate.check(f"control/{ref}", ok, f"an unmutated copy of harness/: {detail}  [{secs:.1f} s]"):
                self.broken.add(ref)

    def mutant(self, m: Mutant) -> None:
        try:
            top = self.copy(m.name, m)
        except RowError as e:  # the module no longer holds its `find`
            self.gate.check(m.name, False, str(e))
            return
        judge_cases(self.gate, m, self.broken, f"{self.rerun} {m.name}", lambda ref: self.run(ref, top))


def client_rows(ns, build: Path, client: list[Mutant],
                real: dict[str, str]) -> tuple[GateRows, dict[str, GateRow], Builder]:
    """The gate rows the client's mutants name, found among the build's CTest tests, and the builder,
    every object those rows' programs need built and none older than its source."""
    gate_rows = GateRows(build)
    refs: dict[str, GateRow] = {}
    for m in client:
        for ref, _ in m.cases():
            if ref not in refs:
                try:
                    refs[ref] = gate_rows.resolve(ref)
                except RowError as e:
                    raise RowError(f"{m.where}: {m.name}: {e}") from e
    builder = Builder(build, programs(ns))
    for name in {p for row in refs.values() for p in gate_rows.programs_in(row, set(real.values()))}:
        builder.objects(next(k for k, v in real.items() if v == name))  # built, none older than its source
    return gate_rows, refs, builder


def main() -> int:
    ns = parse_args()
    build = ns.build_dir.resolve()
    try:
        mutants = load(ns.rows, ROOT)
    except RowError as e:
        bad_input("run_mutants.py", e)
    unknown = [n for n in ns.names if n not in {m.name for m in mutants}]
    if unknown:
        bad_input("run_mutants.py", f"no mutant named {unknown[0]!r} in {ns.rows}")
    selected = [m for m in mutants if not ns.names or m.name in ns.names]
    if ns.list:
        for m in selected:
            print(f"{m.name}: {m.file}: {m.breaks} -> " + ", ".join(f"{r}={v}" for r, v in m.cases()))
        return 0
    client = [m for m in selected if not m.in_harness]   # relinked from the build; the others need none
    real = {name: path for name, path in built_paths(build).items() if Path(path).is_file()}
    try:
        gate_rows, refs, builder = client_rows(ns, build, client, real) if client else (None, {}, None)
    except (RowError, BuildError) as e:
        bad_input("run_mutants.py", e)

    scratch = ns.work / "mutants"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    rerun = rerun_line(__file__, *[a for a in sys.argv[1:] if a not in ns.names])
    replay = Replay(gate_rows, builder, real, scratch, rerun)
    library = LibraryReplay(replay.gate, scratch, rerun)
    began = time.monotonic()
    try:
        if client:
            replay.prebuild(replay.wanted(refs, client), ns.jobs)   # refs: the selected mutants' rows, in order
        replay.controls(refs)
        library.controls([m for m in selected if m.in_harness])
        for m in selected:
            if m.in_harness:
                library.mutant(m)
            else:
                replay.mutant(m, refs)
    except RowError as e:  # a gate refused its arguments (exit 2): no verdict after it holds
        bad_input("run_mutants.py", e)
    print(f"TIME total {time.monotonic() - began:.1f} s", flush=True)
    return replay.gate.finish()


if __name__ == "__main__":
    sys.exit(main())
