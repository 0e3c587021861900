#!/usr/bin/python3
"""Fault gate: partial, refused and failing I/O, silent and closing peers, SIGPIPE (label faults).

Each row of faults.tsv runs the lab's TLS server with a behaviour, tlsnb with arguments, the I/O
shim with settings, and compares what came out with the row's expectation, once per transport.

    /usr/bin/python3 shims/tests/faults_gate.py --tlsnb build/client/tlsnb \\
        --io-shim build/shims/libtlslab_io.so [--seed S] [--only PartialIo/bio ...]
"""
from __future__ import annotations

import re
import signal
import sys
from dataclasses import dataclass
from pathlib import Path

from harness import Gate, Run, gate_args, run_tlsnb
from shimlib import IO_TAG, choose_seed, client_args, io_env, load_rows, read_report, tls_server, verdict

HERE = Path(__file__).resolve().parent


@dataclass
class Row:
    case: str
    transports: str
    cert: str
    server: str
    client: str
    shim: str
    expect: str
    why: str


def shim_settings(spec: str, seed: int) -> dict:
    if spec.strip() == "-":
        return {}
    return dict(item.split("=", 1) for item in spec.replace("{seed}", str(seed)).split())


def words(spec: str, seed: int) -> list[str]:
    return [] if spec.strip() == "-" else spec.replace("{seed}", str(seed)).split()


OUTCOME = re.compile(r"^([a-z]+/-?\d+)\*(\d+)$")
COMPARE = re.compile(r"^(server|shim|summary)\.(\w+)(=|>|<)(-?[\d.]+|true|false)$")


def judge(expect: str, run: Run, server: dict, shim: dict | None) -> list[str]:
    """What in RUN differs from EXPECT; empty when the row holds."""
    problems: list[str] = []
    outcomes: dict[str, int] = {}
    for term in expect.split():
        if m := OUTCOME.match(term):
            outcomes[m[1]] = int(m[2])
        elif term.startswith("signal="):
            want = signal.Signals[term.split("=", 1)[1]]
            if run.signal != want:
                problems.append(f"expected death by {want.name}, got exit {run.rc} signal {run.signal}")
        elif term.startswith("wall<"):
            if run.wall_s >= float(term[5:]):
                problems.append(f"wall {run.wall_s:.2f} s, expected < {term[5:]} s")
        elif m := COMPARE.match(term):
            where = {"server": server, "shim": shim or {}, "summary": run.summary}[m[1]]
            got, want = where.get(m[2]), m[4]
            ok = got is not None and {
                "=": lambda: str(got).lower() == want,
                ">": lambda: float(got) > float(want),
                "<": lambda: float(got) < float(want),
            }[m[3]]()
            if not ok:
                problems.append(f"{m[1]}.{m[2]} = {got}, expected {m[3]}{want}")
        else:
            raise ValueError(f"faults.tsv: unknown expectation term {term!r}")
    if outcomes and run.outcomes() != outcomes:
        problems.append(f"outcomes {run.outcomes()}, expected {outcomes}")
    if outcomes and run.signal:
        problems.append(f"killed by signal {run.signal}")
    return problems


def figures(run: Run, shim: dict | None) -> str:
    s = run.summary
    text = f"wall {run.wall_s:.2f} s"
    if s:
        text += f", client cpu {s.get('cpu_ms', 0):.0f} ms"
    if shim:
        text += f", shim {shim['calls']} calls, {shim['eagain']} EAGAIN, {shim['bytes_cut']} bytes cut"
    return text


def run_case(ns, row: Row, transport: str, seed: int) -> tuple[list[str], str]:
    settings = shim_settings(row.shim, seed)
    report = Path(ns.work) / f"io-shim-{row.case}-{transport}.json"
    env = io_env("tlsnb", report, **settings) if settings else None
    behaviour, *server_args = words(row.server, seed)
    with tls_server(ns.certs, row.cert, behaviour, *server_args) as server:
        args = client_args(ns.certs, server.port, "--transport", transport, *words(row.client, seed))
        run = run_tlsnb(ns.tlsnb, args, env=env, preload=ns.io_shim if settings else None, timeout=120)
    shim = read_report(report, IO_TAG) if settings else None
    problems = judge(row.expect, run, server.report, shim)
    if settings and not run.signal and not (shim and shim["active"]):
        problems.append("shim inactive: " + ("no report written" if shim is None else "it saw no socket call"))
    if problems:
        problems.append(f"stderr: {run.stderr.strip()[-300:]!r}")
    return problems, figures(run, shim)


def main() -> int:
    def extra(p):
        p.add_argument("--io-shim", required=True, help="libtlslab_io.so")
        p.add_argument("--rows", default=str(HERE / "faults.tsv"), help="the rows (default: faults.tsv)")
        p.add_argument("--seed", type=int, help="seed of bodies and random cuts (default: a new one, printed)")
    ns = gate_args(__doc__.splitlines()[0], extra)
    seed = choose_seed(ns.seed)
    gate = Gate("faults")
    for row in load_rows(Path(ns.rows), Row):
        for transport in row.transports.split():
            name = f"{row.case}/{transport}"
            if ns.only and name not in ns.only and row.case not in ns.only:
                continue
            problems, figs = run_case(ns, row, transport, seed)
            verdict(gate, name, not problems, "; ".join(problems) + f"  ({row.why})")
            if problems:
                print(f"  reproduce: {sys.executable} {Path(__file__).resolve()} --tlsnb {ns.tlsnb} "
                      f"--io-shim {ns.io_shim} --certs {ns.certs} --seed {seed} --only {name}", flush=True)
            else:
                print(f"  {figs}", flush=True)
    return gate.finish()


if __name__ == "__main__":
    sys.exit(main())
