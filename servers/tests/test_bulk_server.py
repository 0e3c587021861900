#!/usr/bin/python3
"""Self-test of servers/bulk_server.py: tls_server.py's `normal` cases, run against it unchanged.

The bulk server claims to be tls_server.py's `normal` behaviour at half its CPU, so its test is
tls_server's own cases for what `normal` does (servers/tests/test_tls_server.py: keep-alive
answers, request bodies, workers' sums, tickets across workers, versions, hosts, handshake-only
clients, the alert on a failed handshake, clients that misbehave), each with the bulk server
started where the case starts tls_server.py, and its refusals: every flag it does not do exits 2
with one line, never a server that quietly does something else.

    /usr/bin/python3 -m servers.tests.test_bulk_server [CASE ...]
"""
from __future__ import annotations

import ssl
import subprocess
import sys

from harness import PY, SERVERS, Server
from servers.tests import test_tls_server as tls
from servers.tests.test_tls_server import TIMEOUT_S, Lab, error_of, run_cases

NOT_HERE = {"--verify-body-seed": 1, "--drop-handshake-alerts": 0}   # flags tls_server's cases pass, with their values


class BulkLab(Lab):
    def server(self, *args) -> Server:
        """The bulk server where the case asks for tls_server.py. The flags of NOT_HERE are left out:
        the cases that pass them (misbehaving_clients_are_survived's --verify-body-seed 0) send only
        good bodies, so what they judge holds either way."""
        kept, skip = [], 0
        for a in args:
            if skip:
                skip -= 1
            elif a in NOT_HERE:
                skip = NOT_HERE[a]
            else:
                kept.append(a)
        srv = Server.script("bulk_server.py", "--chain", self.certs.chain, "--key", self.certs.key, *kept)
        self.started.append(srv)
        return srv


def alert_is_sent(lab: Lab) -> None:
    """handshake_alert_is_sent's first half (the second asks asyncio's own behaviour, not served here)."""
    old = lab.client_context()
    old.maximum_version = ssl.TLSVersion.TLSv1_2
    srv = lab.server("--min-version", "1.3")
    got = error_of(lambda: lab.tls(srv.port, ctx=old))
    report = lab.stop("alerts", srv)
    lab.gate.expect("alerts/protocol_version_sent",
                    ("SSLError:TLSV1_ALERT_PROTOCOL_VERSION", {"UNSUPPORTED_PROTOCOL": 1}),
                    (got, report.get("handshake_errors")))


def refuses_what_it_does_not_do(lab: Lab) -> None:
    for flags in (["--behaviour", "silent"], ["--refuse-resumption"], ["--record-sni"], ["--verify-body-seed", "3"],
                  ["--drop-handshake-alerts"], ["--delay-ms", "5"], ["--hold-s", "1"]):
        proc = subprocess.run([PY, str(SERVERS / "bulk_server.py"), "--chain", lab.certs.chain, "--key",
                               lab.certs.key, *flags], capture_output=True, text=True, timeout=TIMEOUT_S)
        lab.gate.expect(f"refuses/{flags[0].lstrip('-')}", (2, 1, "", True),
                        (proc.returncode, len(proc.stderr.splitlines()), proc.stdout,
                         proc.stderr.startswith(f"bulk_server: {flags[0]}")))
    proc = subprocess.run([PY, str(SERVERS / "bulk_server.py"), "--chain", "/nonexistent.pem", "--key",
                           lab.certs.key], capture_output=True, text=True, timeout=TIMEOUT_S)
    lab.gate.expect("usage/unreadable_chain", (2, 1, ""), (proc.returncode, len(proc.stderr.splitlines()), proc.stdout))


CASES = [tls.normal_keepalive_answers_every_request, tls.normal_counts_request_bodies, tls.workers_report_sums,
         tls.tickets_resume_across_workers, tls.max_version_12, tls.hosts_share_one_port,
         tls.handshake_only_clients_are_quiet, alert_is_sent, tls.misbehaving_clients_are_survived,
         refuses_what_it_does_not_do]


def main() -> int:
    return run_cases("bulk_server", BulkLab, CASES, sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
