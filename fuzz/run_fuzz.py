#!/usr/bin/python3
"""One libFuzzer target as a gate: replay its regression inputs, then a seeded run.

    run_fuzz.py --fuzzer BUILD/fuzz/fuzz_dns_name --corpus BUILD/fuzz/corpus/fuzz_dns_name [--runs N] [--seed S]

The target's name is the fuzzer's file name. Its options (fuzz/<target>.options, the file
OSS-Fuzz reads too) and fuzz/dns.dict are passed to libFuzzer. New inputs go to a scratch
corpus under $TLSLAB_WORK, emptied first, so a run depends only on the seed and the seeds.
A crash is saved as fuzz/crashes/<target>/crash-<sha1> (or under $TLSLAB_FUZZ_CRASHES), and the line that reproduces it is
printed; to keep it as a regression, move it into fuzz/regressions/<target>/.
"""
from __future__ import annotations

import argparse
import configparser
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from harness import Gate, rerun_line
from harness.args import default_work

FUZZ = Path(__file__).resolve().parent


def options_of(target: str) -> list[str]:
    """libFuzzer flags from fuzz/<target>.options, except `dict` (OSS-Fuzz's copy of dns.dict)."""
    parser = configparser.ConfigParser()
    parser.read(FUZZ / f"{target}.options")
    if not parser.has_section("libfuzzer"):
        return []
    return [f"-{key}={value}" for key, value in parser.items("libfuzzer") if key != "dict"]


def replay_regressions(gate: Gate, fuzzer: Path, target: str) -> None:
    folder = FUZZ / "regressions" / target
    inputs = sorted(p for p in folder.glob("*") if p.is_file() and p.name != "README.md") if folder.is_dir() else []
    if not inputs:
        gate.check("regressions", True, f"none in fuzz/regressions/{target}/")
        return
    proc = subprocess.run([str(fuzzer), *map(str, inputs)], capture_output=True, text=True, timeout=120)
    if proc.returncode == 0:
        gate.check("regressions", True, f"{len(inputs)} inputs replayed from fuzz/regressions/{target}/")
        return
    failing = re.findall(r"Running: (\S+)", proc.stderr)
    gate.check("regressions", False, f"exit {proc.returncode} on {failing[-1] if failing else '?'}\n"
               f"{tail(proc.stderr)}\n  reproduce: {fuzzer} {failing[-1] if failing else folder}")


def tail(text: str, lines: int = 25) -> str:
    return "\n".join("    " + line for line in text.splitlines()[-lines:])


def stat(log: str, name: str) -> str:
    found = re.findall(rf"stat::{name}:\s*(\d+)", log)
    return found[-1] if found else "?"


def fuzz(gate: Gate, fuzzer: Path, target: str, corpus: Path, work: Path, runs: int, seed: int) -> None:
    scratch = work / "fuzz" / target
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    crashes = Path(os.environ.get("TLSLAB_FUZZ_CRASHES", FUZZ / "crashes")) / target
    crashes.mkdir(parents=True, exist_ok=True)
    argv = [str(fuzzer), f"-seed={seed}", f"-runs={runs}", "-print_final_stats=1", f"-dict={FUZZ / 'dns.dict'}",
            f"-artifact_prefix={crashes}/", "-timeout=20", "-rss_limit_mb=2048", *options_of(target),
            str(scratch), str(corpus)]
    start = time.monotonic()
    proc = subprocess.run(argv, capture_output=True, text=True)
    seconds = time.monotonic() - start
    (work / "fuzz" / f"{target}.log").write_text(proc.stderr)
    executed = stat(proc.stderr, "number_of_executed_units")
    rate = f"{int(executed) / seconds:,.0f}" if executed.isdigit() and seconds > 0 else "?"
    cov = re.findall(r"cov: (\d+) ft: (\d+)", proc.stderr)
    if proc.returncode != 0:
        artifact = re.findall(r"Test unit written to (\S+)", proc.stderr)
        where = artifact[-1] if artifact else "(no input saved)"
        gate.check("fuzz", False, f"exit {proc.returncode} after {executed} executions, seed {seed}\n"
                   f"{tail(proc.stderr)}\n  reproduce: {fuzzer} {where}\n"
                   f"  keep it: mv {where} {FUZZ / 'regressions' / target}/")
        return
    done = executed.isdigit() and int(executed) >= runs
    detail = (f"{executed} executions in {seconds:.1f} s, {rate} exec/s, seed {seed}, "
              f"cov {cov[-1][0] if cov else '?'} ft {cov[-1][1] if cov else '?'}, "
              f"corpus {len(list(scratch.iterdir()))} new inputs")
    gate.check("fuzz", done, detail if done else f"fewer executions than {runs}: {detail}")
    for line in proc.stderr.splitlines():  # a target's own tally (fuzz_dns_cares prints one)
        if line.startswith("differential:"):
            print(f"  {line}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fuzzer", required=True, type=Path, help="the libFuzzer binary")
    parser.add_argument("--corpus", required=True, type=Path, help="its seed corpus (read only)")
    parser.add_argument("--runs", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=int(os.environ.get("TLSLAB_FUZZ_SEED", "1")),
                        help="libFuzzer -seed (default $TLSLAB_FUZZ_SEED or 1)")
    parser.add_argument("--work", type=Path, default=Path(default_work()))
    args = parser.parse_args()
    if not os.access(args.fuzzer, os.X_OK):
        print(f"run_fuzz.py: no fuzzer at {args.fuzzer}", file=sys.stderr)
        return 2
    if not args.corpus.is_dir():
        print(f"run_fuzz.py: no seed corpus at {args.corpus} (build the fuzz_corpus target)", file=sys.stderr)
        return 2
    target = args.fuzzer.name
    gate = Gate(target)
    print(f"{target}: seed {args.seed}, {args.runs} runs; reproduce: "
          f"{rerun_line(__file__, '--fuzzer', args.fuzzer, '--corpus', args.corpus, '--runs', args.runs, '--seed', args.seed)}",
          flush=True)
    replay_regressions(gate, args.fuzzer, target)
    fuzz(gate, args.fuzzer, target, args.corpus, args.work, args.runs, args.seed)
    return gate.finish()


if __name__ == "__main__":
    sys.exit(main())
