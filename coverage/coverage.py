#!/usr/bin/python3
"""Line and branch coverage of client/ and shims/ by the gate's own labels (not a gate: figures only).

Configures a build of its own (BUILD, default build-coverage/) with gcc's --coverage (g++ 12 and
gcov: clang-14's --coverage read through llvm-cov gave no usable branch data), builds it, runs the
chosen CTest labels on it (default: the default gate's, but clients, mutants and fuzz: the clients
under test are not the reference, a mutant relinked without --coverage cannot link, and libFuzzer
is clang's, so fuzz/ is not in this build), then asks gcovr (apt; gcov through gcov_throw.py) for
the figures: one summary line, a table per file, the watched files' line and branch figures, an
HTML report (BUILD/coverage/index.html), and every branch left uncovered in the files the issue
names, by line, to be covered by a row or given a reason (README.md). It prints, it asserts nothing.

    /usr/bin/python3 coverage/coverage.py [--build DIR] [--labels client,faults] [--no-run]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LABELS = "unit,client,matrix,faults,leaks,dns,gaps,hostile"
WATCHED = ("client/attempt.cc", "client/transport.cc", "client/loop.cc", "client/resolver.cc",
           "client/http_response.cc")
# Every folder of the root CMakeLists.txt's default list but these (read from it, so that a new gate
# folder is built here too): fuzz/ needs clang (libFuzzer); clients/, mutants/ and bench/ are not measured.
NOT_BUILT = {"fuzz", "clients", "mutants", "bench"}


def folders() -> str:
    text = (ROOT / "CMakeLists.txt").read_text()
    listed = re.search(r"^\s*set\(TLSLAB_FOLDERS ([^)]*)\)", text, re.M)
    if listed is None:
        raise SystemExit(f"coverage.py: no `set(TLSLAB_FOLDERS ...)` in {ROOT / 'CMakeLists.txt'}")
    return ";".join(f for f in listed.group(1).split() if f not in NOT_BUILT)
# gcov (gcc 12's), through gcov_throw.py: gcov marks an exception edge `(throw)` only where its block
# ran, so without it --exclude-throw-branches would keep every such edge of code not run in some object.
GCOV = f"/usr/bin/python3 {ROOT / 'coverage' / 'gcov_throw.py'}"


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", type=Path, default=ROOT / "build-coverage", help="the coverage build (default build-coverage/)")
    p.add_argument("--labels", default=LABELS, help=f"CTest labels to run, comma-separated (default {LABELS})")
    p.add_argument("--no-run", action="store_true", help="report what the build already holds (no build, no labels)")
    return p.parse_args()


def step(what: str, argv: list[str], log: Path, **kw) -> int:
    began = time.monotonic()
    with log.open("w") as out:
        rc = subprocess.run(argv, stdout=out, stderr=subprocess.STDOUT, **kw).returncode
    print(f"== {what}: exit {rc} in {time.monotonic() - began:.0f} s (log {log})", flush=True)
    return rc


def build_and_run(ns) -> None:
    build = ns.build.resolve()
    build.mkdir(parents=True, exist_ok=True)
    flags = "--coverage -O0"
    # gcc, not the root's clang-14; TLSLAB_SAN_FLAGS empty: the _san twins (the units') compile like
    # the others, so that gcov's branches of one line are the same branches in every object.
    configure = ["cmake", "-S", str(ROOT), "-B", str(build), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Debug",
                 "-DCMAKE_C_COMPILER=gcc", "-DCMAKE_CXX_COMPILER=g++", "-DTLSLAB_SAN_FLAGS=",
                 f"-DCMAKE_C_FLAGS={flags}", f"-DCMAKE_CXX_FLAGS={flags}", "-DCMAKE_EXE_LINKER_FLAGS=--coverage",
                 "-DCMAKE_SHARED_LINKER_FLAGS=--coverage", f"-DTLSLAB_FOLDERS={folders()}"]
    if step("configure", configure, build / "coverage-configure.log") or \
            step("build", ["cmake", "--build", str(build), "-j2"], build / "coverage-build.log"):
        sys.exit("coverage.py: the coverage build failed (see its log)")
    subprocess.run(["find", str(build), "-name", "*.gcda", "-delete"], check=False)
    began = time.monotonic()
    for label in ns.labels.split(","):
        step(f"ctest -L {label}", ["ctest", "--test-dir", str(build), "-L", f"^{label}$", "--output-on-failure"],
             build / f"coverage-ctest-{label}.log", env={**os.environ, "TLSLAB_JUNIT_DIR": ""})
    print(f"== labels {ns.labels}: {time.monotonic() - began:.0f} s", flush=True)


def gcovr(build: Path, *extra: str) -> subprocess.CompletedProcess:
    argv = ["gcovr", "--root", str(ROOT), "--object-directory", str(build), "--gcov-executable", GCOV,
            "--filter", str(ROOT / "client") + "/", "--filter", str(ROOT / "shims") + "/",
            "--exclude", ".*/tests/.*", "--gcov-ignore-parse-errors", "--exclude-throw-branches",
            "--exclude-unreachable-branches", *extra]
    return subprocess.run(argv, capture_output=True, text=True, cwd=build)


def report(build: Path) -> None:
    html = build / "coverage" / "index.html"
    html.parent.mkdir(exist_ok=True)
    out = build / "coverage"
    summary = gcovr(build, "--html-details", str(html), "--txt", str(out / "lines.txt"), "--json", str(out / "coverage.json"),
                    "--json-summary", str(out / "summary.json"))
    if summary.returncode != 0:
        sys.exit(f"coverage.py: gcovr failed: {summary.stderr.strip()[-500:]}")
    per_file = gcovr(build, "--add-tracefile", str(out / "coverage.json"), "--branches", "--txt")  # no second gcov pass
    print(per_file.stdout.rstrip())
    figures = json.loads((out / "summary.json").read_text())
    print(summary_line(figures))
    for entry in figures.get("files", []):
        if entry["filename"] in WATCHED:
            print(f"{entry['filename']}: {figure('lines', entry, 'line')}, {figure('branches', entry, 'branch')}")
    print(f"HTML: {html}")
    uncovered(json.loads((build / "coverage" / "coverage.json").read_text()))


def figure(kind: str, s: dict, key: str) -> str:
    """`lines 95.5% (2466 of 2582)` from gcovr's summary (the whole, or one file's entry)."""
    covered, total = s[f"{key}_covered"], s[f"{key}_total"]
    return f"{kind} {100.0 * covered / total if total else 0.0:.1f}% ({covered} of {total})"


def summary_line(s: dict) -> str:
    """One line: lines, branches and functions of client/ and shims/ (tests excluded)."""
    return (f"coverage: {figure('lines', s, 'line')}, {figure('branches', s, 'branch')}, "
            f"{figure('functions', s, 'function')} (client/ and shims/, tests excluded)")


def uncovered(data: dict) -> None:
    """Every branch never taken in the watched files: file:line (taken of total)."""
    for entry in data.get("files", []):
        name = entry["file"]
        if name not in WATCHED:
            continue
        misses = []
        for line in entry.get("lines", []):
            branches = line.get("branches", [])
            taken = sum(1 for b in branches if b.get("count", 0) > 0)
            if branches and taken < len(branches):
                misses.append(f"{line['line_number']}({taken}/{len(branches)})")
        print(f"uncovered branches {name}: {len(misses)} lines: {' '.join(misses) or '-'}")


def main() -> int:
    ns = parse_args()
    if not ns.no_run:
        build_and_run(ns)
    report(ns.build.resolve())
    return 0


if __name__ == "__main__":
    sys.exit(main())
