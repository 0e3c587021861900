#!/usr/bin/python3
"""The hostile peer's own test (label hostile): every field of bugs.py, in a scenario that sets it,
shows on the wire as the field says, and not under its control.

A row's `server.fired[FIELD]=N` says the peer's code for FIELD ran; this says what reached the
socket. For each scenario the peer serves one connection to a reader that is not the peer's code:
hostile/reader.py (a raw TLS 1.3 client that records every record and message as it came) for the
1.3 scenarios, `openssl s_client -tls1_2 -msg` for the 1.2 ones. Each field has one check of that
trace, run twice: on its scenario, where it must hold, and on the scenario's control (normal or
tls12-normal), where it must not (a check that holds on a correct server proves nothing). A field
no scenario sets, a field with no check, a scenario whose field fired no count: each is a failure.

    /usr/bin/python3 -m hostile.peer_selftest --certs build/certs/out [--only SCENARIO ...]
"""
from __future__ import annotations

import argparse
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # reader.py and peer.py import their neighbours by plain name

from bugs import BUGS, STAPLES, WARNINGS  # noqa: E402
from reader import read_peer  # noqa: E402
from scenarios import SCENARIOS  # noqa: E402
import wire13  # noqa: E402
from tls13 import (CCS, CERTIFICATE, CERTIFICATE_REQUEST, ENCRYPTED_EXTENSIONS, FINISHED,  # noqa: E402
                   HANDSHAKE, KEY_UPDATE, NEW_SESSION_TICKET)

from harness.peers import hostile_peer  # noqa: E402
from harness.runs import die_with_parent  # noqa: E402

MAX = 1 << 14


class Wire:
    """A trace as the checks read it: the reader's records and messages, or s_client's -msg lines."""

    def __init__(self, trace: dict | None = None, s_client: str = ""):
        self.trace, self.s_client = trace or {}, s_client

    def messages(self, kind: int) -> list[dict]:
        return [m for m in self.trace.get("messages", []) if m["type"] == kind]

    def records(self, phase: str = "", **match) -> list[dict]:
        return [r for r in self.trace.get("records", []) if (not phase or r["phase"] == phase)
                and all(r[k] == v for k, v in match.items())]

    def response_records(self) -> list[dict]:
        return [r for r in self.records() if r["decrypted"] and r["inner_type"] == 23]

    def extension_types(self, kind: int) -> list[int]:
        """The extension types of the first message of KIND (EncryptedExtensions' list)."""
        body = bytes.fromhex(self.messages(kind)[0]["body"]) if self.messages(kind) else b""
        out, at = [], 2
        while at + 4 <= len(body):
            out.append(int.from_bytes(body[at:at + 2], "big"))
            at += 4 + int.from_bytes(body[at + 2:at + 4], "big")
        return out


def _alerts(w: Wire) -> list[tuple[int, int]]:
    return [(a[0], a[1]) for a in w.trace.get("alerts", [])]


def _alert_before_response(w: Wire, v: str) -> bool:
    first_data = next((i for i, r in enumerate(w.trace.get("records", [])) if r["inner_type"] == 23), 1 << 30)
    return any(tuple(a[:2]) == (1, WARNINGS[v]) and a[2] < first_data for a in w.trace.get("alerts", []))


def _split_certificate_by_alert(w: Wire) -> bool:
    cert = w.messages(CERTIFICATE)
    if not cert or len(cert[0]["records"]) < 2:
        return False
    first, last = cert[0]["records"][0], cert[0]["records"][-1]
    return any(r["inner_type"] == 21 for r in w.trace["records"][first:last])


def _response_cut(w: Wire) -> bool:
    return 0 < w.trace.get("response", 0) and not w.trace.get("response_complete")


def _records_after_close(w: Wire) -> bool:
    return (1, 0) in _alerts(w) and bool(w.records("closed", inner_type=23))


# field -> (what it must show, the check: True when the wire shows it)
CHECKS: dict[str, tuple[str, Callable[[Wire, object], bool]]] = {
    "retry_group": ("a HelloRetryRequest", lambda w, v: w.trace.get("hello_retries", 0) >= 1),
    "retry_twice": ("two HelloRetryRequests", lambda w, v: w.trace.get("hello_retries") == 2),
    "server_share_group": ("the ServerHello's share in that group",
                           lambda w, v: w.trace.get("server_hello", {}).get("group") == v),
    "server_suite": ("the ServerHello's suite", lambda w, v: w.trace.get("server_hello", {}).get("suite") == v),
    "session_id_mismatch": ("a legacy_session_id_echo not the reader's",
                            lambda w, v: w.trace.get("server_hello", {}).get("session_id_echoed") is False),
    "handshake_fragment": ("every handshake record at most that many bytes",
                           lambda w, v: all(r["plain"] <= v for r in w.records("handshake", inner_type=HANDSHAKE))
                           and all(r["plain"] <= v for r in w.records("hello", outer_type=HANDSHAKE))),
    "pack_flight": ("EncryptedExtensions to Finished in one record",
                    lambda w, v: len({tuple(m["records"]) for k in (ENCRYPTED_EXTENSIONS, CERTIFICATE, FINISHED)
                                      for m in w.messages(k)}) == 1),
    "chain_padding_kib": ("a Certificate message of that many KiB",
                          lambda w, v: any(m["length"] >= v * 1024 for m in w.messages(CERTIFICATE))),
    "ccs_before_encrypted_extensions": ("a ChangeCipherSpec before the encrypted flight",
                                        lambda w, v: bool(w.records("handshake", outer_type=CCS))),
    "ee_duplicate_server_name": ("server_name twice in EncryptedExtensions",
                                 lambda w, v: w.extension_types(ENCRYPTED_EXTENSIONS).count(0) == 2),
    "ee_unsolicited_alpn": ("ALPN in EncryptedExtensions", lambda w, v: 16 in w.extension_types(ENCRYPTED_EXTENSIONS)),
    "cv_skip_certificate": ("a CertificateVerify the reader's transcript does not verify",
                            lambda w, v: w.trace.get("cv_ok") is False),
    "finished_flip_bit": ("a server Finished that does not verify", lambda w, v: w.trace.get("finished_ok") is False),
    "alert_inside_certificate": ("an alert record between two fragments of the Certificate",
                                 lambda w, v: _split_certificate_by_alert(w)),
    "staple": ("that malformed staple on the leaf's Certificate entry",
               lambda w, v: w.trace.get("staple") == STAPLES[v].hex()),
    "rst_after_finished": ("a reset before any data", lambda w, v: w.trace.get("end") == "reset"
                           and not w.trace.get("response")),
    "ccs_after_handshake": ("a ChangeCipherSpec after the handshake", lambda w, v: bool(w.records("after", outer_type=CCS))),
    "keyupdates_before_response": ("that many KeyUpdates", lambda w, v: len(w.messages(KEY_UPDATE)) == v),
    "keyupdate_value": ("a KeyUpdate of that request_update",
                        lambda w, v: any(m["body"] == f"{v:02x}" for m in w.messages(KEY_UPDATE))),
    "tickets_before_response": ("that many NewSessionTickets", lambda w, v: len(w.messages(NEW_SESSION_TICKET)) == v),
    "ticket_kib": ("a NewSessionTicket of that many KiB",
                   lambda w, v: any(m["length"] >= v * 1024 for m in w.messages(NEW_SESSION_TICKET))),
    "ticket_extension": ("a NewSessionTicket carrying that extension type",
                         lambda w, v: any(m["body"].endswith(f"0004{v:04x}0000") for m in w.messages(NEW_SESSION_TICKET))),
    "post_certificate_request": ("a CertificateRequest after the handshake", lambda w, v: bool(w.messages(CERTIFICATE_REQUEST))),
    "alert_before_response": ("that warning alert before any data", _alert_before_response),
    "empty_records_before_response": ("that many empty application records",
                                      lambda w, v: len(w.records("after", inner_type=23, plain=0)) == v),
    "outer_type_before_response": ("an unprotected record of that type", lambda w, v: bool(w.records(outer_type=v))),
    "inner_type_before_response": ("a protected record of that inner type", lambda w, v: bool(w.records(inner_type=v))),
    "padding_only_record": ("a protected record with no inner type",
                            lambda w, v: bool([r for r in w.records("after") if r["decrypted"] and r["inner_type"] is None])),
    "record_overflow": ("a record past the limit",
                        lambda w, v: any(r["plain"] > MAX for r in w.records("after", decrypted=True)) if v == "plaintext"
                        else any(r["length"] > MAX + 256 for r in w.records("after"))),
    "app_record_size": ("every response record at most that size",
                        lambda w, v: bool(w.response_records()) and all(r["plain"] <= v for r in w.response_records())),
    "app_padding": ("every response record padded by that many bytes",
                    lambda w, v: bool(w.response_records()) and all(r["padding"] == v for r in w.response_records())),
    "response_record_version": ("every response record of that legacy_record_version",
                                lambda w, v: bool(w.response_records()) and
                                all(r["outer_version"] == v for r in w.response_records())),
    "ticket_between_records": ("a NewSessionTicket after each response record",
                               lambda w, v: len(w.messages(NEW_SESSION_TICKET)) >= len(w.response_records()) > 0),
    "keyupdate_mid_response": ("a KeyUpdate with update_requested inside the response",
                               lambda w, v: any(m["body"] == "01" for m in w.messages(KEY_UPDATE))
                               and w.trace.get("response_complete")),
    "close_notify_mid_response": ("close_notify before the response ended",
                                  lambda w, v: _response_cut(w) and (1, 0) in _alerts(w)),
    "fatal_alert_mid_response": ("a fatal internal_error before the response ended",
                                 lambda w, v: _response_cut(w) and (2, 80) in _alerts(w)),
    "fin_mid_record": ("the end of the stream inside a record", lambda w, v: w.trace.get("end") == "partial-record"),
    "close_notify_then_data": ("an application record after close_notify", lambda w, v: _records_after_close(w)),
    "fatal_alert_after_response": ("a fatal internal_error after the whole response",
                                   lambda w, v: w.trace.get("response_complete") and
                                   (2, 80) in _alerts(w)),
    "rst_after_request": ("a reset instead of a response", lambda w, v: w.trace.get("end") == "reset"
                          and not w.trace.get("response")),
    # the TLS 1.3 catalogue's word fields: hostile/wire13.py parses the reader's trace
    "sh_form": ("the ServerHello altered as the word says", lambda w, v: wire13.sh_form(w.trace, v)),
    "sh_extension": ("that extension in the ServerHello", lambda w, v: wire13.sh_extension(w.trace, v)),
    "retry_form": ("a HelloRetryRequest altered as the word says", lambda w, v: wire13.retry_form(w.trace, v)),
    "server_share": ("the ServerHello's key share malformed as the word says", lambda w, v: wire13.server_share(w.trace, v)),
    "ee_extension": ("that extension (or answer) in EncryptedExtensions", lambda w, v: wire13.ee_extension(w.trace, v)),
    "certificate_form": ("the Certificate altered as the word says", lambda w, v: wire13.certificate_form(w.trace, v)),
    "cv_form": ("the CertificateVerify altered as the word says", lambda w, v: wire13.cv_form(w.trace, v)),
    "finished_form": ("the server Finished's verify_data as the word says", lambda w, v: wire13.finished_form(w.trace, v)),
    "flight_order": ("the handshake messages in that order", lambda w, v: wire13.flight_order(w.trace, v)),
    "inject_after_server_hello": ("that record after the ServerHello", lambda w, v: wire13.inject_after_server_hello(w.trace, v)),
    "inject_after_handshake": ("that record after the handshake", lambda w, v: wire13.inject_after_handshake(w.trace, v)),
    "response_record": ("the response's first record broken as the word says (what opens it)", lambda w, v: wire13.response_record(w.trace, v)),
    "ticket_form": ("a NewSessionTicket as the word says", lambda w, v: wire13.ticket_form(w.trace, v)),
    "certificate_request": ("a CertificateRequest in the handshake as the word says", lambda w, v: wire13.certificate_request(w.trace, v)),
    # TLS 1.2: openssl s_client -msg's lines
    "downgrade_sentinel": ("a ServerHello random ending DOWNGRD\\x01",
                           lambda w, v: "444f574e47524401" in "".join(w.s_client.lower().split())),
    "omit_renegotiation_info": ("no renegotiation_info", lambda w, v: "Secure Renegotiation IS NOT supported" in w.s_client),
    "renegotiate_mid_response": ("a HelloRequest", lambda w, v: "HelloRequest" in w.s_client),
    "renegotiation_info_mismatch": ("a renegotiation refused for its renegotiation_info",
                                    lambda w, v: "RENEGOTIATION_MISMATCH" in w.s_client.upper()
                                    or "renegotiation mismatch" in w.s_client),
    "renegotiate_mid_request": ("a HelloRequest while the request is in flight", lambda w, v: "HelloRequest" in w.s_client),
}


REQUEST = "GET / HTTP/1.1\r\nHost: hooks.test\r\nConnection: keep-alive\r\n\r\n"


def wire_of(certs: str, scenario: str) -> tuple[Wire, dict]:
    """One connection to the peer running SCENARIO, read by the reader that is not the peer's code;
    the wire and the peer's REPORT."""
    with hostile_peer(certs, "leaf-ecdsa", scenario) as peer:
        if SCENARIOS[scenario].version == "1.3":
            wire = Wire(asdict(read_peer(peer.port, status_request=bool(SCENARIOS[scenario].bugs.staple))))
        else:
            argv = ["openssl", "s_client", "-connect", f"127.0.0.1:{peer.port}", "-tls1_2", "-msg",
                    "-CAfile", f"{certs}/ca.pem", "-servername", "hooks.test", "-ign_eof"]
            try:
                done = subprocess.run(argv, input=REQUEST, capture_output=True, text=True, timeout=15,
                                      preexec_fn=die_with_parent)
                wire = Wire(s_client=done.stdout + done.stderr)
            except subprocess.TimeoutExpired as e:
                wire = Wire(s_client=(e.stdout or b"").decode(errors="replace") + " (timed out)")
    return wire, peer.report


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--certs", required=True, help="the lab's certificates (build/certs/out)")
    p.add_argument("--only", nargs="+", metavar="SCENARIO", default=[], help="these scenarios only")
    ns = p.parse_args()
    problems = []
    if unchecked := sorted(set(BUGS) - set(CHECKS)):
        problems.append(f"fields with no check here: {', '.join(unchecked)}")
    if unused := sorted(set(BUGS) - {f for s in SCENARIOS.values() for f in s.bugs.set()}):
        problems.append(f"fields no scenario sets: {', '.join(unused)}")
    if unknown := [s for s in ns.only if s not in SCENARIOS]:
        print(f"peer_selftest.py: --only {unknown[0]}: no such scenario (--list-scenarios)", file=sys.stderr)
        return 2
    for problem in problems:
        print(f"FAIL {problem}", flush=True)
    controls = {}
    checked = 0
    for name, sc in SCENARIOS.items():
        if not sc.bugs.set() or (ns.only and name not in ns.only):
            continue
        wire, report = wire_of(ns.certs, name)
        control = "normal" if sc.version == "1.3" else "tls12-normal"
        if control not in controls:
            controls[control] = wire_of(ns.certs, control)[0]
        for field in sc.bugs.set():
            value = getattr(sc.bugs, field)
            shows, check = CHECKS[field]
            fired = report.get("fired", {}).get(field, 0)
            verdict = []
            if not check(wire, value):
                verdict.append(f"the wire does not show {shows}")
            if check(controls[control], value):
                verdict.append(f"its control {control} shows {shows} too: the check proves nothing")
            if fired < 1:
                verdict.append(f"the peer counted fired[{field}]={fired}")
            checked += 1
            print(f"{'FAIL' if verdict else 'PASS'} {name}: {field}={value!r}: {shows}"
                  + (f": {'; '.join(verdict)}" if verdict else ""), flush=True)
            problems += [f"{name}: {field}: {v}" for v in verdict]
    print(f"peer self-test: {checked} fields checked against the wire, {len(problems)} failed", flush=True)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
