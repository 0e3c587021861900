"""What the shim gates share: the shims' environment, their at-exit reports, a seed.

    from shimlib import ShimRun, io_env, heap_env, read_report
"""
from __future__ import annotations

import dataclasses
import json
import os
import random
import sys
from pathlib import Path
from typing import Optional

IO_TAG = "tlslab-io-shim "
HEAP_TAG = "tlslab-heap-shim "
REFUSED_EXIT = 125  # heap shim under valgrind or a sanitizer (shims/heap_shim.c)


@dataclasses.dataclass
class Probe:
    """What a shim self-test probe did: exit, output, and the shim's report."""
    rc: int
    out: str
    err: str
    report: Optional[dict]

    def value(self, step: str) -> list[str]:
        """The words after `STEP ->` in the probe's output."""
        for line in self.out.splitlines():
            if line.startswith(step + " ->"):
                return line.split("->", 1)[1].split()
        return []


def read_report(path: Path, tag: str) -> Optional[dict]:
    """The shim's JSON report from PATH (its last tagged line), None when it wrote none."""
    try:
        lines = path.read_text().splitlines()
    except FileNotFoundError:
        return None
    for line in reversed(lines):
        if line.startswith(tag):
            return json.loads(line[len(tag):])
    return None


def report_from_text(text: str, tag: str) -> Optional[dict]:
    for line in reversed(text.splitlines()):
        if line.startswith(tag):
            return json.loads(line[len(tag):])
    return None


def shim_env(program: str, settings: dict, report: Path) -> dict:
    """The process environment for a shimmed run of PROGRAM, report written to REPORT."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TLSLAB_IO_", "TLSLAB_HEAP_"))}
    env["TLSLAB_SHIM_PROGRAM"] = program
    env.update({k: str(v) for k, v in settings.items()})
    if report.exists():
        report.unlink()
    return env


def io_env(program: str, report: Path, **settings) -> dict:
    """TLSLAB_IO_<NAME>=value for each keyword (max_send=700 -> TLSLAB_IO_MAX_SEND=700)."""
    named = {f"TLSLAB_IO_{k.upper()}": v for k, v in settings.items()}
    named["TLSLAB_IO_REPORT"] = report
    return shim_env(program, named, report)


def heap_env(program: str, report: Path, **settings) -> dict:
    named = {f"TLSLAB_HEAP_{k.upper()}": v for k, v in settings.items()}
    named["TLSLAB_HEAP_REPORT"] = report
    return shim_env(program, named, report)


# malloc_usable_size is exact for a block, but a reused free chunk that is at most 31 bytes too big
# is not split: the same request can come back 8 to 24 bytes larger (stdout's buffer: 4104 or 4120).
USABLE_SLACK = 32


def unmatched(sizes: list[int], base: list[int], slack: int = USABLE_SLACK) -> list[int]:
    """The sizes in SIZES with no partner in BASE (a partner: within SLACK bytes, used once)."""
    left = sorted(base)
    extra = []
    for size in sorted(sizes):
        match = next((i for i, b in enumerate(left) if abs(b - size) < slack), None)
        if match is None:
            extra.append(size)
        else:
            left.pop(match)
    return extra


def choose_seed(given: Optional[int]) -> int:
    """The run's seed: the one given, or a fresh one; printed either way."""
    seed = given if given is not None else random.SystemRandom().randrange(1, 2**31)
    print(f"seed {seed}", flush=True)
    return seed


def verdict(gate, case: str, ok: bool, why: str) -> bool:
    """gate.check that prints WHY only when the case fails."""
    return gate.check(case, bool(ok), "" if ok else why)


def rerun_hint(argv0: str, *args: str) -> str:
    """One command that repeats this gate (or one case of it)."""
    return " ".join([sys.executable, argv0, *args])


def tls_server(certs: str, cert: str, behaviour: str, *args: str, **kw):
    """servers/tls_server.py serving CERT (leaf-ecdsa, expired, ...) from the certificate folder."""
    from harness import Server
    return Server.script("tls_server.py", "--chain", f"{certs}/{cert}.pem", "--key", f"{certs}/{cert}.key",
                         "--behaviour", behaviour, *args, **kw)


def client_args(certs: str, port: int, *args) -> list[str]:
    """tlsnb's arguments for the lab's server on PORT: trust ca.pem, expect hooks.test."""
    return ["--cafile", f"{certs}/ca.pem", "--name", "hooks.test", *map(str, args), f"127.0.0.1:{port}"]


def load_rows(path: Path, row_type):
    """The rows of a TSV record (header line, `#` comments) as `row_type` dataclasses.
    A missing or unknown column stops the gate before any run: one line naming file and line, exit 2."""
    names = [f.name for f in dataclasses.fields(row_type)]
    try:
        text = path.read_text()
    except OSError as exc:
        print(f"{path}: {exc.strerror}", file=sys.stderr)
        raise SystemExit(2)
    numbered = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line and not line.startswith("#")]
    if not numbered:
        print(f"{path}: no header line", file=sys.stderr)
        raise SystemExit(2)
    header_no, header = numbered[0]
    columns = header.split("\t")
    if columns != names:
        print(f"{path}:{header_no}: columns {columns} (expected {names})", file=sys.stderr)
        raise SystemExit(2)
    rows = []
    for n, line in numbered[1:]:
        cells = line.split("\t")
        if len(cells) != len(names):
            print(f"{path}:{n}: {len(cells)} cells, expected {len(names)} ({', '.join(names)})", file=sys.stderr)
            raise SystemExit(2)
        rows.append(row_type(**dict(zip(names, cells))))
    return rows
