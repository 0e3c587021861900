#!/usr/bin/python3
"""The certificate matrix: every row of rows.toml against a real server, crossed.

Each row runs the client once per cell: transport (bio, fd, for a client with --transport)
x client --tls-max (1.2, 1.3, or the row's `versions`) x server (the lab's tls_server.py,
and `openssl s_server` unless the row says interop = false). One line per cell, then
`matrix: N passed, N failed`; exit 1 on any mismatch (an unexpected success too), 2 on a
malformed row or profile (file:line on stderr) before any connection.

The reference, tlsnb, is held to the rows' own `bio`/`fd` expectations. A client under test
(--client NAME, a room of clients/, or a profile's path) is held to the reference's, except
where its clients/NAME/matrix.toml records a difference with its kind and reason (harness/record.py,
crossing.py).
Exit 89 from a client is a SKIP, and must be recorded (`got = "skip"`).

    /usr/bin/python3 -m matrix.run_matrix --tlsnb build/client/tlsnb              # every row
    /usr/bin/python3 -m matrix.run_matrix --tlsnb build/client/tlsnb wild-partial  # one row (or several)
    /usr/bin/python3 -m matrix.run_matrix --tlsnb build/client/tlsnb --update      # re-record from observation
    /usr/bin/python3 -m matrix.run_matrix --tlsnb build/client/tlsnb --client go --sample   # a client, sampled
"""
from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from matrix.crossing import SKIP, client_record, write_results
from harness import Gate, HarnessError, bad_input, crossings, gate_args, rerun_line, run_client
from harness.clients import UNSUPPORTED_EXIT, ClientError, Profile, gate_client
from harness.outcomes import OutcomeNames, UnknownOutcome
from harness.record import Record, recorded_kinds
from matrix.peers import start_lab_server, start_openssl_server
from matrix.rows import GROUPS, TRANSPORTS, Row, RowError, RowFile, cell_value
from matrix.update import collapse, record

HERE = Path(__file__).resolve().parent

SERVER_PROGRAMS = {"lab": "tls_server.py", "s_server": "openssl s_server"}
DEFAULT_HOST = "hooks.test"
DEFAULT_CAFILE = "ca.pem"
ROW_FLAGS = {"partial_chain": "--partial-chain", "verify_depth": "--verify-depth"}


@dataclass
class Cell:
    row: Row
    server: str                 # lab | s_server
    transport: Optional[str]    # bio | fd; None for a client without --transport
    version: str                # the client's --tls-max

    def label(self) -> str:
        return " ".join(x for x in (self.row.name, self.transport, self.version, self.server) if x)


@dataclass
class Observation:
    cell: Cell
    outcome: Optional[str] = None    # canonical name, None when the cell could not run
    code: tuple[int, int] = (-1, 0)  # (stage_code, detail) as the client printed them
    depth: Optional[int] = None
    tls_version: Optional[str] = None
    text: str = ""
    problem: str = ""                # why the cell could not run (no server, usage error, no JSON)
    unsupported: str = ""            # the client's own line when it exited 89


def revocation_args(row: Row, rows: RowFile) -> list[str]:
    """--crl, --crl-all, --ocsp-staple, --cert/--key, --pin-sha256: the client's choices of revocation,
    identity and pinning (options a client under test without them answers with exit 89)."""
    certs = rows.certs
    args = [a for crl in row.get("crl", []) for a in ("--crl", str(certs / crl))]
    if row.get("crl_all"):
        args.append("--crl-all")
    if row.get("ocsp_staple"):
        args += ["--ocsp-staple", row.get("ocsp_staple")]
    if row.get("client_cert"):
        args += ["--cert", str(certs / row.get("client_cert")), "--key", str(certs / row.get("client_key"))]
    if row.get("hold_ms"):
        args += ["--hold-ms", str(row.get("hold_ms"))]
    return args + [a for pin in row.get("pins", []) for a in ("--pin-sha256", rows.pin_of(pin))]


def client_args(row: Row, certs: Path, port: int, transport: Optional[str], version: str) -> list[str]:
    args = [f"127.0.0.1:{port}", "--name", row.get("host", DEFAULT_HOST), "--tls-max", version, "--requests", "0"]
    if transport:
        args += ["--transport", transport]
    cafile = row.get("cafile", DEFAULT_CAFILE)
    if cafile:
        args += ["--cafile", str(certs / cafile)]
    if row.get("no_verify"):
        args.append("--no-verify")
    if row.get("no_verify_name"):
        args.append("--no-verify-name")
    if row.get("partial_chain"):
        args.append("--partial-chain")
    if row.get("verify_depth") is not None:
        args += ["--verify-depth", str(row.get("verify_depth"))]
    return args


def observe(cell: Cell, client: Profile, rows: RowFile, port: int, names: OutcomeNames, timeout: float) -> Observation:
    obs = Observation(cell)
    run = run_client(client.command, client_args(cell.row, rows.certs, port, cell.transport, cell.version) +
                     revocation_args(cell.row, rows), timeout=timeout)
    if run.rc == UNSUPPORTED_EXIT and not run.attempts:
        obs.outcome, obs.unsupported = SKIP, run.stderr.strip().splitlines()[-1:][0] if run.stderr.strip() else "exit 89"
        return obs
    if run.problem:
        obs.problem = f"{client.name}: {run.problem}"
        return obs
    if run.signal or len(run.attempts) != 1:
        obs.problem = (f"{client.name}: rc={run.rc} signal={run.signal} attempts={len(run.attempts)} "
                       f"stderr={run.stderr.strip()[-200:]}")
        return obs
    a = run.attempts[0]
    try:
        obs.code = (int(a["stage_code"]), int(a["detail"]))
    except (KeyError, TypeError, ValueError):
        obs.problem = f"{client.name}: attempt line without integer stage_code/detail: {a}"
        return obs
    obs.outcome = names.name(a["stage"], obs.code[1])
    obs.text = a.get("detail_text", "")
    obs.tls_version = a.get("tls_version") or None
    if obs.outcome.startswith("handshake/X509_V_ERR_") and client.reference:
        obs.depth = a.get("verify_depth")
    if run.rc != (0 if obs.outcome == "ok" else 1):   # the contract's exit: 0 every attempt ok, 1 any not
        obs.problem = f"{client.name}: exit {run.rc} disagrees with outcome {obs.outcome}"
    return obs


class Matrix:
    """One run of the gate: the rows, the client, its record, the tally."""

    def __init__(self, args, names: OutcomeNames, rows: RowFile, client: Profile, record: Optional[Record]):
        self.args, self.names, self.rows, self.client, self.record = args, names, rows, client, record
        self.gate, self.lock, self.observations = Gate("matrix" if client.reference else f"matrix {client.name}"), \
            threading.Lock(), []
        self.transports = list(TRANSPORTS) if client.has("--transport") else [None]
        self.cells_out: list[dict] = []

    def run_unit(self, row: Row, server: str) -> list[Observation]:
        """One server for the row, then its cells in order."""
        cells = [Cell(row, server, t, v) for t in self.transports for v in row.versions]
        try:
            peer = start_lab_server(row, self.args.certs, Path(self.args.work)) if server == "lab" else \
                start_openssl_server(row, self.args.certs, Path(self.args.work))
        except HarnessError as e:
            return [Observation(c, problem=f"{SERVER_PROGRAMS[server]} did not start: {e}") for c in cells]
        try:
            return [observe(c, self.client, self.rows, peer.port, self.names, self.args.cell_timeout)
                    for c in cells]
        finally:
            peer.stop()

    def expected(self, cell: Cell):
        """(what the cell must show, its recorded difference or None)."""
        reference = cell.row.expected(cell.transport or "bio", cell.version, cell.server)
        if not self.record:
            return reference, None
        key = f"{cell.transport or 'bio'} {cell.version} {cell.server}"
        cells, diff = self.record.expected(cell.row.name, {key: reference})
        return cells[key], diff

    def judge(self, obs: Observation, rerun: str) -> None:
        cell = obs.cell
        want, diff = self.expected(cell)
        self.cells_out.append({"row": cell.row.name, "group": cell.row.get("group"), "server": cell.server,
                               "transport": cell.transport, "version": cell.version, "outcome": obs.outcome,
                               "expected": want, "reference": cell.row.expected(cell.transport or "bio",
                                                                               cell.version, cell.server),
                               "kind": diff.kind if diff else "", "why": diff.why if diff else "",
                               "text": obs.unsupported or obs.text, "problem": obs.problem})
        if obs.problem:
            self.gate.check(cell.label(), False, f"{obs.problem}  (rerun: {rerun})")
            return
        if diff is not None and not diff.explained:
            self.gate.check(cell.label(), False, f"{diff.where}: the difference ({obs.outcome}) is recorded without "
                                                 f"a reason: write kind and why")
            return
        if obs.outcome == SKIP or want == SKIP:
            if want == SKIP and obs.outcome == SKIP:
                self.gate.skip(cell.label(), f"{self.client.name} cannot: {obs.unsupported} ({diff.why if diff else ''})")
            else:
                self.gate.check(cell.label(), False, f"expected {want}, got {obs.outcome}"
                                                     f"{' (' + obs.unsupported + ')' if obs.unsupported else ''}  "
                                                     f"(rerun: {rerun})")
            return
        self.compare(obs, want, rerun)

    def compare(self, obs: Observation, want: Optional[str], rerun: str) -> None:
        cell = obs.cell
        want_depth = cell.row.expected_depth(cell.transport, cell.version) \
            if self.client.reference and want and "X509_V_ERR_" in want else None
        # A client's record may give alternatives, "A|B": a race its library does not settle (each observed)
        same = any(self.names.parse(w) == obs.code for w in want.split("|")) if want else False
        got = obs.outcome + (f" depth {obs.depth}" if obs.depth is not None else "")
        expect = f"{want}" + (f" depth {want_depth}" if want_depth is not None else "")
        same = same and obs.depth == want_depth
        if obs.outcome == "ok":
            got += f" {obs.tls_version}"
            same = same and obs.tls_version == f"TLSv{expected_version(cell)}"
        if want == "ok":
            expect += f" TLSv{expected_version(cell)}"
        if same:
            self.gate.check(cell.label(), True, got)
        else:
            self.gate.check(cell.label(), False, f"expected {expect}, got {got} [{obs.text}]  (rerun: {rerun})")

    def run(self, selected: list[Row]) -> int:
        units = [(row, server) for row in selected for server in row.servers
                 if server == "lab" or not self.args.no_interop]
        start = time.monotonic()
        client_flag = [] if self.client.reference else ["--client", self.args.client]

        def one(unit: tuple[Row, str]) -> None:
            row, server = unit
            if reason := self.client.disabled_reason("matrix", row.name):
                with self.lock:
                    self.gate.skip(f"{row.name} {server}", f"disabled in {self.client.path}: {reason}")
                return
            found = self.run_unit(row, server)
            rerun = rerun_line(HERE / "run_matrix.py", "--tlsnb", self.args.tlsnb, "--certs", self.args.certs,
                               *client_flag, *(["--file", self.args.file] if self.args.file != HERE / "rows.toml"
                                              else []), row.name)
            with self.lock:
                self.observations.extend(found)
                for obs in found:
                    self.judge(obs, rerun)

        with ThreadPoolExecutor(max_workers=max(1, self.args.jobs)) as pool:
            list(pool.map(one, units))
        print(f"{self.gate.name}: {len(selected)} rows, {len(self.observations)} cells in "
              f"{time.monotonic() - start:.1f}s", flush=True)
        write_results(Path(self.args.work) / "results" / f"{self.client.name}.json", self.client, self.cells_out)
        if self.args.update:
            self.update(selected)
        return self.gate.finish()

    def kept(self, obs: Observation) -> str:
        """What --update writes for a cell: the observed outcome, or the recorded alternatives
        ("A|B", a race) when the observation is one of them: a race is not undone by one run."""
        want, diff = self.expected(obs.cell)
        if diff is not None and want and "|" in want and obs.outcome in want.split("|"):
            return want
        return obs.outcome

    def update(self, selected: list[Row]) -> None:
        if self.client.reference:
            record(self.args.file, self.rows, self.observations)
            return
        if any(o.problem for o in self.observations):
            print("update: cells that could not run: nothing recorded")
            return
        observed = {}
        for row in selected:
            mine = [o for o in self.observations if o.cell.row is row]
            if not mine:
                continue
            same = all(o.outcome == SKIP and row.expected(o.cell.transport or "bio", o.cell.version,
                                                          o.cell.server) == SKIP or
                       (o.outcome != SKIP and self.names.parse(row.expected(o.cell.transport or "bio",
                                                                            o.cell.version, o.cell.server)) == o.code)
                       for o in mine)
            observed[row.name] = None if same else collapse(row, {(o.cell.version, o.cell.server): self.kept(o)
                                                                   for o in mine})
        self.record.write([r.name for r in self.rows.rows], observed)
        print(f"update: {self.record.path} rewritten ({sum(v is not None for v in observed.values())} rows differ "
              f"from the reference among {len(observed)} observed)")


def expected_version(cell: Cell) -> str:
    server_max = cell.row.get("server_max", "1.3")
    return min(cell.version, server_max)


def sample(rows: list[Row]) -> list[Row]:
    """The default gate's sample for a client: the first two rows of every group (in the file's
    order, which puts each group's ordinary case before its failures), so every group is crossed."""
    chosen = []
    for group in GROUPS:
        chosen += [r for r in rows if r.get("group") == group][:2]
    return chosen


def parse_args() -> argparse.Namespace:
    def extra(p: argparse.ArgumentParser) -> None:
        p.add_argument("rows", nargs="*", help="run only these rows (default: all)")
        p.add_argument("--file", type=Path, default=HERE / "rows.toml", help="the rows (default matrix/rows.toml)")
        p.add_argument("--update", action="store_true", help="rewrite the expectations from observation, print the diff")
        p.add_argument("--no-interop", action="store_true", help="skip the openssl s_server cells")
        p.add_argument("--jobs", type=int, default=2 * (os.cpu_count() or 1), help="rows in flight")
        p.add_argument("--openssl-include", type=Path, default=Path("/usr/include/openssl"),
                       help="the OpenSSL headers tlsnb was built with (outcome names)")
        p.add_argument("--client", help="a client under test: a room of clients/ or a profile.toml (default: tlsnb)")
        p.add_argument("--build-dir", type=Path, help="the build tree a profile's {build} means "
                                                      "(default: the one --tlsnb was built in)")
        p.add_argument("--cell-timeout", type=float, default=30, help="seconds a cell may take (then killed)")
        p.add_argument("--sample", action="store_true", help="only the first two rows of every group, "
                              "unless the crossing's inputs changed since its last green whole run (harness/crossings.py) "
                              "or TLSLAB_FULL=1")
    args = gate_args(__doc__.split("\n")[0], extra)
    if args.list:
        return args
    args.certs = Path(args.certs)
    if args.update and args.no_interop:
        bad_input("run_matrix.py", "--update records both servers; it cannot be combined with --no-interop")
    return args


def main() -> int:
    args = parse_args()
    try:
        names = OutcomeNames(args.openssl_include)
        rows = RowFile(args.file, Path(args.certs or "."), names,
                       require_expectations=not (args.update and not args.client))
        selected = rows.select(args.rows + args.only)
        room = crossings.room_of(args.client) if args.file.resolve() == (HERE / "rows.toml").resolve() else None
        whole = crossings.whole_reason("matrix", room) if args.sample and room else None
        sampled = bool(args.sample and not (args.rows or args.only) and not whole)
        if sampled:
            selected = sample(selected)
        if args.list:
            print("\n".join(row.name for row in selected))
            return 0
        if sampled:
            crossings.skip_unless_drawn("matrix", room)
        client = gate_client(args.client, args.tlsnb, args.build_dir)
        record_file = None if client.reference else client_record(
            client, {r.name: r for r in rows.rows}, names, TRANSPORTS if client.has("--transport") else ("bio",))
    except (RowError, UnknownOutcome, OSError, ClientError) as e:
        bad_input("run_matrix.py", e)
    if args.sample:
        print(f"matrix {room}: {'whole: ' + whole if whole else 'sampled (the first two rows of every group): its inputs are as at its last green whole run'}",
              flush=True)
        if sampled and record_file is not None:
            have = {r.name for r in selected}
            added = set(recorded_kinds(record_file, None, lambda case: case in have))
            selected = [r for r in rows.rows if r.name in have or r.name in added]
    matrix = Matrix(args, names, rows, client, record_file)
    rc = matrix.run(selected)
    if rc == 0 and room and not args.update and not (args.rows or args.only) and len(selected) == len(rows.rows):
        crossings.record_green("matrix", room, f"{len(selected)} rows, {len(matrix.observations)} cells green")
    return rc


if __name__ == "__main__":
    sys.exit(main())
