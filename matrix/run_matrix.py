#!/usr/bin/python3
"""The certificate matrix: every row of rows.toml against a real server, crossed.

Each row runs `tlsnb --json` once per cell: transport (bio, fd) x client --tls-max
(1.2, 1.3, or the row's `versions`) x server (the lab's tls_server.py, and
`openssl s_server` unless the row says interop = false). One line per cell, then
`matrix: N passed, N failed`; exit 1 on any mismatch (an unexpected success too),
2 on a malformed row (file:line on stderr) before any connection.

    /usr/bin/python3 matrix/run_matrix.py --tlsnb build/client/tlsnb              # every row
    /usr/bin/python3 matrix/run_matrix.py --tlsnb build/client/tlsnb wild-partial  # one row (or several)
    /usr/bin/python3 matrix/run_matrix.py --tlsnb build/client/tlsnb --update      # re-record from observation
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "servers"))  # harness.py (tlslab_gate also sets PYTHONPATH)

from harness import Gate, HarnessError, gate_args, run_tlsnb  # noqa: E402
from outcomes import OutcomeNames, UnknownOutcome  # noqa: E402
from peers import start_lab_server, start_openssl_server  # noqa: E402
from rows import TRANSPORTS, Row, RowError, RowFile  # noqa: E402
from update import record  # noqa: E402

SERVER_PROGRAMS = {"lab": "tls_server.py", "s_server": "openssl s_server"}
DEFAULT_HOST = "hooks.test"
DEFAULT_CAFILE = "ca.pem"


@dataclass
class Cell:
    row: Row
    server: str       # lab | s_server
    transport: str    # bio | fd
    version: str      # the client's --tls-max

    def label(self) -> str:
        return f"{self.row.name} {self.transport} {self.version} {self.server}"


@dataclass
class Observation:
    cell: Cell
    outcome: Optional[str] = None    # canonical name, None when the cell could not run
    code: tuple[int, int] = (-1, 0)  # (stage_code, detail) as tlsnb printed them
    depth: Optional[int] = None
    tls_version: Optional[str] = None
    text: str = ""
    problem: str = ""                # why the cell could not run (no server, usage error, no JSON)


def client_args(row: Row, certs: Path, port: int, transport: str, version: str) -> list[str]:
    args = [f"127.0.0.1:{port}", "--name", row.get("host", DEFAULT_HOST), "--transport", transport,
            "--tls-max", version, "--requests", "0"]
    cafile = row.get("cafile", DEFAULT_CAFILE)
    if cafile:
        args += ["--cafile", str(certs / cafile)]
    if row.get("no_verify"):
        args.append("--no-verify")
    if row.get("partial_chain"):
        args.append("--partial-chain")
    if row.get("verify_depth") is not None:
        args += ["--verify-depth", str(row.get("verify_depth"))]
    return args


def observe(cell: Cell, tlsnb: str, certs: Path, port: int, names: OutcomeNames) -> Observation:
    obs = Observation(cell)
    try:
        run = run_tlsnb(tlsnb, client_args(cell.row, certs, port, cell.transport, cell.version), timeout=30)
    except subprocess.TimeoutExpired:
        obs.problem = "tlsnb still running after 30 s (killed)"
        return obs
    if run.signal or len(run.attempts) != 1:
        obs.problem = f"rc={run.rc} signal={run.signal} attempts={len(run.attempts)} stderr={run.stderr.strip()[-200:]}"
        return obs
    a = run.attempts[0]
    obs.code = (int(a["stage_code"]), int(a["detail"]))
    obs.outcome = names.name(a["stage"], obs.code[1])
    obs.text = a.get("detail_text", "")
    obs.tls_version = a.get("tls_version") or None
    if obs.outcome.startswith("handshake/X509_V_ERR_"):
        obs.depth = a.get("verify_depth")
    if (run.rc == 0) != (obs.outcome == "ok"):
        obs.problem = f"exit {run.rc} disagrees with outcome {obs.outcome}"
    return obs


def run_unit(row: Row, server: str, args, names: OutcomeNames) -> list[Observation]:
    """One server for the row, then its cells in order."""
    cells = [Cell(row, server, t, v) for t in TRANSPORTS for v in row.versions]
    work = Path(args.work)
    try:
        peer = start_lab_server(row, args.certs, work) if server == "lab" else \
            start_openssl_server(row, args.certs, work)
    except HarnessError as e:
        return [Observation(c, problem=f"{SERVER_PROGRAMS[server]} did not start: {e}") for c in cells]
    try:
        return [observe(c, args.tlsnb, args.certs, peer.port, names) for c in cells]
    finally:
        peer.stop()


def expected_version(cell: Cell) -> str:
    server_max = cell.row.get("server_max", "1.3")
    return min(cell.version, server_max)


def judge(gate: Gate, obs: Observation, names: OutcomeNames, rerun: str) -> None:
    cell = obs.cell
    want = cell.row.expected(cell.transport, cell.version, cell.server)
    want_depth = cell.row.expected_depth(cell.transport, cell.version) if want and "X509_V_ERR_" in want else None
    if obs.problem:
        gate.check(cell.label(), False, f"{obs.problem}  (rerun: {rerun})")
        return
    same = names.parse(want) == obs.code if want else False
    got = obs.outcome + (f" depth {obs.depth}" if obs.depth is not None else "")
    expect = f"{want}" + (f" depth {want_depth}" if want_depth is not None else "")
    same = same and obs.depth == want_depth
    if obs.outcome == "ok":
        got += f" {obs.tls_version}"
        same = same and obs.tls_version == f"TLSv{expected_version(cell)}"
    if want == "ok":
        expect += f" TLSv{expected_version(cell)}"
    if same:
        gate.check(cell.label(), True, got)
    else:
        gate.check(cell.label(), False, f"expected {expect}, got {got} [{obs.text}]  (rerun: {rerun})")


def parse_args() -> argparse.Namespace:
    def extra(p: argparse.ArgumentParser) -> None:
        p.add_argument("rows", nargs="*", help="run only these rows (default: all)")
        p.add_argument("--file", type=Path, default=HERE / "rows.toml", help="the rows (default matrix/rows.toml)")
        p.add_argument("--update", action="store_true", help="rewrite the expectations from observation, print the diff")
        p.add_argument("--no-interop", action="store_true", help="skip the openssl s_server cells")
        p.add_argument("--jobs", type=int, default=2 * (os.cpu_count() or 1), help="rows in flight")
        p.add_argument("--openssl-include", type=Path, default=Path("/usr/include/openssl"),
                       help="the OpenSSL headers tlsnb was built with (outcome names)")
    args = gate_args(__doc__.split("\n")[0], extra)
    args.certs = Path(args.certs)
    if args.update and args.no_interop:
        print("run_matrix.py: --update records both servers; it cannot be combined with --no-interop", file=sys.stderr)
        sys.exit(2)
    return args


def main() -> int:
    args = parse_args()
    try:
        names = OutcomeNames(args.openssl_include)
        rows = RowFile(args.file, args.certs, names, require_expectations=not args.update)
        selected = rows.select(args.rows + args.only)
    except (RowError, UnknownOutcome, OSError) as e:
        print(f"run_matrix.py: {e}", file=sys.stderr)
        return 2
    units = [(row, server) for row in selected for server in row.servers
             if server == "lab" or not args.no_interop]
    gate, lock, observations = Gate("matrix"), threading.Lock(), []
    start = time.monotonic()

    def one(unit: tuple[Row, str]) -> None:
        row, server = unit
        found = run_unit(row, server, args, names)
        rerun = (f"{sys.executable} {HERE / 'run_matrix.py'} --tlsnb {args.tlsnb} --certs {args.certs} "
                 + (f"--file {args.file} " if args.file != HERE / "rows.toml" else "") + row.name)
        with lock:
            observations.extend(found)
            for obs in found:
                judge(gate, obs, names, rerun)

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        list(pool.map(one, units))
    print(f"matrix: {len(selected)} rows, {len(observations)} cells in {time.monotonic() - start:.1f}s", flush=True)
    if args.update:
        record(args.file, rows, observations)
    return gate.finish()


if __name__ == "__main__":
    sys.exit(main())
