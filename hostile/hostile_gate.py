#!/usr/bin/python3
"""The client under hostile records (label hostile): hostile.toml, every scenario of hostile/peer.py
with the (stage, detail) the client must show on both transports, each failure row beside its control.

The interop check runs first: the peer without deviation must complete a handshake and an HTTP
response with `openssl s_client` and with tlsnb on both transports; if it does not, no row runs
(a row that fails against a broken peer proves nothing about the client).

    /usr/bin/python3 -m hostile.hostile_gate --tlsnb build/client/tlsnb --certs build/certs/out \\
        --io-shim build/shims/libtlslab_io.so [--only CASE] [--list]
    /usr/bin/python3 -m hostile.hostile_gate --list-scenarios    # name, TLS version, clause, requirement
"""
import hashlib
import subprocess
import sys
from pathlib import Path

from harness.cases import PLACEHOLDER, gate_main, load_cases, peer_specs
from harness.expect import parse
from harness.peers import hostile_peer
from harness.rows import bad_input
from harness.runs import die_with_parent, run_tlsnb
from hostile.scenarios import SCENARIOS

REQUEST = "GET / HTTP/1.1\r\nHost: hooks.test\r\nConnection: close\r\n\r\n"
INTEROP_TIMEOUT_S = 20.0


def s_client_ok(certs: str, port: int) -> str:
    """'' when openssl s_client verified the peer and read its 200, else what went wrong."""
    argv = ["openssl", "s_client", "-connect", f"127.0.0.1:{port}", "-CAfile", f"{certs}/ca.pem",
            "-servername", "hooks.test", "-verify_hostname", "hooks.test", "-verify_return_error",
            "-tls1_3", "-ign_eof", "-quiet"]
    try:
        done = subprocess.run(argv, input=REQUEST, capture_output=True, text=True, timeout=INTEROP_TIMEOUT_S,
                              preexec_fn=die_with_parent)
    except subprocess.TimeoutExpired:
        return f"openssl s_client still running after {INTEROP_TIMEOUT_S:.0f} s"
    if done.returncode != 0 or "HTTP/1.1 200 OK" not in done.stdout:
        return f"openssl s_client exit {done.returncode}: {(done.stderr or done.stdout).strip()[-200:]!r}"
    return ""


def known_scenarios(rows: Path) -> None:
    """Every hostile peer of ROWS names a scenario of scenarios.py, and the row holds a count of every
    field the scenario sets (`server.fired[FIELD]=N`: it happened, or why it could not, N=0 with the
    row's why): exit 2 (file:line) otherwise."""
    for row in load_cases(rows):
        for kind, *words in peer_specs(row.peers):
            if kind != "hostile":
                continue
            if len(words) < 2 or words[1] not in SCENARIOS:
                bad_input(Path(sys.argv[0]).name, f"{row.where}: {row.case}: hostile needs CERT SCENARIO, "
                                                  f"SCENARIO one of scenarios.py's (--list-scenarios)")
            held = {c.sub for c in parse(PLACEHOLDER.sub("0", row.expect)).compares
                    if c.source == "server" and c.key == "fired"}
            if missing := [f for f in SCENARIOS[words[1]].bugs.set() if f not in held]:
                bad_input(Path(sys.argv[0]).name, f"{row.where}: {row.case}: the row holds no count of "
                                                  f"{', '.join(f'server.fired[{f}]' for f in missing)} (scenario "
                                                  f"{words[1]} sets it: a row must show that its bug happened)")


def row_scenarios(rows) -> dict:
    """Each row of ROWS (harness.cases rows) whose peer is the hostile peer -> (the row, its Scenario)."""
    out = {}
    for row in rows:
        for kind, *words in peer_specs(row.peers):
            if kind == "hostile" and len(words) >= 2 and words[1] in SCENARIOS:
                out[row.case] = (row, SCENARIOS[words[1]])
                break
    return out


def clause_group(clause: str) -> str:
    """A clause's group: its RFC and top-level section (rfc8446-4.1.3 -> rfc8446-4; rfc5746 -> rfc5746)."""
    rfc, _, section = clause.partition("-")
    return f"{rfc}-{section.split('.')[0]}" if section else rfc


def clause_draw(rows, seed: int, client: str) -> list[str]:
    """A sampled crossing's draw beside its fixed rows: one row of every clause group, picked by the
    tree's seed and the client's name (two clients draw differently in one tree; one tree draws the same),
    so over trees every client meets every clause of every group. Printed, one line."""
    groups: dict[str, list[str]] = {}
    for case, (_, scenario) in row_scenarios(rows).items():
        groups.setdefault(clause_group(scenario.clause), []).append(case)
    salt = int.from_bytes(hashlib.sha256(client.encode()).digest()[:4], "big")
    picked = {g: cases[(seed + salt) % len(cases)] for g, cases in sorted(groups.items())}
    print("clause groups drawn: " + ", ".join(f"{g}: {c}" for g, c in picked.items()), flush=True)
    return list(picked.values())


def list_scenarios() -> int:
    """One tab-separated line a scenario: its name, TLS version, clause and requirement."""
    for s in SCENARIOS.values():
        print(f"{s.name}\t{s.version}\t{s.clause}\t{s.requires}")
    return 0


def interop(ns) -> None:
    """The peer's normal scenario against openssl s_client and tlsnb (bio, fd): exit 1 unless all hold."""
    known_scenarios(ns.rows)
    problems = []
    for cert, args in (("leaf-ecdsa", ()), ("leaf-rsa", ("--suite", "chacha20", "--group", "p256"))):
        with hostile_peer(ns.certs, cert, "normal", *args) as peer:
            if why := s_client_ok(ns.certs, peer.port):
                problems.append(f"{cert} {' '.join(args)}: {why}")
            for transport in ("bio", "fd"):
                run = run_tlsnb(ns.tlsnb, ["--transport", transport, "--cafile", f"{ns.certs}/ca.pem",
                                           "--name", "hooks.test", f"127.0.0.1:{peer.port}"], timeout=INTEROP_TIMEOUT_S)
                if run.outcomes() != {"ok/0": 1}:
                    problems.append(f"{cert} {' '.join(args)}: tlsnb --transport {transport}: {run.outcomes()} "
                                    f"{run.problem} {run.stderr.strip()[-200:]!r}")
    for p in problems:
        print(f"FAIL interop  {p}", flush=True)
    if problems:
        print("hostile: the interop check failed: the peer is broken, no row counts", flush=True)
        sys.exit(1)
    print("PASS interop  openssl s_client and tlsnb (bio, fd): ECDSA/X25519/AES-128-GCM and "
          "RSA-PSS/P-256/ChaCha20-Poly1305, each a verified handshake and a 200", flush=True)


if __name__ == "__main__":
    if sys.argv[1:] == ["--list-scenarios"]:
        sys.exit(list_scenarios())
    sys.exit(gate_main("hostile", __doc__, Path(__file__).resolve().parent / "hostile.toml", before=interop,
                      draw=clause_draw))
