"""The one test harness every Python gate in tlslab uses.

Starts test peers (they print `READY <port>`), runs `tlsnb --json`, and keeps the
PASS/FAIL tally that ends every gate with `N passed, N failed`.

    from harness import Gate, Server, run_tlsnb, gate_args
"""
from __future__ import annotations

import argparse
import json
import os
import re
import select
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

PY = "/usr/bin/python3"
SERVERS = Path(__file__).resolve().parent
ROOT = SERVERS.parent


class HarnessError(Exception):
    """A set-up failure (a peer that never said READY): the gate fails, loudly."""


class Server:
    """A test peer started as a child: waits for `READY <port>`, stops with SIGTERM.

    After stop(), `report` holds the JSON of the peer's last `REPORT {...}` line
    (every lab peer prints one when it exits), or {} when it printed none.
    """

    def __init__(self, argv: list[str], ready_timeout: float = 15.0, env: Optional[dict] = None):
        self.argv = argv
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, env=env, start_new_session=True)
        self._early = b""  # stdout read while waiting for the ready line
        self.port = self._await_ready(ready_timeout)
        self.report: dict = {}
        self.stderr = ""

    @classmethod
    def script(cls, name: str, *args: str, **kw) -> "Server":
        """Start servers/<name> with Debian's python3."""
        return cls([PY, str(SERVERS / name), *map(str, args)], **kw)

    # The line that says a peer listens, and the group holding its port.
    ready_pattern = re.compile(rb"^READY (\d+)$", re.M)

    def _await_ready(self, timeout: float) -> int:
        # Raw reads of the pipe: a peer may write more than one line at once, and select()
        # on a buffered text pipe would not wake for a line already in Python's buffer.
        end = time.monotonic() + timeout
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while time.monotonic() < end:
            ready, _, _ = select.select([fd], [], [], max(0.0, end - time.monotonic()))
            chunk = os.read(fd, 4096) if ready else b""
            if not chunk:
                break
            self._early += chunk
            m = self.ready_pattern.search(self._early)
            if m:
                return int(m.group(1))
        self._kill()
        err = self.proc.stderr.read() if self.proc.stderr else ""
        raise HarnessError(f"{' '.join(self.argv)}: no ready line within {timeout}s; stderr: {err.strip()[-500:]}")

    def _kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()

    def stop(self, timeout: float = 10.0) -> dict:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                out, self.stderr = self.proc.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                self._kill()
                out, self.stderr = "", "(killed: did not stop on SIGTERM)"
        else:
            out, self.stderr = self.proc.communicate()
        out = self._early.decode(errors="replace") + (out or "")
        for line in reversed(out.splitlines()):
            if line.startswith("REPORT "):
                self.report = json.loads(line[len("REPORT "):])
                break
        try:  # workers or helpers a peer started must not outlive it
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        return self.report

    def __enter__(self) -> "Server":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


@dataclass
class Run:
    """One tlsnb process: its exit, its JSON attempts and summary, and its stderr."""
    argv: list[str]
    rc: int
    signal: int            # the signal that killed it, 0 when it exited
    attempts: list[dict] = field(default_factory=list)
    summary: dict = field(default_factory=dict)
    stderr: str = ""
    wall_s: float = 0.0

    def outcomes(self) -> dict[str, int]:
        """Counts of 'stage/detail' over the attempts, e.g. {'handshake/10': 64}."""
        counts: dict[str, int] = {}
        for a in self.attempts:
            key = f"{a['stage']}/{a['detail']}"
            counts[key] = counts.get(key, 0) + 1
        return counts

    def command(self) -> str:
        return " ".join(self.argv)


def run_tlsnb(tlsnb: str, args: list, env: Optional[dict] = None, timeout: float = 120.0,
              preload: Optional[str] = None, wrapper: Optional[list[str]] = None) -> Run:
    """Run `tlsnb --json ARGS`; never raises on the client's failure, only on a hang."""
    argv = [*(wrapper or []), tlsnb, "--json", *map(str, args)]
    full_env = dict(os.environ if env is None else env)
    if preload:
        full_env["LD_PRELOAD"] = preload
    start = time.monotonic()
    proc = subprocess.run(argv, capture_output=True, text=True, env=full_env, timeout=timeout)
    run = Run(argv=argv, rc=proc.returncode if proc.returncode >= 0 else 0,
              signal=-proc.returncode if proc.returncode < 0 else 0,
              stderr=proc.stderr, wall_s=time.monotonic() - start)
    for line in proc.stdout.splitlines():
        if not line.startswith("{"):
            continue
        obj = json.loads(line)
        if obj.get("type") == "summary":
            run.summary = obj
        else:
            run.attempts.append(obj)
    return run


class Gate:
    """PASS/FAIL lines, then `N passed, N failed[, N skipped]`; exit code 1 on any failure."""

    def __init__(self, name: str):
        self.name = name
        self.passed = self.failed = self.skipped = 0

    def check(self, case: str, ok: bool, detail: str = "") -> bool:
        if ok:
            self.passed += 1
            print(f"PASS {case}" + (f"  ({detail})" if detail else ""), flush=True)
        else:
            self.failed += 1
            print(f"FAIL {case}: {detail}", flush=True)
        return ok

    def expect(self, case: str, expected, got, note: str = "") -> bool:
        """Compare whole values, print both on a mismatch."""
        extra = f"  {note}" if note else ""
        return self.check(case, expected == got, f"expected {expected!r}, got {got!r}{extra}"
                          if expected != got else f"{got!r}{extra}")

    def skip(self, case: str, why: str) -> None:
        self.skipped += 1
        print(f"SKIP {case}: {why}", flush=True)

    def finish(self) -> int:
        if self.passed + self.failed + self.skipped == 0:  # a gate that ran nothing proves nothing
            print(f"{self.name}: no case ran (an --only or a name that matches nothing?)", file=sys.stderr)
            return 2
        tail = f", {self.skipped} skipped" if self.skipped else ""
        print(f"{self.name}: {self.passed} passed, {self.failed} failed{tail}", flush=True)
        return 1 if self.failed else 0


def gate_args(description: str, extra=None) -> argparse.Namespace:
    """Common flags: --tlsnb, --certs, --work, --only NAME...; env TLSLAB_CERTS/TLSLAB_WORK as defaults."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--tlsnb", required=True, help="path to the tlsnb binary")
    p.add_argument("--certs", default=os.environ.get("TLSLAB_CERTS"), help="generated certificate folder")
    p.add_argument("--work", default=os.environ.get("TLSLAB_WORK", "/tmp/tlslab-work"), help="scratch folder")
    p.add_argument("--only", nargs="*", default=[], help="run only the named cases")
    if extra:
        extra(p)
    ns = p.parse_args()
    if not ns.certs or not Path(ns.certs, "manifest.json").is_file():
        print(f"{p.prog}: no certificate folder with manifest.json at {ns.certs!r} (build the 'certs' target)",
              file=sys.stderr)
        sys.exit(2)
    if not os.access(ns.tlsnb, os.X_OK):
        print(f"{p.prog}: tlsnb not executable at {ns.tlsnb!r}", file=sys.stderr)
        sys.exit(2)
    Path(ns.work).mkdir(parents=True, exist_ok=True)
    return ns
