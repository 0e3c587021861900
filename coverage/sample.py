#!/usr/bin/python3
"""What the default gate's sample of a C++ adapter reaches, beside what its whole crossings reach (figures only).

A build of its own (BUILD, default build-adapter-cov/: clang-14, Release, TLSLAB_ADAPTER_COVERAGE=ON, so
the C++ adapters and clients/contract carry clang's source-based coverage and nothing else changes),
then for each client named: its crossings as the default gate runs them (sampled: matrix, faults, leaks,
hostile, the client rows sample, the allocation sweep where it has one, and PKITS), then as `--full` does (TLSLAB_FULL=1 and
the full-label twins: every row, valgrind's too, the client rows), each set of runs writing its own
profiles (LLVM_PROFILE_FILE). llvm-cov-14 then counts the adapter's lines of its room and of
clients/contract each set executed, and prints every line the whole crossings run and the sample does
not: a line the sample should reach (a row to add to it) or may leave to `--full` (its reason).
The full allocation sweep is not run (hours); both sets run the sampled sweep. The verdicts of this
build are not judged (the profile runtime allocates and opens its file at exit: the sweep's
NothingLeftBehind fails here), and harness/last_full.toml is put back as it was: an instrumented
build's green is not the shipped build's.

    /usr/bin/python3 -m coverage.sample [--build DIR] [--clients gnutls,curl] [--no-build]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from coverage.coverage import step

ROOT = Path(__file__).resolve().parent.parent
CPP_ADAPTERS = ("asio", "curl", "gnutls", "mbedtls", "wolfssl")
LAST_FULL = ROOT / "harness" / "last_full.toml"


def sample_tests(client: str) -> str:
    return f"^((matrix|faults|leaks|hostile|alloc_sweep|client_sample)_{client}|pkits)$"


def full_tests(client: str) -> str:
    return f"^((matrix|faults|leaks_full|hostile_full|client)_{client}|alloc_sweep_{client}|pkits)$"


def run_set(build: Path, name: str, tests: str, full: bool) -> Path:
    """The tests matching TESTS with profiles written under BUILD/profiles/NAME; the merged profile."""
    raw = build / "profiles" / name
    shutil.rmtree(raw, ignore_errors=True)
    raw.mkdir(parents=True)
    env = {**os.environ, "LLVM_PROFILE_FILE": str(raw / "%p-%m.profraw")}
    env.pop("TLSLAB_FULL", None)
    if full:
        env["TLSLAB_FULL"] = "1"
    step(f"{name} ({tests})", ["ctest", "--test-dir", str(build), "-R", tests, "-j2", "--output-on-failure"],
         build / f"{name}.log", env=env)
    merged = build / "profiles" / f"{name}.profdata"
    files = sorted(str(p) for p in raw.glob("*.profraw"))
    if not files:
        raise SystemExit(f"sample.py: no profile written by {name}: was {build} configured with "
                         f"TLSLAB_ADAPTER_COVERAGE=ON?")
    subprocess.run(["llvm-profdata-14", "merge", "-sparse", "-o", str(merged), *files], check=True)
    return merged


def lines_run(binary: Path, profile: Path, sources: list[Path]) -> dict[str, set[int]]:
    """Per source file of SOURCES: the lines llvm-cov counts as executed at least once."""
    out = subprocess.run(["llvm-cov-14", "export", str(binary), f"-instr-profile={profile}", "-skip-functions",
                          *map(str, sources)], capture_output=True, text=True, check=True).stdout
    run: dict[str, set[int]] = {}
    for f in json.loads(out)["data"][0]["files"]:
        lines: dict[int, int] = {}
        for line, _col, count, has_count, is_region_entry, is_gap in (s[:6] for s in f["segments"]):
            if has_count and is_region_entry and not is_gap:
                lines[line] = max(lines.get(line, 0), count)
        run[str(Path(f["filename"]).resolve().relative_to(ROOT))] = {n for n, c in lines.items() if c > 0}
    return run


def compare(build: Path, client: str, sample: Path, full: Path) -> tuple[int, int]:
    binary = build / "clients" / client / f"tlsnb-{client}"
    sources = sorted([*(ROOT / "clients" / client).glob("*.cc"), *(ROOT / "clients" / "contract").glob("*.cc")])
    by_sample, by_full = lines_run(binary, sample, sources), lines_run(binary, full, sources)
    s_total = sum(len(v) for v in by_sample.values())
    f_total = sum(len(v) for v in by_full.values())
    print(f"{client}: lines run by the sample {s_total}, by the whole crossings {f_total} "
          f"({100 * s_total / max(f_total, 1):.1f}%)")
    for path in sorted(by_full):
        only = sorted(by_full[path] - by_sample.get(path, set()))
        if only:
            text = (ROOT / path).read_text().splitlines()
            print(f"  {path}: {len(only)} line(s) only the whole crossings run")
            for n in only:
                print(f"    {n}: {text[n - 1].strip()[:110]}")
        extra = by_sample.get(path, set()) - by_full[path]
        if extra:
            print(f"  {path}: {len(extra)} line(s) the sample runs and the whole crossings do not: {sorted(extra)[:20]}")
    return s_total, f_total


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", type=Path, default=ROOT / "build-adapter-cov")
    p.add_argument("--clients", default="gnutls", help=f"comma-separated, of {', '.join(CPP_ADAPTERS)}")
    p.add_argument("--no-build", action="store_true", help="the build as it is (configured and built before)")
    ns = p.parse_args()
    clients = [c for c in ns.clients.split(",") if c]
    if bad := [c for c in clients if c not in CPP_ADAPTERS]:
        print(f"sample.py: --clients {bad[0]}: not a C++ adapter ({', '.join(CPP_ADAPTERS)})", file=sys.stderr)
        return 2
    build = ns.build.resolve()
    build.mkdir(parents=True, exist_ok=True)
    if not ns.no_build:
        if step("configure", ["cmake", "-S", str(ROOT), "-B", str(build), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                              "-DTLSLAB_ADAPTER_COVERAGE=ON"], build / "configure.log"):
            return 1
        if step("build", ["cmake", "--build", str(build), "-j2"], build / "build.log"):
            return 1
    kept = LAST_FULL.read_bytes() if LAST_FULL.is_file() else None
    try:
        for client in clients:
            compare(build, client, run_set(build, f"{client}-sample", sample_tests(client), False),
                    run_set(build, f"{client}-full", full_tests(client), True))
    finally:
        if kept is not None:
            LAST_FULL.write_bytes(kept)
    return 0


if __name__ == "__main__":
    sys.exit(main())
