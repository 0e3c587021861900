"""PKITS's matching judged: every form by which pkits_gate.py turns a client's answer into PASS, FAIL or SKIP.

The gate's verdict is Pkits.judge_one (and compare, below it): a client held to NIST's verdict
(verdicts.py's verdict_of: ok an accept, a handshake failure a refusal, anything else neither),
except where its clients/NAME/pkits.toml records a difference, judged by the verdict its got
stands for; a test not taken (exit 89, `skip`; exit 2, the test's files refused as unusable) held
only where the record says that very word; a record whose got is NIST's own verdict, or without
its kind or why, fails. Pkits.ask turns a client's run into the observation (which exit is a
skip, an unusable configuration, a problem). Each form here is held by an answer that must pass
it and failed by one that must fail it, each verdict naming what the gate must say (a word of
its line), on tests, records and runs built in this file: no client runs, no server starts, no
suite is read.

    /usr/bin/python3 -m pkits.tests.test_matching [--list] [--only FORM|CASE ...]
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
from harness.outcomes import OutcomeNames
from harness.record import toml_value
from harness.rows import RowError
from harness.runs import Run
from pkits import pkits_gate
from pkits.pkits_gate import Observation, Pkits
from pkits.table import PkitsTest
from pkits.verdicts import verdict_of

REVOKED = "handshake/X509_V_ERR_CERT_REVOKED"
NO_CRL = "handshake/X509_V_ERR_UNABLE_TO_GET_CRL"
SCOPE = "handshake/X509_V_ERR_DIFFERENT_CRL_SCOPE"
ALERT = "handshake/SSL_R_SSLV3_ALERT_HANDSHAKE_FAILURE"
RESET = "read/ECONNRESET"
LATE = "deadline/ETIMEDOUT"

VALID = PkitsTest("4.1.1", "Valid Signatures Test1", "ValidCertificatePathTest1EE", "-", "valid", "-")
INVALID = PkitsTest("4.4.3", "Invalid Revoked EE Test3", "InvalidRevokedEETest3", "-", "invalid", "4.1.1")
TESTS = {t.test: t for t in (VALID, INVALID)}


# ---- what the judge is shown ---------------------------------------------------------------------

@dataclass
class Case:
    test: PkitsTest
    outcome: str                      # ok | STAGE/NAME | skip | exit 2 (what ask() would have kept)
    verdict: tuple[str, str]          # (PASS|FAIL|SKIP, a word its line must say)
    diff: Optional[dict] = None       # the client's [[difference]] for the test (got, kind, why); None: none
    problem: str = ""
    not_asked: str = ""


def profile(room: Path) -> Profile:
    return Profile(name="probe", path=room / "profile.toml", library="a library", command=["probe"],
                   flags=["--no-verify-name", "--crl"], shim_sees_io=False)


def write_record(room: Path, case: str, diff: Optional[dict]) -> None:
    room.mkdir(parents=True, exist_ok=True)
    if diff is None:
        return
    entry = {"case": case, "kind": "policy", "why": "a recorded difference of the self-test", **diff}
    (room / "pkits.toml").write_text("[[difference]]\n" + "".join(f"{k} = {toml_value(v)}\n" for k, v in entry.items()))


def pkits_for(test: PkitsTest, diff: Optional[dict], folder: Path) -> tuple[Pkits, Profile]:
    write_record(folder, test.test, diff)
    client = profile(folder)
    run = Pkits(SimpleNamespace(work=folder, tlsnb="tlsnb", run_timeout=5), None, TESTS, [test], [client], None)
    run.gate = Captured()
    return run, client


def judged(case: Case, folder: Path) -> tuple[bool, str]:
    run, client = pkits_for(case.test, case.diff, folder)
    obs = Observation(case.test, client, outcome=case.outcome, text="the client's text", problem=case.problem,
                      not_asked=case.not_asked)
    with contextlib.redirect_stdout(io.StringIO()):
        run.judge(obs)
    return held_to(case.verdict, run.gate.only("answer"))


# ---- every form of the matching ------------------------------------------------------------------

JUDGED: dict[str, list[tuple[str, Case]]] = {
    # NIST's verdict: ok an accept, a handshake failure (any detail) a refusal
    "nist": [
        ("valid-accepted",     Case(VALID, "ok", passes("NIST valid, accept: ok"))),
        ("valid-refused",      Case(VALID, NO_CRL, fails("expected accept (NIST's verdict), got refuse"))),
        ("invalid-refused",    Case(INVALID, REVOKED, passes("NIST invalid, refuse"))),
        ("invalid-alert",      Case(INVALID, ALERT, passes("refuse: " + ALERT))),
        ("invalid-accepted",   Case(INVALID, "ok", fails("expected refuse (NIST's verdict), got accept"))),
        ("read-is-neither",    Case(INVALID, RESET, fails("neither an accept nor a refusal"))),
        ("deadline-is-neither", Case(VALID, LATE, fails("neither an accept nor a refusal"))),
    ],
    # a recorded difference: judged by the verdict its got stands for
    "recorded": [
        ("got-held",           Case(INVALID, "ok", passes("recorded policy"), diff={"got": "ok"})),
        ("got-held-by-verdict", Case(VALID, SCOPE, passes("recorded policy"), diff={"got": NO_CRL})),
        ("got-not-held",       Case(INVALID, REVOKED, fails("expected accept (as recorded (policy)"),
                                    diff={"got": "ok"})),
        ("refusal-not-held",   Case(VALID, "ok", fails("expected refuse (as recorded (policy)"), diff={"got": NO_CRL})),
        ("neither-beside-record", Case(INVALID, RESET, fails("neither an accept nor a refusal"), diff={"got": "ok"})),
        ("kind-named",         Case(INVALID, "ok", passes("recorded bug"), diff={"got": "ok", "kind": "bug"})),
    ],
    # a record whose got is NIST's own verdict records nothing: remove it
    "nist-own": [
        ("valid-recorded-ok",   Case(VALID, "ok", fails("is NIST's verdict (valid): remove it"), diff={"got": "ok"})),
        ("invalid-recorded-refusal", Case(INVALID, REVOKED, fails("is NIST's verdict (invalid): remove it"),
                                          diff={"got": NO_CRL})),
        ("whatever-was-seen",   Case(INVALID, "ok", fails("remove it"), diff={"got": REVOKED})),
    ],
    # skip (exit 89) and exit 2 (unusable): held only where the record says that very word
    "not-taken": [
        ("skip-recorded-skipped",      Case(VALID, "skip", skips("skip: the client's text (policy:"), diff={"got": "skip"})),
        ("unusable-recorded-unusable", Case(INVALID, "exit 2", skips("exit 2: the client's text (policy:"),
                                            diff={"got": "exit 2"})),
        ("skip-recorded-unusable-seen", Case(VALID, "exit 2", fails("exit 2 (the client's text)"), diff={"got": "skip"})),
        ("unusable-recorded-skip-seen", Case(VALID, "skip", fails("skip (the client's text)"), diff={"got": "exit 2"})),
        ("skip-unrecorded",            Case(VALID, "skip", fails("no difference is recorded"))),
        ("unusable-unrecorded",        Case(INVALID, "exit 2", fails("no difference is recorded"))),
        ("skip-beside-a-difference",   Case(INVALID, "skip", fails("skip (the client's text)"), diff={"got": "ok"})),
        ("unusable-beside-a-difference", Case(VALID, "exit 2", fails("exit 2 (the client's text)"), diff={"got": NO_CRL})),
        ("skip-recorded-but-ran",      Case(VALID, NO_CRL, fails("as recorded (policy)"), diff={"got": "skip"})),
        ("unusable-recorded-but-ran",  Case(INVALID, "ok", fails("as recorded (policy)"), diff={"got": "exit 2"})),
        ("skip-recorded-unexplained",  Case(VALID, "skip", fails("without its kind or why"), diff={"got": "skip", "why": ""})),
    ],
    # a difference without its kind or why fails, whatever was seen
    "unexplained": [
        ("no-kind",          Case(INVALID, "ok", fails("without its kind or why"), diff={"got": "ok", "kind": ""})),
        ("no-why",           Case(INVALID, "ok", fails("without its kind or why"), diff={"got": "ok", "why": "  "})),
    ],
    # no outcome: a problem fails; a test the lab did not ask is a SKIP with its reason
    "problem": [
        ("problem",               Case(VALID, "", fails("rc=-9 signal=9"), problem="probe: rc=-9 signal=9")),
        ("problem-beside-record", Case(INVALID, "", fails("not JSON"), diff={"got": "ok"},
                                       problem="probe: stdout line 1 is not JSON")),
        ("problem-beside-skip",   Case(INVALID, "", fails("not JSON"), diff={"got": "skip"},
                                       problem="probe: stdout line 1 is not JSON")),
        ("not-asked",             Case(VALID, "", skips("has no --policy"), not_asked="probe has no --policy")),
    ],
}

VERDICT_OF: list[tuple[str, str, Optional[str]]] = [   # (case, outcome, its verdict)
    ("ok", "ok", "accept"),
    ("verify-error", REVOKED, "refuse"),
    ("alert", ALERT, "refuse"),
    ("peer-closed", "handshake/PEER_CLOSED", "refuse"),
    ("read", RESET, None),
    ("deadline", LATE, None),
    ("skip", "skip", None),
    ("unusable", "exit 2", None),
    ("stage-alone", "handshake", None),
    ("ok-as-a-part", "okay", None),
]


def verdict_case(outcome: str, want: Optional[str]) -> tuple[bool, str]:
    got = verdict_of(outcome)
    return got == want, f"verdict_of({outcome!r}) = {got!r}" + ("" if got == want else f", expected {want!r}")


# ---- a recorded got the gate cannot judge is refused at load (verdicts.py's check_got) ------------

LOADED: list[tuple[str, object, str]] = [   # (case, got, "" to load or a word of the refusal)
    ("an-accept",      "ok",                ""),
    ("a-refusal",      NO_CRL,              ""),
    ("skip",           "skip",              ""),
    ("unusable",       "exit 2",            ""),
    ("a-read-error",   RESET,               "got 'read/ECONNRESET'"),
    ("another-exit",   "exit 1",            "got 'exit 1'"),
    ("a-table",        {"1.2": "ok"},       "got {'1.2': 'ok'}"),
    ("empty",          "",                  "got ''"),
]


def loaded(got: object, word: str, folder: Path) -> tuple[bool, str]:
    write_record(folder, VALID.test, {"got": got})
    try:
        pkits_gate.client_record(profile(folder), set(TESTS))
    except RowError as e:
        said = str(e).split(": ", 1)[-1]   # past the record's path (a temporary folder)
        if not word:
            return False, f"refused: {said}"
        return word in said, said[:160] if word in said else f"no {word!r} in: {said}"
    return (True, "loaded") if not word else (False, f"loaded: expected a refusal saying {word!r}")


# ---- ask(): a client's run as the observation -----------------------------------------------------

def attempt(stage: str, detail: int, **more) -> dict:
    return {"stage": stage, "detail": detail, **more}


EXPIRED_CODE, REVOKED_CODE = 10, 23
ASKED: list[tuple[str, PkitsTest, Optional[dict], Run, tuple[str, str]]] = [   # (case, test, diff, run, verdict)
    ("accept",             VALID, None, Run([], 0, 0, [attempt("ok", 0)]), passes("accept: ok")),
    ("refusal",            INVALID, None, Run([], 1, 0, [attempt("handshake", REVOKED_CODE)]), passes(REVOKED)),
    ("exit-89-is-skip",    VALID, {"got": "skip"}, Run([], 89, 0, [], stderr="probe: --crl: not supported\n"),
     skips("skip: probe: --crl: not supported")),
    ("exit-2-is-unusable", VALID, {"got": "exit 2"}, Run([], 2, 0, [], stderr="probe: --crl: cannot read it\n"),
     skips("exit 2: probe: --crl: cannot read it")),
    ("exit-2-not-skip",    VALID, {"got": "skip"}, Run([], 2, 0, [], stderr="probe: --crl: cannot read it\n"),
     fails("exit 2 (probe: --crl: cannot read it)")),
    ("exit-89-not-unusable", VALID, {"got": "exit 2"}, Run([], 89, 0, [], stderr="probe: no --crl\n"),
     fails("skip (probe: no --crl)")),
    ("exit-2-with-problem", VALID, {"got": "exit 2"}, Run([], 2, 0, [], problem="stdout line 1 is not JSON"),
     fails("not JSON")),
    ("exit-1-is-no-skip",  VALID, {"got": "skip"}, Run([], 1, 0, [], stderr="probe: crashed\n"), fails("attempts=0")),
    ("exit-89-beside-attempt", VALID, None, Run([], 89, 0, [attempt("ok", 0)]), fails("exit 89 disagrees")),
    ("exit-2-beside-attempt", INVALID, None, Run([], 2, 0, [attempt("handshake", REVOKED_CODE)]),
     fails("exit 2 disagrees")),
    ("exit-1-beside-ok",   VALID, None, Run([], 1, 0, [attempt("ok", 0)]), fails("exit 1 disagrees with outcome ok")),
    ("exit-0-beside-refusal", INVALID, None, Run([], 0, 0, [attempt("handshake", REVOKED_CODE)]), fails("exit 0 disagrees")),
    ("two-attempts",       VALID, None, Run([], 0, 0, [attempt("ok", 0), attempt("ok", 0)]), fails("attempts=2")),
    ("signal",             VALID, None, Run([], 0, 9, [attempt("ok", 0)]), fails("signal=9")),
    ("no-detail",          INVALID, None, Run([], 1, 0, [{"stage": "handshake"}]), fails("without a stage and an integer detail")),
    ("detail-not-a-number", INVALID, None, Run([], 1, 0, [attempt("handshake", "ten")]), fails("without a stage and an integer detail")),
    ("no-stage",           INVALID, None, Run([], 1, 0, [{"detail": REVOKED_CODE}]), fails("without a stage and an integer detail")),
]


def asked(test: PkitsTest, diff: Optional[dict], run: Run, want: tuple[str, str], names: OutcomeNames,
          folder: Path) -> tuple[bool, str]:
    """ask() with run_client answering RUN (the real one is not called), then judge()."""
    gate, client = pkits_for(test, diff, folder)
    gate.names = names
    real = pkits_gate.run_client
    pkits_gate.run_client = lambda *a, **k: run
    try:
        obs = gate.ask(test, client, SimpleNamespace(crls=None), 1)
    finally:
        pkits_gate.run_client = real
    with contextlib.redirect_stdout(io.StringIO()):
        gate.judge(obs)
    return held_to(want, gate.gate.only("answer"))


# ---- running them --------------------------------------------------------------------------------

def all_cases(names: OutcomeNames, folder: Path) -> list[tuple[str, str, object]]:
    """(form, case id, a thunk giving (ok, detail)), in the tables' order; each case its own folder."""
    out = []
    for form, rows in JUDGED.items():
        out += [(form, f"{form}/{c}", lambda k=k, p=f"{form}.{c}": judged(k, folder / p)) for c, k in rows]
    out += [("verdict_of", f"verdict_of/{c}", lambda o=o, w=w: verdict_case(o, w)) for c, o, w in VERDICT_OF]
    out += [("record-got", f"record-got/{c}", lambda g=g, w=w, p=f"record-got.{c}": loaded(g, w, folder / p))
            for c, g, w in LOADED]
    out += [("ask", f"ask/{c}", lambda t=t, d=d, r=r, v=v, p=f"ask.{c}": asked(t, d, r, v, names, folder / p))
            for c, t, d, r, v in ASKED]
    return out


def main() -> int:
    def flags(p) -> None:
        p.add_argument("--openssl-include", type=Path, default=Path("/usr/include/openssl"),
                       help="the OpenSSL headers (outcome names)")
    return selftest.run("pkits_matching", __doc__, lambda ns, tmp: all_cases(OutcomeNames(ns.openssl_include), tmp), flags,
                        ", on answers built in the file, no client run")


if __name__ == "__main__":
    sys.exit(main())
