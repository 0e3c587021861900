"""The matrix's matching judged: every form by which run_matrix.py turns a cell into PASS, FAIL or SKIP.

The matrix gate's verdict is Matrix.judge (and compare, below it): the reference held to the row's
own bio/fd (by version, by server), its depth and its TLS version; a client under test held to the
reference except where its clients/NAME/matrix.toml records a difference (a got, alternatives `A|B`,
`skip`, a table by "1.2" or "1.2 lab"), which must carry a kind and a why. observe() turns a client's
run into the cell's observation (exit 89 a skip, a run that breaks the contract a problem). Each form
here is held by a cell that must pass it and failed by one that must fail it, each verdict naming
what the gate must say (a word of its line), on rows, records and runs built in this file: no
client runs, no server starts. A lenient judge (a skip accepted beside any record, a got never
compared, a depth or version not looked at) turns the matrix green silently: each case bites.

    /usr/bin/python3 -m matrix.tests.test_matching [--list] [--only FORM|CASE ...]
"""
from __future__ import annotations

import contextlib
import io
import sys
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Optional

from harness.clients import Profile
from harness.tests import selftest
from harness.tests.selftest import Captured, fails, held_to, passes, skips
from harness.outcomes import STAGES, OutcomeNames
from harness.record import toml_value
from harness.rows import RowError
from harness.runs import Run
from matrix import run_matrix
from matrix.crossing import client_record
from matrix.rows import Row
from matrix.run_matrix import Cell, Matrix, Observation

EXPIRED = "handshake/X509_V_ERR_CERT_HAS_EXPIRED"
MISMATCH = "handshake/X509_V_ERR_HOSTNAME_MISMATCH"
CLOSED = "handshake/PEER_CLOSED"
ALERT = "handshake/SSL_R_SSLV3_ALERT_HANDSHAKE_FAILURE"
PURPOSE = "handshake/X509_V_ERR_INVALID_PURPOSE"
UNKNOWN_CA = "handshake/SSL_R_TLSV1_ALERT_UNKNOWN_CA"


# ---- what the judge is shown ---------------------------------------------------------------------

@dataclass
class Seen:
    """An observed cell: OUTCOME (a name, or skip), and what observe() would have kept beside it."""
    outcome: Optional[str]
    depth: Optional[int] = None
    tls: Optional[str] = None
    problem: str = ""
    unsupported: str = ""


@dataclass
class Case:
    row: dict                          # the row's fields beyond name/group/reason/chain/key
    seen: Seen
    verdict: tuple[str, str]           # (PASS|FAIL|SKIP, a word its line must say)
    diff: Optional[dict] = None        # the client's [[difference]] for the row (got, kind, why); None: none
    client: str = "reference"          # reference | probe (a client under test)
    cell: tuple = ("bio", "1.3", "lab")  # transport, version, server


def profile(name: str, room: Path) -> Profile:
    reference = name == "reference"
    return Profile(name="tlsnb" if reference else name, path=room / "profile.toml", library="OpenSSL",
                   command=[name], flags=["--transport"] if reference else [], shim_sees_io=True,
                   reference=reference)


def make_row(name: str, fields: dict) -> Row:
    base = {"name": name, "group": "chain", "reason": "a row of the matching's self-test",
            "chain": "leaf-ecdsa.pem", "key": "leaf-ecdsa.key"}
    return Row({**base, **fields}, 1, Path("rows.toml"))


def write_record(room: Path, case: str, diff: dict) -> None:
    entry = {"case": case, "kind": "policy", "why": "a recorded difference of the self-test", **diff}
    room.mkdir(parents=True, exist_ok=True)
    (room / "matrix.toml").write_text("[[difference]]\n" + "".join(f"{k} = {toml_value(v)}\n"
                                                                 for k, v in entry.items()))


def matrix_for(case: Case, names: OutcomeNames, folder: Path) -> tuple[Matrix, Row]:
    room = folder / case.client
    row = make_row("cell-row", case.row)
    client = profile(case.client, room)
    record = None
    if case.client != "reference":
        if case.diff is not None:
            write_record(room, row.name, case.diff)
        record = client_record(client, {row.name: row}, names)
    m = Matrix(SimpleNamespace(client=None if client.reference else client.name), names,
               SimpleNamespace(rows=[row]), client, record)
    m.gate = Captured()
    return m, row


def observation(row: Row, case: Case, names: OutcomeNames) -> Observation:
    transport, version, server = case.cell
    s = case.seen
    obs = Observation(Cell(row, server, transport if case.client == "reference" else None, version),
                      outcome=s.outcome, depth=s.depth, tls_version=s.tls, problem=s.problem,
                      unsupported=s.unsupported)
    if s.outcome not in (None, "skip"):
        obs.code = names.parse(s.outcome)
    return obs


def judged(case: Case, names: OutcomeNames, folder: Path) -> tuple[bool, str]:
    m, row = matrix_for(case, names, folder)
    with contextlib.redirect_stdout(io.StringIO()):
        m.judge(observation(row, case, names), "RERUN")
    return held_to(case.verdict, m.gate.only("cell"))


# ---- every form of the matching ------------------------------------------------------------------

OK = {"bio": "ok", "fd": "ok"}
FAILING = {"bio": EXPIRED, "fd": EXPIRED, "depth": 0, "control": "ok-ecdsa"}
BY_VERSION = {"bio": {"1.2": ALERT, "1.3": PURPOSE}, "fd": {"1.2": ALERT, "1.3": PURPOSE}, "depth": 0,
              "control": "ok-ecdsa"}
BY_SERVER = {"bio": {"1.3 lab": UNKNOWN_CA, "1.3 s_server": ALERT}, "fd": {"1.3 lab": UNKNOWN_CA, "1.3 s_server": ALERT},
             "versions": ["1.3"], "servers_differ": "the servers name their client CAs differently",
             "control": "ok-ecdsa"}
DEPTH_BY_CELL = {"bio": EXPIRED, "fd": EXPIRED, "depth": {"bio 1.3": 1, "fd 1.3": 2}, "control": "ok-ecdsa"}
SERVER_12 = {"bio": "ok", "fd": "ok", "server_max": "1.2"}
SKIPPED = Seen("skip", unsupported="probe: --crl: not supported")
PROBE = dict(client="probe", cell=("bio", "1.3", "lab"))

JUDGED: dict[str, list[tuple[str, Case]]] = {
    # the reference held to the row's own expectation
    "row": [
        ("ok-held",             Case(OK, Seen("ok", tls="TLSv1.3"), passes("ok TLSv1.3"))),
        ("failure-held",        Case(FAILING, Seen(EXPIRED, depth=0), passes("depth 0"))),
        ("failure-for-ok",      Case(OK, Seen(EXPIRED, depth=0), fails("expected ok TLSv1.3, got " + EXPIRED))),
        ("ok-for-failure",      Case(FAILING, Seen("ok", tls="TLSv1.3"), fails(f"expected {EXPIRED} depth 0, got ok"))),
        ("other-failure",       Case(FAILING, Seen(MISMATCH, depth=0), fails(f"got {MISMATCH}"))),
        ("fd-its-own",          Case({"bio": "ok", "fd": EXPIRED, "depth": 0, "control": "ok-ecdsa"},
                                     Seen("ok", tls="TLSv1.3"), fails("expected " + EXPIRED),
                                     cell=("fd", "1.3", "lab"))),
        ("problem",             Case(OK, Seen(None, problem="tlsnb: exit 1 disagrees with outcome ok"),
                                     fails("disagrees"))),
        ("problem-beside-skip-record", Case(OK, Seen(None, problem="probe: rc=-9 signal=9"), fails("signal=9"),
                                            diff={"got": "skip"}, **PROBE)),
    ],
    # a row's table by "1.2" / "1.3", and by "1.3 lab" / "1.3 s_server"
    "by-version": [
        ("its-version",     Case(BY_VERSION, Seen(ALERT), passes(ALERT), cell=("bio", "1.2", "lab"))),
        ("other-version",   Case(BY_VERSION, Seen(PURPOSE, depth=0), fails(f"expected {ALERT}, got {PURPOSE}"),
                                 cell=("bio", "1.2", "lab"))),
        ("its-server",      Case(BY_SERVER, Seen(ALERT), passes(ALERT), cell=("bio", "1.3", "s_server"))),
        ("other-server",    Case(BY_SERVER, Seen(ALERT), fails(f"expected {UNKNOWN_CA}, got {ALERT}"))),
    ],
    # the reference's depth (verify_depth), whole or by "bio 1.3"
    "depth": [
        ("same",             Case(FAILING, Seen(EXPIRED, depth=0), passes("depth 0"))),
        ("one-off",          Case(FAILING, Seen(EXPIRED, depth=1), fails(f"expected {EXPIRED} depth 0, got {EXPIRED} depth 1"))),
        ("none-reported",    Case(FAILING, Seen(EXPIRED), fails(f"expected {EXPIRED} depth 0, got {EXPIRED} ["))),
        ("none-recorded",    Case({"bio": EXPIRED, "fd": EXPIRED, "control": "ok-ecdsa"}, Seen(EXPIRED, depth=0),
                                  fails(f"got {EXPIRED} depth 0"))),
        ("by-cell",          Case(DEPTH_BY_CELL, Seen(EXPIRED, depth=2), passes("depth 2"), cell=("fd", "1.3", "lab"))),
        ("by-cell-other",    Case(DEPTH_BY_CELL, Seen(EXPIRED, depth=2), fails("depth 1, got"))),
        ("not-a-clients",    Case(OK, Seen(EXPIRED), passes(EXPIRED), diff={"got": EXPIRED}, **PROBE)),
    ],
    # an ok cell's TLS version: the client's cap, or the server's max below it
    "tls-version": [
        ("the-cap",          Case(OK, Seen("ok", tls="TLSv1.3"), passes("TLSv1.3"))),
        ("below-the-cap",    Case(OK, Seen("ok", tls="TLSv1.2"), fails("expected ok TLSv1.3, got ok TLSv1.2"))),
        ("the-cap-1.2",      Case(OK, Seen("ok", tls="TLSv1.2"), passes("TLSv1.2"), cell=("bio", "1.2", "lab"))),
        ("above-the-cap",    Case(OK, Seen("ok", tls="TLSv1.3"), fails("expected ok TLSv1.2"), cell=("bio", "1.2", "lab"))),
        ("server-max",       Case(SERVER_12, Seen("ok", tls="TLSv1.2"), passes("TLSv1.2"))),
        ("over-server-max",  Case(SERVER_12, Seen("ok", tls="TLSv1.3"), fails("expected ok TLSv1.2"))),
        ("none-reported",    Case(OK, Seen("ok"), fails("got ok None"))),
        ("a-clients-too",    Case(OK, Seen("ok", tls="TLSv1.2"), fails("expected ok TLSv1.3"), **PROBE)),
    ],
    # a client under test: the reference's expectation, or its recorded difference's got
    "recorded": [
        ("no-record-as-reference", Case(FAILING, Seen(EXPIRED), passes(EXPIRED), **PROBE)),
        ("no-record-differs",      Case(FAILING, Seen("ok", tls="TLSv1.3"), fails(f"expected {EXPIRED}, got ok"), **PROBE)),
        ("got-held",               Case(FAILING, Seen("ok", tls="TLSv1.3"), passes("ok TLSv1.3"), diff={"got": "ok"},
                                        **PROBE)),
        ("got-not-held",           Case(FAILING, Seen(MISMATCH), fails(f"expected ok TLSv1.3, got {MISMATCH}"),
                                        diff={"got": "ok"}, **PROBE)),
        ("reference-not-enough",   Case(FAILING, Seen(EXPIRED), fails(f"expected {MISMATCH}, got {EXPIRED}"),
                                        diff={"got": MISMATCH}, **PROBE)),
        ("by-version",             Case(FAILING, Seen(ALERT), passes(ALERT), diff={"got": {"1.2": ALERT, "1.3": "ok"}},
                                        client="probe", cell=("bio", "1.2", "lab"))),
        ("by-version-other",       Case(FAILING, Seen(ALERT), fails(f"expected ok TLSv1.3, got {ALERT}"),
                                        diff={"got": {"1.2": ALERT, "1.3": "ok"}}, **PROBE)),
        # a cell the record's table leaves out is held to the row's own (the record holds only what differs)
        ("by-version-silent",      Case(FAILING, Seen(EXPIRED), passes(EXPIRED),
                                        diff={"got": {"1.2": ALERT}}, **PROBE)),
        ("by-version-silent-held", Case(FAILING, Seen(ALERT), fails(f"expected {EXPIRED}, got {ALERT}"),
                                        diff={"got": {"1.2": ALERT}}, **PROBE)),
        ("by-server",              Case(FAILING, Seen(CLOSED), passes(CLOSED),
                                        diff={"got": {"1.3 lab": CLOSED, "1.3 s_server": ALERT}}, **PROBE)),
        ("by-server-other",        Case(FAILING, Seen(ALERT), fails(f"expected {CLOSED}, got {ALERT}"),
                                        diff={"got": {"1.3 lab": CLOSED, "1.3 s_server": ALERT}}, **PROBE)),
        ("server-before-version",  Case(FAILING, Seen(ALERT), fails(f"expected {CLOSED}, got {ALERT}"),
                                        diff={"got": {"1.3": ALERT, "1.3 lab": CLOSED}}, **PROBE)),
    ],
    # A|B: a race the client's library does not settle, each alternative observed
    "alternatives": [
        ("first",            Case(FAILING, Seen("ok", tls="TLSv1.3"), passes("ok TLSv1.3"), diff={"got": f"ok|{CLOSED}"},
                                  **PROBE)),
        ("second",           Case(FAILING, Seen(CLOSED), passes(CLOSED), diff={"got": f"ok|{CLOSED}"}, **PROBE)),
        ("neither",          Case(FAILING, Seen(EXPIRED), fails(f"expected ok|{CLOSED}, got {EXPIRED}"),
                                  diff={"got": f"ok|{CLOSED}"}, **PROBE)),
        ("ok-one-keeps-version", Case(FAILING, Seen("ok", tls="TLSv1.2"), fails("got ok TLSv1.2"),
                                      diff={"got": f"{CLOSED}|ok"}, **PROBE)),
        ("in-a-table",       Case(FAILING, Seen(ALERT), passes(ALERT), diff={"got": {"1.2": "ok", "1.3": f"{CLOSED}|{ALERT}"}},
                                  **PROBE)),
    ],
    # skip (exit 89): held only where recorded, and only when the cell skipped
    "skip": [
        ("expected-and-skipped", Case(FAILING, SKIPPED, skips("--crl: not supported"), diff={"got": "skip"}, **PROBE)),
        ("expected-but-ran",     Case(FAILING, Seen("ok", tls="TLSv1.3"), fails("expected skip, got ok"),
                                      diff={"got": "skip"}, **PROBE)),
        ("ran-expected-skipped", Case(FAILING, SKIPPED, fails(f"expected {EXPIRED}, got skip"), **PROBE)),
        ("other-got-skipped",    Case(FAILING, SKIPPED, fails("expected ok, got skip"), diff={"got": "ok"}, **PROBE)),
        ("by-version-skipped",   Case(FAILING, SKIPPED, skips("not supported"), diff={"got": {"1.2": "ok", "1.3": "skip"}},
                                      **PROBE)),
        ("by-version-ok-skipped", Case(FAILING, SKIPPED, fails("expected ok, got skip"),
                                       diff={"got": {"1.2": "ok", "1.3": "skip"}}, client="probe", cell=("bio", "1.2", "lab"))),
        ("by-version-skip-ran",  Case(FAILING, Seen("ok", tls="TLSv1.3"), fails("expected skip, got ok"),
                                      diff={"got": {"1.2": "ok", "1.3": "skip"}}, **PROBE)),
        ("reference-skipped",    Case(OK, SKIPPED, fails("expected ok, got skip"))),
    ],
    # a recorded difference needs its kind and its why, whatever the cell shows
    "unexplained": [
        ("no-kind",          Case(FAILING, Seen("ok", tls="TLSv1.3"), fails("without a reason"),
                                  diff={"got": "ok", "kind": ""}, **PROBE)),
        ("no-why",           Case(FAILING, Seen("ok", tls="TLSv1.3"), fails("without a reason"),
                                  diff={"got": "ok", "why": " "}, **PROBE)),
        ("no-kind-skipped",  Case(FAILING, SKIPPED, fails("write kind and why"), diff={"got": "skip", "kind": ""}, **PROBE)),
        ("explained",        Case(FAILING, Seen("ok", tls="TLSv1.3"), passes("ok"), diff={"got": "ok", "kind": "bug"},
                                  **PROBE)),
    ],
}


# ---- a recorded got the matrix cannot judge is refused at load (matrix/crossing.py) --------------

LOADED: dict[str, list[tuple[str, object, str]]] = {  # form: [(case, got, "" to load or a word of the refusal)]
    "record-got": [
        ("an-outcome",            EXPIRED,                           ""),
        ("alternatives",          f"ok|{CLOSED}",                    ""),
        ("skip",                  "skip",                            ""),
        ("a-table",               {"1.2": "skip", "1.3 lab": "ok"},  ""),
        ("skip-among-alternatives", "ok|skip",                       "unknown outcome 'skip'"),
        ("unknown-name",          "handshake/X509_V_ERR_NOPE",       "X509_V_ERR_NOPE"),
        ("empty-alternative",     "ok|",                             "unknown outcome ''"),
        ("unknown-version",       {"1.4": "ok"},                     "'1.4'"),
        ("unknown-server",        {"1.3 nginx": "ok"},               "'1.3 nginx'"),
        ("a-number",              7,                                 "a string"),
    ],
}


def loaded(got: object, word: str, names: OutcomeNames, folder: Path) -> tuple[bool, str]:
    room = folder / "load"
    write_record(room, "cell-row", {"got": got})
    try:
        client_record(profile("probe", room), {"cell-row": make_row("cell-row", {})}, names)
    except RowError as e:
        if not word:
            return False, f"refused: {e}"
        said = str(e).split(": ", 1)[-1]   # past the record's path (a temporary folder)
        return word in said, said[:160] if word in said else f"no {word!r} in: {said}"
    return (True, "loaded") if not word else (False, f"loaded: expected a refusal saying {word!r}")


# ---- observe(): a client's run as the cell's observation -----------------------------------------

def attempt(stage: str, detail: int, **more) -> dict:
    return {"stage": stage, "stage_code": STAGES[stage], "detail": detail, **more}


EXPIRED_CODE = 10
OBSERVED: dict[str, list[tuple[str, str, dict, Run, tuple[str, str]]]] = {  # form: [(case, client, row, run, verdict)]
    "observe": [
        ("ok",                    "reference", OK, Run([], 0, 0, [attempt("ok", 0, tls_version="TLSv1.3")]),
         passes("TLSv1.3")),
        ("failure-with-depth",    "reference", FAILING, Run([], 1, 0, [attempt("handshake", EXPIRED_CODE, verify_depth=0)]),
         passes("depth 0")),
        ("a-clients-depth-unread", "probe", FAILING, Run([], 1, 0, [attempt("handshake", EXPIRED_CODE, verify_depth=3)]),
         passes(EXPIRED)),
        ("exit-89-is-skip",       "probe", OK, Run([], 89, 0, [], stderr="probe: --crl: not supported\n"),
         fails("expected ok, got skip (probe: --crl: not supported)")),
        ("exit-89-recorded",      "probe-skip", OK, Run([], 89, 0, [], stderr="probe: --crl: not supported\n"),
         skips("--crl: not supported")),
        ("exit-89-beside-attempt", "probe-skip", OK, Run([], 89, 0, [attempt("ok", 0, tls_version="TLSv1.3")]),
         fails("exit 89 disagrees")),
        ("exit-1-beside-ok",      "reference", OK, Run([], 1, 0, [attempt("ok", 0, tls_version="TLSv1.3")]),
         fails("exit 1 disagrees with outcome ok")),
        ("exit-0-beside-failure", "reference", FAILING, Run([], 0, 0, [attempt("handshake", EXPIRED_CODE, verify_depth=0)]),
         fails("exit 0 disagrees")),
        ("exit-2-beside-failure", "reference", FAILING, Run([], 2, 0, [attempt("handshake", EXPIRED_CODE, verify_depth=0)]),
         fails("exit 2 disagrees")),
        ("exit-89-beside-failure", "probe", FAILING, Run([], 89, 0, [attempt("handshake", EXPIRED_CODE)]),
         fails("exit 89 disagrees")),
        ("two-attempts",          "reference", OK, Run([], 0, 0, [attempt("ok", 0), attempt("ok", 0)]), fails("attempts=2")),
        ("no-attempt",            "reference", OK, Run([], 0, 0, []), fails("attempts=0")),
        ("signal",                "reference", OK, Run([], 0, 9, [attempt("ok", 0, tls_version="TLSv1.3")]),
         fails("signal=9")),
        ("not-json",              "reference", OK, Run([], 0, 0, [], problem="stdout line 1 is not JSON"), fails("not JSON")),
        ("no-stage-code",         "reference", OK, Run([], 0, 0, [{"stage": "ok", "detail": 0}]),
         fails("without integer stage_code")),
    ],
}


def observed(client: str, fields: dict, run: Run, verdict: tuple[str, str], names: OutcomeNames,
             folder: Path) -> tuple[bool, str]:
    """observe() with run_client answering RUN (the real one is not called), then judge()."""
    case = Case(fields, Seen(None), verdict, client="probe" if client.startswith("probe") else "reference",
                diff={"got": "skip"} if client == "probe-skip" else None)
    m, row = matrix_for(case, names, folder)
    cell = Cell(row, "lab", "bio" if m.client.reference else None, "1.3")
    real = run_matrix.run_client
    run_matrix.run_client = lambda *a, **k: run
    try:
        obs = run_matrix.observe(cell, m.client, SimpleNamespace(certs=Path("certs"), pin_of=lambda n: n), 1, names, 5)
    finally:
        run_matrix.run_client = real
    with contextlib.redirect_stdout(io.StringIO()):
        m.judge(obs, "RERUN")
    return held_to(verdict, m.gate.only("cell"))


# ---- running them --------------------------------------------------------------------------------

def all_cases(names: OutcomeNames, folder: Path) -> list[tuple[str, str, object]]:
    """(form, case id, a thunk giving (ok, detail)), in the tables' order; each case its own folder."""
    out = []
    for form, rows in JUDGED.items():
        out += [(form, f"{form}/{c}", lambda k=k, p=f"{form}.{c}": judged(k, names, folder / p)) for c, k in rows]
    for form, rows in LOADED.items():
        out += [(form, f"{form}/{c}", lambda g=g, w=w, p=f"{form}.{c}": loaded(g, w, names, folder / p))
                for c, g, w in rows]
    for form, rows in OBSERVED.items():
        out += [(form, f"{form}/{c}", lambda cl=cl, f=f, r=r, v=v, p=f"{form}.{c}":
                 observed(cl, f, r, v, names, folder / p)) for c, cl, f, r, v in rows]
    return out


def main() -> int:
    def flags(p) -> None:
        p.add_argument("--openssl-include", type=Path, default=Path("/usr/include/openssl"),
                       help="the OpenSSL headers (outcome names)")
    return selftest.run("matrix_matching", __doc__, lambda ns, tmp: all_cases(OutcomeNames(ns.openssl_include), tmp), flags,
                        ", on cells built in the file, no client run")


if __name__ == "__main__":
    sys.exit(main())
