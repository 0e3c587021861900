#!/usr/bin/python3
"""Replays the recorded mutants of the client (mutants/mutants.toml) against the checks
that must kill them (mutants/checks.py).

First the controls: every check the selected rows name runs once against the unmutated
programs of the build (tlsnb, tlsnb_units, dns_judge_dump, fuzz_dns_name) and must pass,
or a kill would prove nothing; and an unmutated relink of each program must pass too, so
that a broken relink cannot pass for a kill. Then each mutant: its one source copied and
edited, recompiled with the build's flags, relinked with the build's other objects
(mutants/build.py), and every check of its row run against it. A case passes when the
verdict (killed / survived) is the recorded one: a mutant recorded killed that survives is
a hole in a gate; one recorded survived that is now killed must be re-recorded.

    run_mutants.py --tlsnb BUILD/client/tlsnb --build-dir BUILD ... [NAME ...]
"""
from __future__ import annotations

import random
import shlex
import shutil
import sys
import time
from pathlib import Path

from harness import Gate, gate_args

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
from build import Builder, BuildError, Program  # noqa: E402
from checks import CHECKS, Lab  # noqa: E402
from rows import Mutant, RowError, load  # noqa: E402

ROWS = HERE / "mutants.toml"
# A source each program compiles: its unchanged copy, rebuilt and relinked, is the relink control.
RELINK_SOURCE = {"tlsnb": "client/outcome.cc", "units": "client/outcome.cc",
                 "judge_dump": "client/dns_judge.cc", "fuzz_dns_name": "client/dns_name.cc"}


def extra_args(p) -> None:
    p.add_argument("names", nargs="*", help="run only these mutants (default: all)")
    p.add_argument("--build-dir", required=True, type=Path, help="the build tree (compile_commands.json, objects)")
    p.add_argument("--units", required=True, help="the build's tlsnb_units (GoogleTest, ASan+UBSan)")
    p.add_argument("--judge-dump", help="the build's fuzz/dns_judge_dump (its checks are skipped without it)")
    p.add_argument("--fuzz-dns-name", help="the build's fuzz/fuzz_dns_name (its checks are skipped without it)")
    p.add_argument("--fuzz-corpus", default="", help="the fuzz seed corpora (BUILD/fuzz/corpus)")
    p.add_argument("--io-shim", required=True, help="libtlslab_io.so")
    p.add_argument("--heap-shim", required=True, help="libtlslab_heap.so")
    p.add_argument("--fail-bio-new", required=True, help="libfail_bio_new.so (mutants/fail_bio_new.c)")
    p.add_argument("--ssl-libs", nargs="+", required=True, help="libssl and libcrypto to link with")
    p.add_argument("--gtest-libs", nargs="+", required=True, help="gtest_main and gtest to link the units with")
    p.add_argument("--san-flags", required=True, help="the ASan+UBSan flags (TLSLAB_SAN_FLAGS), one string")
    p.add_argument("--fuzz-flags", default="", help="the libFuzzer flags (TLSLAB_FUZZ_FLAGS), one string")
    p.add_argument("--seed", type=int, help="the run's seed (default: a fresh one, printed)")
    p.add_argument("--rows", type=Path, default=ROWS, help="the mutant rows (default mutants/mutants.toml)")
    p.add_argument("--list", action="store_true", help="print the rows and checks, run nothing")


def programs(ns) -> dict[str, Program]:
    san, fuzz = tuple(shlex.split(ns.san_flags)), tuple(shlex.split(ns.fuzz_flags))
    return {
        "tlsnb": Program("tlsnb", ("client/CMakeFiles/tlsnb.dir", "client/CMakeFiles/tlsnb_core.dir"),
                         ("-O3", "-DNDEBUG"), tuple(ns.ssl_libs)),
        "units": Program("units", ("client/tests/CMakeFiles/tlsnb_units.dir", "client/CMakeFiles/tlsnb_core_san.dir"),
                         san, (*ns.gtest_libs, *ns.ssl_libs, "-pthread")),
        "judge_dump": Program("judge_dump", ("fuzz/CMakeFiles/dns_judge_dump.dir",), san, ()),
        "fuzz_dns_name": Program("fuzz_dns_name", ("fuzz/CMakeFiles/fuzz_dns_name.dir",
                                                   "fuzz/CMakeFiles/dns_fuzz_objects.dir"), fuzz, ()),
    }


def bad_input(message: str) -> None:
    print(f"run_mutants.py: {message}", file=sys.stderr)
    sys.exit(2)


class Replay:
    """One run of the gate: the lab, the builder, the unmutated programs, the tally."""

    def __init__(self, lab: Lab, builder: Builder, real: dict[str, Path], scratch: Path, rerun: str):
        self.lab, self.builder, self.real, self.scratch, self.rerun = lab, builder, real, scratch, rerun
        self.gate = Gate("mutants")
        self.broken: set[str] = set()   # checks whose control failed

    def missing(self, check: str) -> str:
        program = CHECKS[check].program
        return "" if program in self.real else f"{program} is not built in this tree"

    def controls(self, checks: list[str]) -> None:
        """Each check against the unmutated programs; then an unmutated relink of each program."""
        for name in checks:
            if why := self.missing(name):
                self.gate.skip(f"control/{name}", why)
                continue
            start = time.monotonic()
            v = CHECKS[name].run(self.lab, self.real[CHECKS[name].program])
            if not self.gate.check(f"control/{name}", v.passed, f"{v.detail}  [{time.monotonic() - start:.1f} s]"):
                self.broken.add(name)
        for program in sorted({CHECKS[c].program for c in checks if not self.missing(c)}):
            uses = [c for c in checks if CHECKS[c].program == program]
            working = [c for c in uses if c not in self.broken]
            if working:
                self.relink(program, uses, working[0])

    def relink(self, program: str, uses: list[str], probe: str) -> None:
        """The relink of an unchanged source must pass a check: else every "kill" could be the relink's."""
        source = ROOT / RELINK_SOURCE[program]
        try:
            path, secs = self.builder.make(program, source, source.read_text(), self.scratch / f"relink-{program}")
            v = CHECKS[probe].run(self.lab, path)
            ok, detail = v.passed, f"unmutated relink ({secs:.1f} s) {'passes' if v.passed else 'fails'} {probe}: {v.detail}"
        except BuildError as e:
            ok, detail = False, str(e)
        if not self.gate.check(f"control/relink_{program}", ok, detail):
            self.broken.update(uses)

    def mutant(self, m: Mutant) -> None:
        start = time.monotonic()
        try:
            text = m.mutated_text(ROOT)
        except RowError as e:  # the source changed while the gate ran
            self.gate.check(m.name, False, str(e))
            return
        built: dict[str, Path] = {}
        build_s = 0.0
        for program in sorted({CHECKS[c].program for c, _ in m.cases() if not self.missing(c)}):
            try:
                built[program], secs = self.builder.make(program, ROOT / m.file, text, self.scratch / m.name)
                build_s += secs
            except BuildError as e:
                for check, _ in m.cases():
                    if CHECKS[check].program == program:
                        self.gate.check(f"{m.name}/{check}", False, f"build: {e}")
        for check, expected in m.cases():
            case = f"{m.name}/{check}"
            if why := self.missing(check):
                self.gate.skip(case, why)
            elif CHECKS[check].program not in built:
                continue  # its build failed, reported above
            elif check in self.broken:
                self.gate.check(case, False, "its control failed: the check proves nothing")
            else:
                self.case(case, check, expected, built[CHECKS[check].program], m.name)
        print(f"TIME {m.name} {time.monotonic() - start:.1f} s (build {build_s:.1f} s)", flush=True)

    def case(self, case: str, check: str, expected: str, program: Path, name: str) -> None:
        t0 = time.monotonic()
        v = CHECKS[check].run(self.lab, program)
        got = "survived" if v.passed else "killed"
        took = f"[check {time.monotonic() - t0:.1f} s]"
        if got == expected:
            self.gate.check(case, True, f"{got} as recorded: {v.detail}  {took}")
            return
        hint = "a hole in the gate: the check no longer kills it" if expected == "killed" else "re-record the row"
        self.gate.check(case, False, f"expected {expected}, got {got} ({hint}): {v.detail}  {took}\n"
                                     f"  rerun: {self.rerun} {name}")


def main() -> int:
    ns = gate_args("Replay the recorded mutants of the client against their killers.", extra_args)
    try:
        mutants = load(ns.rows, ROOT, set(CHECKS))
    except RowError as e:
        bad_input(str(e))
    unknown = [n for n in ns.names if n not in {m.name for m in mutants}]
    if unknown:
        bad_input(f"no mutant named {unknown[0]!r} in {ns.rows}")
    if ns.list:
        for m in mutants:
            print(f"{m.name}: {m.file}: {m.breaks} -> " + ", ".join(f"{c}={v}" for c, v in m.cases()))
        for c in CHECKS.values():
            print(f"check {c.name} ({c.program}): {c.what}")
        return 0
    real = {name: Path(path) for name, path in [("tlsnb", ns.tlsnb), ("units", ns.units),
                                                ("judge_dump", ns.judge_dump), ("fuzz_dns_name", ns.fuzz_dns_name)]
            if path}
    for path in (*real.values(), ns.io_shim, ns.heap_shim, ns.fail_bio_new, *ns.ssl_libs, *ns.gtest_libs):
        if not Path(path).is_file():
            bad_input(f"missing input: {path} (build the tree first)")
    if "fuzz_dns_name" in real and (not ns.fuzz_flags or not Path(ns.fuzz_corpus, "fuzz_dns_name").is_dir()):
        bad_input("--fuzz-dns-name needs --fuzz-flags and --fuzz-corpus with a fuzz_dns_name folder")
    try:
        builder = Builder(ns.build_dir, programs(ns))
        for program in real:
            builder.objects(program)  # every object built, none older than its source
    except BuildError as e:
        bad_input(str(e))

    seed = ns.seed if ns.seed is not None else random.SystemRandom().randrange(1, 2**31)
    print(f"seed {seed}", flush=True)
    scratch = Path(ns.work) / "mutants"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    lab = Lab(certs=ns.certs, work=scratch, io_shim=ns.io_shim, heap_shim=ns.heap_shim,
              fail_bio_new=ns.fail_bio_new, fuzz_corpus=ns.fuzz_corpus, seed=seed)
    argv = [a for a in sys.argv[1:] if a not in ns.names]
    if "--seed" in argv:
        del argv[argv.index("--seed"):argv.index("--seed") + 2]
    rerun = shlex.join([sys.executable, sys.argv[0], *argv, "--seed", str(seed)])

    selected = [m for m in mutants if not ns.names or m.name in ns.names]
    replay = Replay(lab, builder, real, scratch, rerun)
    began = time.monotonic()
    replay.controls(list(dict.fromkeys(c for m in selected for c, _ in m.cases())))
    for m in selected:
        replay.mutant(m)
    print(f"TIME total {time.monotonic() - began:.1f} s", flush=True)
    return replay.gate.finish()


if __name__ == "__main__":
    sys.exit(main())
