"""The tally every gate keeps: one PASS/FAIL/SKIP line per case, then `NAME: N passed, N failed`.

    gate = Gate("faults")
    gate.check("PartialIo/bio", ok, why)
    return gate.finish()        # 0 all held, 1 a case failed, 2 no case ran

TLSLAB_FAIL_FAST=1 (set by mutants/gate_rows.py for a mutant's run): the first FAIL ends the gate
with exit 1 at once, its peers stopped on the way out; the verdict is the same, the rest unrun.
"""
from __future__ import annotations

import functools
import hashlib
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Optional

from . import junit
from .layout import ROOT, python_command


class Gate:
    """PASS/FAIL lines, then `N passed, N failed[, N skipped]`; exit code 1 on any failure.
    Every case's name, verdict and detail are kept (`cases`) for a results writer; with
    TLSLAB_JUNIT_DIR set, finish() writes them as JUnit XML (harness/junit.py), with the
    seconds since the previous case as each case's time."""

    def __init__(self, name: str):
        end_cleanly_on_sigterm()
        self.name = name
        self.passed = self.failed = self.skipped = 0
        self.cases: list[tuple[str, str, str]] = []   # (case, PASS|FAIL|SKIP, detail)
        self.repeats: list[str] = []                  # what the gate ran again on purpose, and why
        self._began = self._last = time.monotonic()
        self._seconds: list[float] = []               # each case's time since the one before

    def _line(self, verdict: str, case: str, detail: str) -> None:
        self.cases.append((case, verdict, detail))
        now = time.monotonic()
        self._seconds.append(now - self._last)
        self._last = now
        sep = ": " if verdict != "PASS" else "  ("
        tail = "" if not detail else (sep + detail + (")" if verdict == "PASS" else ""))
        print(f"{verdict} {case}{tail}", flush=True)

    def check(self, case: str, ok: bool, detail: str = "") -> bool:
        if ok:
            self.passed += 1
            self._line("PASS", case, detail)
        else:
            self.failed += 1
            self._line("FAIL", case, detail)
            if os.environ.get("TLSLAB_FAIL_FAST") == "1":
                print(f"{self.name}: stopped at the first failure (TLSLAB_FAIL_FAST)", flush=True)
                raise SystemExit(1)
        return ok

    def expect(self, case: str, expected, got, note: str = "") -> bool:
        """Compare whole values, print both on a mismatch."""
        extra = f"  {note}" if note else ""
        return self.check(case, expected == got, f"expected {expected!r}, got {got!r}{extra}"
                          if expected != got else f"{got!r}{extra}")

    def repeat(self, case: str, why: str) -> None:
        """Say that CASE's run was made again (a diagnosis: with stacks, under gdb), never silently:
        the line here, a property of the gate's JUnit file, and lab_gate.py's summary count it."""
        self.repeats.append(f"{case}: {why}")
        print(f"REPEAT {case}: {why}", flush=True)

    def skip(self, case: str, why: str) -> None:
        self.skipped += 1
        self._line("SKIP", case, why)

    def finish(self) -> int:
        if self.passed + self.failed + self.skipped == 0:  # a gate that ran nothing proves nothing
            print(f"{self.name}: no case ran (an --only or a name that matches nothing?)", file=sys.stderr)
            return 2
        junit.write(self.name, [(*c, s) for c, s in zip(self.cases, self._seconds)], time.monotonic() - self._began,
                    self.repeats)
        tail = f", {self.skipped} skipped" if self.skipped else ""
        print(f"{self.name}: {self.passed} passed, {self.failed} failed{tail} "
              f"in {time.monotonic() - self._began:.1f} s", flush=True)
        return 1 if self.failed else 0


def end_cleanly_on_sigterm() -> None:
    """CTest stops a gate past its TIMEOUT with SIGTERM: raised as SystemExit (143), so the gate's
    `with` blocks and atexit handlers still stop its peers and remove its files, as on Ctrl-C."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))


def verdict(gate: Gate, case: str, ok: bool, why: str) -> bool:
    """gate.check that prints WHY only when the case fails."""
    return gate.check(case, bool(ok), "" if ok else why)


def choose_seed(given: Optional[int]) -> int:
    """The run's seed: the one given (--seed S: to explore), else the tree's (tree_seed: the same tree
    draws the same sample, so a stale record is red on its first run, not on a lucky draw); printed
    either way, with where it came from."""
    if given is not None:
        print(f"seed {given} (given)", flush=True)
        return given
    seed, source = tree_seed()
    print(f"seed {seed} (from {source}; --seed S to explore)", flush=True)
    return seed


@functools.lru_cache(maxsize=None)
def tree_seed(root: Path = ROOT) -> tuple[int, str]:
    """A seed that is a function of the tree at ROOT, and what it came from, once a process: in a git
    checkout the commit's tree (`rev-parse HEAD^{tree}`) and the hash of `git diff HEAD` (tracked
    changes: a dirty tree is another tree; untracked files are not the tree's); elsewhere the hash of
    the paths and contents of the files under ROOT but build*/, .git and __pycache__ (what running
    Python writes)."""
    digest = hashlib.sha256()
    tree = git_output(root, "rev-parse", "HEAD^{tree}")
    diff = git_output(root, "diff", "--binary", "--no-color", "--no-ext-diff", "--no-textconv", "HEAD")
    if tree is not None and diff is not None:
        digest.update(b"git\0" + tree.strip() + b"\0" + diff)
        source = f"the tree {tree.decode().strip()[:7]}\u2026"
        if diff:
            source += f" and its uncommitted changes {hashlib.sha256(diff).hexdigest()[:7]}\u2026"
    else:
        digest.update(b"files\0")
        for path in _files(root):
            rel = path.relative_to(root).as_posix().encode()
            body = os.readlink(path).encode() if path.is_symlink() else path.read_bytes()
            digest.update(b"%d:%s%d:" % (len(rel), rel, len(body)) + body)
        source = f"the files under {root} (no git checkout), {digest.hexdigest()[:7]}\u2026"
    return int.from_bytes(digest.digest()[:8], "big") % (2**31 - 1) + 1, source


def git_output(root: Path, *args: str) -> Optional[bytes]:
    """git's stdout, or None where ROOT is no checkout (or git is missing or refuses it)."""
    try:
        proc = subprocess.run(["git", "-C", str(root), *args], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout if proc.returncode == 0 else None


def _files(root: Path) -> list[Path]:
    """Every file under ROOT, sorted, but build*/ (at the top), .git and __pycache__ folders, *.pyc."""
    found = []
    for top, dirs, files in os.walk(root):
        here = Path(top)
        dirs[:] = [d for d in dirs if d not in (".git", "__pycache__")
                   and not (here == root and d.startswith("build"))]
        found += [here / f for f in files if not f.endswith(".pyc")]
        found += [here / d for d in dirs if (here / d).is_symlink()]   # a link to a folder: its target
    return sorted(found)


def rerun_line(script, *args) -> str:
    """The one command that repeats a gate (or one case of it), quoted for a shell: SCRIPT, a file of
    the tree, runs as its module from the repository root."""
    return f"cd {shlex.quote(str(ROOT))} && " + shlex.join([*python_command(script), *map(str, args)])
