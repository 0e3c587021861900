#!/usr/bin/python3
"""The reference client end to end (label `client`), every case crossed over both transports.

Concurrency on one thread, 2,000 connections through 64 slots, the certificate failures
with their controls, a silent peer, the three SIGPIPE rows, truncation and chunked
responses, resumption, and bad input (exit 2, no connection). Run alone:

    /usr/bin/python3 client/tests/test_client.py --tlsnb build/client/tlsnb --certs build/certs/out
"""
from __future__ import annotations

import signal
from pathlib import Path

from harness import Gate, Server, run_tlsnb, gate_args

TRANSPORTS = ("bio", "fd")


def serve(certs: Path, cert: str, *extra: str) -> Server:
    return Server.script("tls_server.py", "--chain", certs / f"{cert}.pem", "--key", certs / f"{cert}.key", *extra)


def main() -> int:
    args = gate_args(__doc__)
    certs = Path(args.certs)
    ca = ["--cafile", certs / "ca.pem", "--name", "hooks.test"]
    gate = Gate("client")
    wanted = set(args.only)

    def case(name: str) -> bool:
        return not wanted or name in wanted

    def tlsnb(port: int, *flags, **kw):
        return run_tlsnb(args.tlsnb, [*flags, f"127.0.0.1:{port}"], **kw)

    def expect_outcome(name: str, run, key: str, count: int) -> None:
        gate.expect(name, {key: count}, run.outcomes(), f"[{run.command()}]")

    with serve(certs, "leaf-ecdsa", "--workers", "2") as ok_server:
        for t in TRANSPORTS:
            # 64 at once, held open together: all ok, one thread, 64 sockets at the peak.
            if case(f"concurrent64/{t}"):
                r = tlsnb(ok_server.port, *ca, "--transport", t, "--count", 64, "--parallel", 64, "--hold-ms", 300)
                s = r.summary
                gate.check(f"concurrent64/{t}", r.rc == 0 and s.get("ok") == 64 and s.get("threads") == 1
                           and s.get("peak_fds", 0) >= 65,
                           f"ok={s.get('ok')} threads={s.get('threads')} peak_fds={s.get('peak_fds')} "
                           f"wall_ms={s.get('wall_ms', 0):.0f}")
            # 2,000 through 64 slots; the figures are the issue's.
            if case(f"through64/{t}"):
                r = tlsnb(ok_server.port, *ca, "--transport", t, "--count", 2000, "--parallel", 64, "--deadline-ms", 20000)
                s = r.summary
                gate.check(f"through64/{t}", r.rc == 0 and s.get("ok") == 2000,
                           f"ok={s.get('ok')} wall_ms={s.get('wall_ms', 0):.0f} "
                           f"cpu_ms_per_conn={s.get('cpu_ms_per_conn', 0):.3f} rss_kib={s.get('rss_kib')}")
            # Resumption: every attempt after the first wave resumes (TLS 1.3 tickets are single-use).
            if case(f"resume/{t}"):
                r = tlsnb(ok_server.port, *ca, "--transport", t, "--count", 2000, "--parallel", 64, "--resume",
                          "--deadline-ms", 20000)
                s = r.summary
                gate.check(f"resume/{t}", r.rc == 0 and s.get("resumed", 0) >= 2000 - 64 - 64,
                           f"resumed={s.get('resumed')} of 2000 cpu_ms_per_conn={s.get('cpu_ms_per_conn', 0):.3f}")
            if case(f"tls12/{t}"):
                r = tlsnb(ok_server.port, *ca, "--transport", t, "--tls-max", "1.2", "--count", 4)
                versions = {a["tls_version"] for a in r.attempts}
                gate.expect(f"tls12/{t}", (0, {"TLSv1.2"}), (r.rc, versions))
            if case(f"keepalive/{t}"):
                r = tlsnb(ok_server.port, *ca, "--transport", t, "--count", 8, "--requests", 5, "--body", 3000)
                gate.expect(f"keepalive/{t}", {5}, {a["requests_done"] for a in r.attempts}, f"rc={r.rc}")
            # A control for the wrong-name row below: the same certificate, the name it carries.
            if case(f"name-control/{t}"):
                r = tlsnb(ok_server.port, "--cafile", certs / "ca.pem", "--name", "hooks.test", "--transport", t,
                          "--requests", 0)
                expect_outcome(f"name-control/{t}", r, "ok/0", 1)

    failure_rows = [
        # (case, certificate served, client flags, expected outcome, control flags)
        ("expired", "expired", ca, "handshake/10", ["--no-verify"]),
        ("wrong-host", "wronghost", ca, "handshake/62", ["--cafile", certs / "ca.pem", "--name", "other.test"]),
        ("unknown-ca", "leaf-ca2", ca, "handshake/20", ["--cafile", certs / "ca2.pem", "--name", "hooks.test"]),
        ("self-signed", "selfsigned", ca, "handshake/18", ["--no-verify"]),
    ]
    for name, cert, flags, key, control in failure_rows:
        if not (case(name) or any(case(f"{name}/{t}") for t in TRANSPORTS)):
            continue
        with serve(certs, cert) as server:
            for t in TRANSPORTS:
                r = tlsnb(server.port, *flags, "--transport", t, "--count", 3)
                expect_outcome(f"{name}/{t}", r, key, 3)
                c = tlsnb(server.port, *control, "--transport", t, "--count", 3)
                expect_outcome(f"{name}/{t}/control", c, "ok/0", 3)

    # A peer that accepts and never answers: every attempt ends at its deadline, during the handshake.
    if case("silent"):
        with serve(certs, "leaf-ecdsa", "--behaviour", "silent") as server:
            for t in TRANSPORTS:
                r = tlsnb(server.port, *ca, "--transport", t, "--count", 64, "--deadline-ms", 1000)
                s = r.summary
                gate.check(f"silent/{t}", r.outcomes() == {"deadline/2": 64} and r.wall_s < 5,
                           f"{r.outcomes()} wall_ms={s.get('wall_ms', 0):.0f} cpu_ms={s.get('cpu_ms', 0):.1f}")

    # The seed's three SIGPIPE rows: FIN then RST before any TLS byte.
    if case("sigpipe"):
        with serve(certs, "leaf-ecdsa", "--behaviour", "fin-then-reset") as server:
            r = tlsnb(server.port, *ca, "--transport", "bio", "--count", 4)
            expect_outcome("sigpipe/bio", r, "handshake/-1", 4)
            # The peer's FIN and RST leave microseconds apart; a client that reads the FIN before the
            # RST lands writes its alert without error. So each run offers 16 connections and up to
            # three runs are made: the assertion is that the process dies by SIGPIPE at all.
            for runs in range(1, 4):
                r = tlsnb(server.port, *ca, "--transport", "fd", "--sigpipe", "default", "--count", 16,
                          "--parallel", 16)
                if r.signal:
                    break
            gate.expect("sigpipe/fd-default-killed", signal.SIGPIPE, r.signal, f"rc={r.rc} after {runs} run(s)")
            r = tlsnb(server.port, *ca, "--transport", "fd", "--sigpipe", "ignore", "--count", 4)
            expect_outcome("sigpipe/fd-ignore-reported", r, "handshake/-1", 4)
        # Its control: a clean FIN (no RST) lets OpenSSL's alert write succeed: reported, not killed.
        with serve(certs, "leaf-ecdsa", "--behaviour", "close-before-handshake") as server:
            for t in TRANSPORTS:
                r = tlsnb(server.port, *ca, "--transport", t, "--sigpipe", "default", "--count", 4)
                gate.check(f"sigpipe/control-fin-only/{t}", r.signal == 0 and r.outcomes() == {"handshake/-1": 4},
                           f"signal={r.signal} {r.outcomes()}")

    response_rows = [
        ("truncated", "close-without-notify", "read/-1"),
        ("reset-mid-response", "reset-mid-response", "read/104"),
        ("chunked", "chunked", "read/-2"),
    ]
    for name, behaviour, key in response_rows:
        if not case(name):
            continue
        with serve(certs, "leaf-ecdsa", "--behaviour", behaviour) as server:
            for t in TRANSPORTS:
                r = tlsnb(server.port, *ca, "--transport", t, "--sigpipe", "ignore", "--count", 3)
                expect_outcome(f"{name}/{t}", r, key, 3)

    # Bad input: one line on stderr, exit 2, and no connection attempted.
    if case("bad-input"):
        empty = Path(args.work, "empty.pem")
        empty.write_text("")
        garbage = Path(args.work, "garbage.pem")
        garbage.write_text("not a certificate\n")
        with serve(certs, "leaf-ecdsa") as server:
            port = server.port
            bad = {
                "unknown-flag": ["--bogus", f"127.0.0.1:{port}"],
                "missing-value": [f"127.0.0.1:{port}", "--count"],
                "missing-cafile": ["--cafile", "/nonexistent/ca.pem", f"127.0.0.1:{port}"],
                "empty-cafile": ["--cafile", empty, f"127.0.0.1:{port}"],
                "garbage-cafile": ["--cafile", garbage, f"127.0.0.1:{port}"],
                "port-out-of-range": ["127.0.0.1:65536"],
                "parallel-0": ["--parallel", "0", f"127.0.0.1:{port}"],
                "name-without-address": [f"hooks.test:{port}"],
            }
            for name, argv in bad.items():
                r = run_tlsnb(args.tlsnb, argv)
                lines = r.stderr.strip().splitlines()
                gate.check(f"bad-input/{name}", r.rc == 2 and len(lines) == 1 and not r.attempts,
                           f"rc={r.rc} stderr={r.stderr.strip()!r}")
        gate.expect("bad-input/no-connection-attempted", 0, server.report.get("connections"))

    return gate.finish()


if __name__ == "__main__":
    raise SystemExit(main())
