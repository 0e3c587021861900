"""The LD_PRELOAD shims' side of a run: their environment, their at-exit reports.

    env = io_env("tlsnb", report_path, max_send=700, eagain_every=3)
    report = read_report(report_path, IO_TAG)
"""
from __future__ import annotations

import dataclasses
import json
import os
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


def report_from_text(text: str, tag: str) -> Optional[dict]:
    """The JSON after the last line that starts with TAG, None when there is none."""
    for line in reversed(text.splitlines()):
        if line.startswith(tag):
            return json.loads(line[len(tag):])
    return None


def read_report(path: Path, tag: str) -> Optional[dict]:
    """The shim's JSON report from PATH (its last tagged line), None when it wrote none."""
    try:
        return report_from_text(path.read_text(), tag)
    except FileNotFoundError:
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


def client_args(certs: str, port: int, *args) -> list[str]:
    """tlsnb's arguments for the lab's server on PORT: trust ca.pem, expect hooks.test."""
    return ["--cafile", f"{certs}/ca.pem", "--name", "hooks.test", *map(str, args), f"127.0.0.1:{port}"]
