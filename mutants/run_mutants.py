#!/usr/bin/python3
"""Replays the recorded mutants of the client (mutants/mutants.toml) against the checks
that must kill them (mutants/checks.py).

First the controls: every check the selected rows name runs once against the unmutated
programs (the build's tlsnb and tlsnb_units) and must pass, or a kill would prove nothing;
and an unmutated relink of each program must pass too, so a broken relink cannot pass for
a kill. Then each mutant: its one source copied and edited, recompiled with the build's
flags, relinked with the build's other objects (mutants/build.py), and every check of its
row run against it. A case passes when the verdict (killed / survived) is the recorded one:
a mutant recorded killed that survives is a hole in a gate; one recorded survived that is
now killed must be re-recorded.

    run_mutants.py --tlsnb build/client/tlsnb --build-dir build ... [NAME ...]
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


def extra_args(p) -> None:
    p.add_argument("names", nargs="*", help="run only these mutants (default: all)")
    p.add_argument("--build-dir", required=True, type=Path, help="the build tree (compile_commands.json, objects)")
    p.add_argument("--units", required=True, help="the build's tlsnb_units (GoogleTest, ASan+UBSan)")
    p.add_argument("--io-shim", required=True, help="libtlslab_io.so")
    p.add_argument("--heap-shim", required=True, help="libtlslab_heap.so")
    p.add_argument("--fail-bio-new", required=True, help="libfail_bio_new.so (mutants/fail_bio_new.c)")
    p.add_argument("--ssl-libs", nargs="+", required=True, help="libssl and libcrypto to link with")
    p.add_argument("--gtest-libs", nargs="+", required=True, help="gtest_main and gtest to link the units with")
    p.add_argument("--san-flags", required=True, help="the sanitizer flags of tlsnb_core_san, one string")
    p.add_argument("--seed", type=int, help="the body seed (default: a fresh one, printed)")
    p.add_argument("--rows", type=Path, default=ROWS, help="the mutant rows (default mutants/mutants.toml)")
    p.add_argument("--list", action="store_true", help="print the rows and checks, run nothing")


def programs(ns) -> dict[str, Program]:
    return {
        "tlsnb": Program("tlsnb", ("client/CMakeFiles/tlsnb.dir", "client/CMakeFiles/tlsnb_core.dir"),
                         ("-O3", "-DNDEBUG"), tuple(ns.ssl_libs)),
        "units": Program("units", ("client/tests/CMakeFiles/tlsnb_units.dir", "client/CMakeFiles/tlsnb_core_san.dir"),
                         tuple(shlex.split(ns.san_flags)), (*ns.gtest_libs, *ns.ssl_libs, "-pthread")),
    }


def bad_input(message: str) -> None:
    print(f"run_mutants.py: {message}", file=sys.stderr)
    sys.exit(2)


def run_controls(gate: Gate, lab: Lab, builder: Builder, real: dict[str, Path], checks: list[str],
                 scratch: Path) -> set[str]:
    """Each check against the unmutated programs; then an unmutated relink. Answers the checks that failed."""
    broken = set()
    for name in checks:
        check = CHECKS[name]
        start = time.monotonic()
        v = check.run(lab, real[check.program])
        if not gate.check(f"control/{name}", v.passed, f"{v.detail}  [{time.monotonic() - start:.1f} s]"):
            broken.add(name)
    # A relink of the unmutated source must behave: otherwise every "kill" could be the relink's.
    for program in sorted({CHECKS[c].program for c in checks}):
        probe = next(c for c in checks if CHECKS[c].program == program and c not in broken) if any(
            CHECKS[c].program == program and c not in broken for c in checks) else None
        if probe is None:
            continue
        source = ROOT / "client" / "outcome.cc"
        try:
            path, secs = builder.make(program, source, source.read_text(), scratch / f"relink-{program}")
        except BuildError as e:
            gate.check(f"control/relink_{program}", False, str(e))
            broken.update(c for c in checks if CHECKS[c].program == program)
            continue
        v = CHECKS[probe].run(lab, path)
        if not gate.check(f"control/relink_{program}", v.passed, f"unmutated relink ({secs:.1f} s) passes {probe}"
                          if v.passed else f"unmutated relink fails {probe}: {v.detail}"):
            broken.update(c for c in checks if CHECKS[c].program == program)
    return broken


def run_mutant(gate: Gate, lab: Lab, builder: Builder, m: Mutant, broken: set[str], scratch: Path,
               rerun: str) -> None:
    start = time.monotonic()
    text = m.mutated_text(ROOT, ROWS)
    built: dict[str, Path] = {}
    build_s = 0.0
    for program in sorted({CHECKS[c].program for c, _ in m.cases()}):
        try:
            built[program], secs = builder.make(program, ROOT / m.file, text, scratch / m.name)
            build_s += secs
        except BuildError as e:
            for check, _ in m.cases():
                if CHECKS[check].program == program:
                    gate.check(f"{m.name}/{check}", False, f"build: {e}")
    for check, expected in m.cases():
        program = CHECKS[check].program
        if program not in built:
            continue
        case = f"{m.name}/{check}"
        if check in broken:
            gate.check(case, False, "its control failed: the check proves nothing")
            continue
        t0 = time.monotonic()
        v = CHECKS[check].run(lab, built[program])
        got = "survived" if v.passed else "killed"
        took = f"[check {time.monotonic() - t0:.1f} s]"
        if got == expected:
            gate.check(case, True, f"{got} as recorded: {v.detail}  {took}")
        else:
            hint = ("a hole in the gate: the check no longer kills it" if expected == "killed"
                    else "now killed: re-record the row")
            gate.check(case, False, f"expected {expected}, got {got} ({hint}): {v.detail}  {took}; rerun: {rerun} {m.name}")
    print(f"TIME {m.name} {time.monotonic() - start:.1f} s (build {build_s:.1f} s)", flush=True)


def main() -> int:
    ns = gate_args("Replay the recorded mutants of the client against their killers.", extra_args)
    try:
        mutants = load(ns.rows, ROOT, set(CHECKS))
    except RowError as e:
        bad_input(str(e))
    unknown = [n for n in ns.names if n not in {m.name for m in mutants}]
    if unknown:
        bad_input(f"no mutant named {unknown[0]!r} in {ns.rows}")
    selected = [m for m in mutants if not ns.names or m.name in ns.names]
    if ns.list:
        for m in mutants:
            print(f"{m.name}: {m.file}: {m.breaks} -> " + ", ".join(f"{c}={v}" for c, v in m.cases()))
        for c in CHECKS.values():
            print(f"check {c.name} ({c.program}): {c.what}")
        return 0
    for path in (ns.units, ns.io_shim, ns.heap_shim, ns.fail_bio_new, *ns.ssl_libs, *ns.gtest_libs):
        if not Path(path).is_file():
            bad_input(f"missing input: {path} (build the tree first)")
    try:
        builder = Builder(ns.build_dir, programs(ns))
    except BuildError as e:
        bad_input(str(e))

    seed = ns.seed if ns.seed is not None else random.SystemRandom().randrange(1, 2**31)
    print(f"seed {seed}", flush=True)
    scratch = Path(ns.work) / "mutants"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    lab = Lab(certs=ns.certs, work=scratch, io_shim=ns.io_shim, heap_shim=ns.heap_shim,
              fail_bio_new=ns.fail_bio_new, seed=seed)
    rerun = " ".join([sys.executable, *[a for a in sys.argv if a not in ns.names], "--seed", str(seed)])

    gate = Gate("mutants")
    began = time.monotonic()
    needed = list(dict.fromkeys(c for m in selected for c, _ in m.cases()))
    broken = run_controls(gate, lab, builder, {"tlsnb": Path(ns.tlsnb), "units": Path(ns.units)}, needed, scratch)
    for m in selected:
        run_mutant(gate, lab, builder, m, broken, scratch, rerun)
    print(f"TIME total {time.monotonic() - began:.1f} s", flush=True)
    return gate.finish()


if __name__ == "__main__":
    sys.exit(main())
