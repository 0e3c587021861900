"""The judge judged: every form of the expect grammar, held and failed before the lab's own judge.

Each form of harness/expect.py's grammar is held by a run that must hold it and failed by one that
must fail it; the terms parse() must refuse are refused; and the load-time checks of the case
grammar (harness/cases.py) that are part of its contract refuse what they must, and no line of a
case file of the tree is longer than 200 characters.

Every gate stands on judge(): a judge that stops judging a kind of term turns every gate that uses
it green silently, because each gate row also passes when its terms are not judged. Each failing
case names what the judge must say (a word of its problems), so a problem reported for the wrong
reason does not count. mutants/mutants.toml's judge mutants prove that each case bites.

    /usr/bin/python3 -m harness.tests.test_judge [--list] [--only FORM|CASE ...]
"""
from __future__ import annotations

import ipaddress
import json
import re
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from ..cases import load_cases, observe
from ..layout import ROOT
from ..expect import ExpectError, judge, parse
from . import selftest
from ..rows import RowError, expand_globs
from ..runs import Run


# ---- what a judge is shown --------------------------------------------------------------------

@dataclass
class Seen:
    """One run and the reports beside it (the peers', the shim's, the loop's counts)."""
    run: Run
    reports: dict = field(default_factory=dict)


def lines(outcomes: str, **fields) -> list[dict]:
    """'ok/0*2 handshake/-1*1' as attempt lines in that order, conn 0, 1, ..., each with FIELDS."""
    out = []
    for term in outcomes.split():
        key, n = term.rsplit("*", 1)
        stage, detail = key.split("/")
        out += [{"stage": stage, "detail": int(detail), **fields} for _ in range(int(n))]
    return [{**a, "conn": a.get("conn", i)} for i, a in enumerate(out)]


def ran(outcomes: str = "", attempts: Optional[list[dict]] = None, rc: int = 0, signal: int = 0,
        stderr: str = "", wall: float = 1.0, cpu: float = 0.125, summary: Optional[dict] = None,
        problem: str = "", reports: Optional[dict] = None) -> Seen:
    """A run as harness.runs.run_client would have made it (cpu and wall in powers of two: exact edges)."""
    run = Run(argv=["tlsnb"], rc=rc, signal=signal, attempts=lines(outcomes) if attempts is None else attempts,
              summary=summary or {}, stderr=stderr, wall_s=wall, cpu_s=cpu, problem=problem)
    return Seen(run, reports or {})


SUMMARY = {"type": "summary", "ok": 4, "failed": 0, "version": "TLSv1.3", "resumed": True,
           "dns_queries": {"udp": 1, "tcp": 1}, "cpu_ms": 12.5, "wall_ms": 250, "cpu_ms_per_conn": 3.1}
SERVER = {"requests": 40, "bad_bodies": 0, "early_data": "none", "sni": {"hooks.test": 3, "other.test": 1}}
SHIM = {"active": True, "calls": 120, "eagain": 7, "settings": "eagain_every=3"}
VERIFY = "certificate verify failed"
EXPIRED = "handshake/X509_V_ERR_CERT_HAS_EXPIRED"   # handshake/10, by its name (harness/outcomes.py)

NONE = ran()
OK4 = ran("ok/0*4", summary=SUMMARY, reports={"server": SERVER, "shim": SHIM, "dns": {"queries": 2}})
OK4_BROKEN_LINE = ran("ok/0*4", problem="stdout line 5 is not JSON (Expecting value): '{oops'")
OK4_HUNG = ran("ok/0*4", problem="still running after 30 s (killed)")
OK4_HS1 = ran("ok/0*4 handshake/10*1")
OK3 = ran("ok/0*3")
RESET2 = ran("handshake/-1*2")
MIX = ran("ok/0*2 read/0*1")
MIX_OVER = ran("ok/0*2 read/0*2")
MIX_SHORT = ran("ok/0*1 read/0*1")
MIX_OUTSIDE = ran("ok/0*2 handshake/10*1")
MIX_THREE = ran("ok/0*1 read/0*1 handshake/10*1")
NOT_RESUMED = ran("ok/0*1", summary={"resumed": False})
EXIT2 = ran(rc=2, stderr="tlsnb: --cafile: file is empty\n")
TWO_LINES = ran(rc=2, stderr="tlsnb: --count: not a number\nusage: tlsnb [options] TARGET:PORT\n")
PIPED = ran("ok/0*1", signal=13)    # died by SIGPIPE after one attempt line (rc 0, as run_client sets it)
KILLED = ran("ok/0*1", signal=9)
UNEXPECTED = ran("handshake/167772404*1")   # ERR_PACK(ERR_LIB_SSL, SSL_R_UNEXPECTED_MESSAGE), as a run prints it
UNNAMED = ran("handshake/-5*1")             # a detail no table names
READ_MIX = ran("read/-1*1 read/104*1")
LAB_DETAILS = ran("lookup/-203*1 deadline/2*1 setup/9*1 refused/2130706433*1 refused/-6*1 read/-2*1 read/0*1 "
                  "handshake/-100*1 handshake/1073742212*1")
EACH = ran(attempts=lines("ok/0*3", requests_done=5, ms=120, detail_text=VERIFY, resumed=True,
                          tls={"version": "TLSv1.3"}))
EACH_LAST_DIFFERS = ran(attempts=lines("ok/0*2", requests_done=5, resumed=True)
                        + [{"stage": "ok", "detail": 0, "conn": 2, "requests_done": 4, "resumed": False}])
# printed out of conn order (as a loop finishing them in another order prints them), slot = conn
OUT_OF_ORDER = ran(attempts=[{"stage": "ok", "detail": 0, "conn": c, "slot": c} for c in (2, 0, 1)])
UNDER_FIVE, AT_FIVE, OVER_FIVE = ran(wall=4.875), ran(wall=5.0), ran(wall=5.125)
QUICK, MID, LATE = ran(wall=1.0), ran(wall=3.0), ran(wall=6.0)
# the loop's counts (harness/loop.py), as the shim or strace report them
SLEPT = ran("ok/0*1", reports={"loop": {"waits": 7, "idle_waits": 0, "progress": 16, "blocking_calls": 0}})
SPUN = ran("ok/0*1", reports={"loop": {"waits": 14421, "idle_waits": 14414, "progress": 16, "blocking_calls": 0}})
BLOCKED = ran("ok/0*1", reports={"loop": {"waits": 7, "idle_waits": 0, "progress": 16, "blocking_calls": 384}})
UNCOUNTED = ran("ok/0*1", reports={"loop": {"waits": 25, "idle_waits": 17, "progress": 22}})  # strace: no flags seen
PER_RECORD = ran("ok/0*1", reports={"loop": {"waits": 2061, "idle_waits": 1996, "progress": 1000}})  # Asio's poll a record
AT_EDGE = ran("ok/0*1", reports={"loop": {"waits": 2100, "idle_waits": 2000, "progress": 1000}})
NO_PROGRESS = ran("ok/0*1", reports={"loop": {"waits": 9, "idle_waits": 1}})

HOLDS = ("holds", "")


def fails(word: str) -> tuple[str, str]:
    """The judge must find a problem, and say WORD in it."""
    return ("fails", word)


def refused(word: str) -> tuple[str, str]:
    """parse() (or load_cases) must refuse the text, saying WORD."""
    return ("refused", word)


LOADS = ("loads", "")


def loads_as(field: str, text: str) -> tuple[str, tuple[str, str]]:
    """load_cases must load the file, and its last row's FIELD must read TEXT (an array joined, a default)."""
    return ("loads", (field, text))

# ---- every form of the grammar, judged, and the terms parse() must refuse ---------------------------

JUDGED = {  # form: [(case, expect, shown, verdict)]
    # STAGE/DETAIL*N: all such terms together are the whole count
    "outcome": [
        ("exact",                   "ok/0*4",                OK4,     HOLDS),
        ("count-one-over",          "ok/0*3",                OK4,     fails("outcomes {")),
        ("count-one-short",         "ok/0*5",                OK4,     fails("outcomes {")),
        ("attempt-no-term-counts",  "ok/0*4",                OK4_HS1, fails("X509_V_ERR_CERT_HAS_EXPIRED")),
        ("term-never-seen",         f"ok/0*4 {EXPIRED}*1",   OK4,     fails("outcomes {")),
        ("negative-detail",         "handshake/PEER_CLOSED*2", RESET2, HOLDS),
        ("negative-sign-matters",   "handshake/X509_V_ERR_UNSPECIFIED*2", RESET2, fails("handshake/PEER_CLOSED")),
        ("terms-sum-to-the-whole",  "ok/0*2 ok/0*2",         OK4,     HOLDS),
        ("terms-sum-one-short",     "ok/0*2 ok/0*1",         OK4,     fails("outcomes {")),
        ("two-outcomes",            f"ok/0*4 {EXPIRED}*1",   OK4_HS1, HOLDS),
        ("none-expected-none-seen", "ok/0*0",                NONE,    HOLDS),
        ("none-expected-one-seen",  "ok/0*0",                OK3,     fails("outcomes {")),
    ],
    # STAGE/NAME: a detail by its name (harness/outcomes.py), translated once at parse time
    "outcome-name": [
        ("name-accepted",         "handshake/SSL_R_UNEXPECTED_MESSAGE*1", UNEXPECTED, HOLDS),
        ("another-name-fails",    "handshake/SSL_R_BAD_KEY_SHARE*1",      UNEXPECTED, fails("SSL_R_UNEXPECTED_MESSAGE")),
        ("number-without-a-name", "handshake/-5*1",                       UNNAMED,    HOLDS),
        ("alternatives-by-name",  "read/PEER_CLOSED|read/ECONNRESET*2",   READ_MIX,   HOLDS),
        ("lab-details", "lookup/TIMEOUT*1 deadline/HANDSHAKE*1 setup/CONTEXT*1 refused/127.0.0.1*1 refused/IPV6*1 "
                        "read/HTTP_CHUNKED*1 read/EARLY_CLOSE_NOTIFY*1 handshake/UNMAPPED*1 handshake/ERR_128_388*1",
         LAB_DETAILS, HOLDS),
        ("failure-says-names",    "read/PEER_CLOSED*1", ran("read/104*1"),
         fails("outcomes {'read/ECONNRESET': 1}, expected {'read/PEER_CLOSED': 1}")),
    ],
    # A|B*N: N attempts ended A or B in any mix
    "alternatives": [
        ("mixed",              "ok/0|read/EARLY_CLOSE_NOTIFY*3",                MIX,         HOLDS),
        ("one-side-only",      "ok/0|read/EARLY_CLOSE_NOTIFY*3",                OK3,         HOLDS),
        ("beside-a-term",      f"ok/0|read/EARLY_CLOSE_NOTIFY*2 {EXPIRED}*1", MIX_THREE, HOLDS),
        ("count-one-over",     "ok/0|read/EARLY_CLOSE_NOTIFY*3",                MIX_OVER,    fails("outcomes {")),
        ("count-one-short",    "ok/0|read/EARLY_CLOSE_NOTIFY*3",                MIX_SHORT,   fails("outcomes {")),
        ("outside-the-choice", "ok/0|read/EARLY_CLOSE_NOTIFY*3",                MIX_OUTSIDE, fails("X509_V_ERR_CERT_HAS_EXPIRED")),
    ],
    # exit=N
    "exit": [
        ("same-code",          "exit=2", EXIT2, HOLDS),
        ("zero",               "exit=0", OK4,   HOLDS),
        ("code-one-under",     "exit=3", EXIT2, fails("exit 2, expected 3")),
        ("code-one-over",      "exit=1", EXIT2, fails("exit 2, expected 1")),
        ("a-death-is-no-exit", "exit=0", PIPED, fails("exit 0, expected 0")),
    ],
    # signal=NAME; none expected: any signal fails
    "signal": [
        ("same-signal",         "signal=SIGPIPE ok/0*1", PIPED,  HOLDS),
        ("other-signal",        "signal=SIGPIPE",        KILLED, fails("expected death by SIGPIPE")),
        ("exit-without-signal", "signal=SIGPIPE",        OK4,    fails("expected death by SIGPIPE")),
        ("none-expected",       "ok/0*1",                PIPED,  fails("killed by signal 13")),
    ],
    # attempts=N
    "attempts": [
        ("same-count",      "attempts=4", OK4,   HOLDS),
        ("none",            "attempts=0", EXIT2, HOLDS),
        ("count-one-over",  "attempts=3", OK4,   fails("4 attempt lines")),
        ("count-one-short", "attempts=5", OK4,   fails("4 attempt lines")),
    ],
    # stderr.lines=N
    "stderr.lines": [
        ("one-line",        "stderr.lines=1", EXIT2,     HOLDS),
        ("silent",          "stderr.lines=0", OK4,       HOLDS),
        ("count-one-over",  "stderr.lines=1", TWO_LINES, fails("stderr has 2 lines")),
        ("count-one-short", "stderr.lines=2", EXIT2,     fails("stderr has 1 lines")),
    ],
    # stderr~WORD, case and all; every word
    "stderr~": [
        ("word-held",       "stderr~--cafile",              EXIT2, HOLDS),
        ("every-word-held", "stderr~--cafile stderr~empty", EXIT2, HOLDS),
        ("word-absent",     "stderr~--name",                EXIT2, fails("'--name'")),
        ("case-matters",    "stderr~Empty",                 EXIT2, fails("'Empty'")),
        ("one-word-absent", "stderr~--cafile stderr~gone",  EXIT2, fails("'gone'")),
    ],
    # wall<S, wall>S, strict at the edge
    "wall<": [
        ("under",       "wall<5", UNDER_FIVE, HOLDS),
        ("at-the-edge", "wall<5", AT_FIVE,    fails("wall 5.00 s, expected < 5")),
        ("over",        "wall<5", LATE,       fails("expected < 5")),
    ],
    "wall>": [
        ("over",                "wall>5",        OVER_FIVE, HOLDS),
        ("at-the-edge",         "wall>5",        AT_FIVE,   fails("wall 5.00 s, expected > 5")),
        ("under",               "wall>5",        QUICK,     fails("expected > 5")),
        ("both-bounds-between", "wall>1 wall<5", MID,       HOLDS),
        ("both-bounds-above",   "wall>1 wall<5", LATE,      fails("expected < 5")),
    ],
    # loop.KEY: the loop's counts, compared as any SOURCE.KEY; a key strace cannot see is missing, never held
    "loop.KEY": [
        ("slept",              "loop.idle_waits<1000",   SLEPT,     HOLDS),
        ("spun",               "loop.idle_waits<1000",   SPUN,      fails("loop.idle_waits = 14414")),
        ("at-the-edge",        "loop.idle_waits<14414",  SPUN,      fails("expected <14414")),
        ("not-blocked",        "loop.blocking_calls=0",  SLEPT,     HOLDS),
        ("blocked",            "loop.blocking_calls=0",  BLOCKED,   fails("loop.blocking_calls = 384")),
        ("not-counted",        "loop.blocking_calls=0",  UNCOUNTED, fails("loop.blocking_calls = None")),
        ("no-counts-at-all",   "loop.idle_waits<1000",   OK4,       fails("loop: no report")),
        # <N+progress: under N plus the run's own progress count
        ("per-progress",       "loop.idle_waits<1000+progress", PER_RECORD,  HOLDS),
        ("per-progress-spun",  "loop.idle_waits<1000+progress", SPUN,        fails("(= 1000 + 16)")),
        ("per-progress-edge",  "loop.idle_waits<1000+progress", AT_EDGE,     fails("(= 1000 + 1000)")),
        ("per-progress-none",  "loop.idle_waits<1000+progress", NO_PROGRESS, fails("no progress count")),
    ],
    # summary.KEY=V >V <V ~V
    "summary": [
        ("equal",               "summary.ok=4",            OK4, HOLDS),
        ("equal-as-number",     "summary.ok=4.0",          OK4, HOLDS),
        ("equal-one-off",       "summary.ok=3",            OK4, fails("summary.ok = 4")),
        ("equal-text",          "summary.version=TLSv1.3", OK4, HOLDS),
        ("equal-text-is-whole", "summary.version=TLSv1",   OK4, fails("summary.version")),
        ("greater",             "summary.ok>3",            OK4, HOLDS),
        ("greater-at-the-edge", "summary.ok>4",            OK4, fails("expected >4")),
        ("less",                "summary.ok<5",            OK4, HOLDS),
        ("less-at-the-edge",    "summary.ok<4",            OK4, fails("expected <4")),
        ("part",                "summary.version~1.3",     OK4, HOLDS),
        ("part-absent",         "summary.version~1.2",     OK4, fails("expected ~1.2")),
        ("key-absent",          "summary.nothing=0",       OK4, fails("summary.nothing = None")),
        ("no-summary-line",     "summary.ok=4",            OK3, fails("summary.ok = None")),
    ],
    # shim.KEY (the I/O shim's report)
    "shim": [
        ("equal",               "shim.eagain=7",          OK4, HOLDS),
        ("equal-one-off",       "shim.eagain=8",          OK4, fails("shim.eagain = 7")),
        ("greater",             "shim.eagain>0",          OK4, HOLDS),
        ("greater-at-the-edge", "shim.eagain>7",          OK4, fails("shim.eagain = 7")),
        ("less",                "shim.calls<121",         OK4, HOLDS),
        ("less-at-the-edge",    "shim.calls<120",         OK4, fails("shim.calls = 120")),
        ("part",                "shim.settings~eagain",   OK4, HOLDS),
        ("part-absent",         "shim.settings~max_send", OK4, fails("shim.settings")),
        ("no-report",           "shim.eagain>0",          OK3, fails("shim: no report")),
    ],
    # a peer's REPORT (server, dns, ...)
    "peer": [
        ("equal",               "server.requests=40",         OK4, HOLDS),
        ("equal-one-off",       "server.requests=41",         OK4, fails("server.requests = 40")),
        ("greater",             "server.requests>39",         OK4, HOLDS),
        ("greater-at-the-edge", "server.requests>40",         OK4, fails("server.requests = 40")),
        ("less",                "server.bad_bodies<1",        OK4, HOLDS),
        ("less-at-the-edge",    "server.requests<40",         OK4, fails("server.requests = 40")),
        ("part",                "server.early_data~none",     OK4, HOLDS),
        ("part-absent",         "server.early_data~received", OK4, fails("server.early_data")),
        ("another-peer",        "dns.queries=2",              OK4, HOLDS),
        ("no-report",           "server.requests=40",         OK3, fails("server: no report")),
        ("a-peer-not-started",  "server2.requests=0",         OK4, fails("server2: no report")),
    ],
    # each.KEY: every attempt, and at least one
    "each": [
        ("equal",               "each.requests_done=5",     EACH,              HOLDS),
        ("equal-last-differs",  "each.requests_done=5",     EACH_LAST_DIFFERS, fails("each.requests_done=5")),
        ("greater",             "each.ms>119",              EACH,              HOLDS),
        ("greater-at-the-edge", "each.ms>120",              EACH,              fails("each.ms>120")),
        ("less",                "each.ms<121",              EACH,              HOLDS),
        ("less-at-the-edge",    "each.ms<120",              EACH,              fails("each.ms<120")),
        ("part",                "each.detail_text~verify",  EACH,              HOLDS),
        ("part-absent",         "each.detail_text~expired", EACH,              fails("each.detail_text~expired")),
        ("key-absent",          "each.nothing=0",           EACH,              fails("each.nothing=0")),
        ("over-no-attempts",    "each.requests_done=5",     NONE,              fails("no attempts")),
    ],
    # seq.KEY=V,V,...: the attempts' values in conn order, whole
    "seq": [
        ("conn-order",              "seq.slot=0,1,2",   OUT_OF_ORDER, HOLDS),
        ("print-order",             "seq.slot=2,0,1",   OUT_OF_ORDER, fails("seq.slot = 0,1,2")),
        ("same-values-other-order", "seq.slot=0,2,1",   OUT_OF_ORDER, fails("seq.slot = 0,1,2")),
        ("one-value-short",         "seq.slot=0,1",     OUT_OF_ORDER, fails("seq.slot = 0,1,2")),
        ("one-value-over",          "seq.slot=0,1,2,3", OUT_OF_ORDER, fails("seq.slot = 0,1,2")),
        ("over-no-attempts",        "seq.slot=0",       NONE,         fails("seq.slot = ,")),
    ],
    # KEY[SUB]: a table's entry
    "KEY[SUB]": [
        ("entry",               "server.sni[hooks.test]=3",  OK4,  HOLDS),
        ("entry-one-off",       "server.sni[hooks.test]=4",  OK4,  fails("server.sni[hooks.test] = 3")),
        ("entry-absent",        "server.sni[absent.test]>0", OK4,  fails("server.sni[absent.test] = None")),
        ("not-a-table",         "summary.ok[x]=4",           OK4,  fails("summary.ok[x] = None")),
        ("in-each",             "each.tls[version]=TLSv1.3", EACH, HOLDS),
        ("in-each-other-value", "each.tls[version]=TLSv1.2", EACH, fails("each.tls=TLSv1.2")),
    ],
    # a table of counts compared with a number is summed
    "table-sum": [
        ("equal",            "summary.dns_queries=2", OK4, HOLDS),
        ("equal-one-entry",  "summary.dns_queries=1", OK4, fails("summary.dns_queries = {")),
        ("greater",          "summary.dns_queries>1", OK4, HOLDS),
        ("less-at-the-edge", "summary.dns_queries<2", OK4, fails("expected <2")),
        ("a-peer-table",     "server.sni>3",          OK4, HOLDS),
    ],
    # booleans: true, false
    "boolean": [
        ("true",              "summary.resumed=true",  OK4,               HOLDS),
        ("true-is-not-false", "summary.resumed=false", OK4,               fails("summary.resumed = True")),
        ("false",             "summary.resumed=false", NOT_RESUMED,       HOLDS),
        ("false-is-not-true", "summary.resumed=true",  NOT_RESUMED,       fails("summary.resumed = False")),
        ("each-true",         "each.resumed=true",     EACH,              HOLDS),
        ("each-one-false",    "each.resumed=true",     EACH_LAST_DIFFERS, fails("each.resumed=true")),
    ],
    # machine-speed figures: a lower bound is a wait's, an upper bound is refused
    "machine-speed": [
        ("wall-ms-lower-bound", "summary.wall_ms>100",       OK4, HOLDS),
        ("per-conn-above-zero", "summary.cpu_ms_per_conn>0", OK4, HOLDS),
    ],
    # a run that broke the contract fails whatever its terms say
    "problem": [
        ("none",             "ok/0*4",            OK4,             HOLDS),
        ("every-term-holds", "ok/0*4",            OK4_BROKEN_LINE, fails("not JSON")),
        ("hung",             "ok/0*4 attempts=4", OK4_HUNG,        fails("still running")),
    ],
}

REFUSED = {  # form: [(case, expect, verdict)]
    # a number where a name exists is refused, naming the name; a name the table lacks is unknown
    "outcome-number": [
        ("number-where-a-name-exists", "handshake/167772404*1",
         refused("write handshake/SSL_R_UNEXPECTED_MESSAGE for handshake/167772404")),
        ("number-in-an-alternative",   "ok/0|read/104*1",  refused("write read/ECONNRESET for read/104")),
        ("lab-number-named",           "deadline/2*1",     refused("write deadline/HANDSHAKE")),
    ],
    "signal": [
        ("unknown-name",           "signal=SIGFOO",      refused("SIGFOO")),
        ("without-sig",            "signal=PIPE",        refused("PIPE")),
        ("a-handler-not-a-signal", "signal=SIG_DFL",     refused("SIG_DFL")),
        ("a-mask-op-not-a-signal", "signal=SIG_SETMASK", refused("SIG_SETMASK")),
    ],
    # a verdict by CPU time is gone: counted (loop.KEY), or a wall bound beside a deadline
    "timed": [
        ("cpu-vs-a-control", "cpu<2*normal", refused("judges by CPU time")),
        ("busy-share",       "busy<0.5",     refused("judges by CPU time")),
        ("loop-gap-ms",      "summary.loop_gap_max_ms<75", refused("machine-speed")),
    ],
    "loop.KEY": [
        ("unknown-key",  "loop.wakeups<10",      refused("the loop's counts are")),
        ("a-table-entry", "loop.waits[x]<10",    refused("the loop's counts are")),
        ("progress-above",   "loop.idle_waits>10+progress", refused("<N+progress only")),
        ("per-another-count", "loop.idle_waits<10+waits",   refused("<N+progress only")),
        ("not-a-number",      "loop.idle_waits<many",       refused("a whole number")),
    ],
    "seq": [
        ("less",    "seq.slot<3", refused("seq.slot")),
        ("greater", "seq.slot>0", refused("seq.slot")),
        ("part",    "seq.slot~1", refused("seq.slot")),
    ],
    "machine-speed": [
        ("cpu-ms",          "summary.cpu_ms<100",        refused("machine-speed")),
        ("wall-ms",         "summary.wall_ms<1000",      refused("machine-speed")),
        ("cpu-ms-per-conn", "summary.cpu_ms_per_conn<1", refused("machine-speed")),
        ("a-table-entry",   "summary.cpu_ms[user]<1",    refused("machine-speed")),
    ],
    "unknown": [
        ("a-word",                "frobnicate",               refused("'frobnicate'")),
        ("outcome-without-count", "ok/0",                     refused("'ok/0'")),
        ("outcome-empty-count",   "ok/0*",                    refused("'ok/0*'")),
        ("stage-in-capitals",     "OK/0*1",                   refused("'OK/0*1'")),
        ("detail-in-words",       "ok/zero*1",                refused("'ok/zero*1'")),
        ("negative-exit",         "exit=-1",                  refused("'exit=-1'")),
        ("attempts-in-words",     "attempts=four",            refused("'attempts=four'")),
        ("wall-equal",            "wall=5",                   refused("'wall=5'")),
        ("wall-not-a-number",     "wall<1.2.3",               refused("'wall<1.2.3'")),
        ("stderr-without-word",   "stderr~",                  refused("'stderr~'")),
        ("among-known-terms",     "ok/0*4 exit=0 frobnicate", refused("'frobnicate'")),
        # an outcome the table does not name (harness/outcomes.py)
        ("outcome-unknown-name",  "handshake/SSL_R_NO_SUCH_REASON*1", refused("'SSL_R_NO_SUCH_REASON'")),
        ("outcome-other-stage",   "handshake/HTTP_CHUNKED*1", refused("'HTTP_CHUNKED'")),
        ("outcome-unknown-stage", "teardown/PEER_CLOSED*1",   refused("'teardown'")),
        ("outcome-ok-detail",     "ok/1*1",                   refused("ok/0")),
        ("outcome-not-an-address", "refused/300.0.0.1*1",     refused("'300.0.0.1'")),
    ],
    # a term that takes one value given twice: the one not kept would go unjudged
    "repeated": [
        ("exit",         "exit=0 exit=1",                 refused("twice")),
        ("attempts",     "attempts=4 attempts=3",         refused("twice")),
        ("stderr-lines", "stderr.lines=1 stderr.lines=2", refused("twice")),
        ("signal",       "signal=SIGPIPE signal=SIGKILL", refused("twice")),
    ],
}


# ---- the case grammar's load-time checks (harness/cases.py) -------------------------------------------

def row(case: str, expect: Optional[str], client: str = "{target}", control: str = "-", transports: str = "bio fd",
        extra: str = "") -> str:
    """One [[case]] of a case file (EXPECT None: left out; EXTRA: lines added as written)."""
    lines = ["[[case]]", f"name = {json.dumps(case)}"]
    lines += [f"transports = {json.dumps(transports.split())}"] if transports != "-" else []
    lines += [f"client = {json.dumps(client)}"]
    lines += [f"expect = {json.dumps(expect)}"] if expect is not None else []
    lines += [f"control = {json.dumps(control)}"] if control != "-" else []
    return "\n".join(lines + ['why = "a row of the judge\'s self-test"'] + ([extra] if extra else [])) + "\n"


SUCCEEDS = row("b", "ok/0*1")                          # a control, on both transports

LOADED = {  # form: [(case, rows, verdict)]
    "wall<-deadline": [
        ("beside-deadline-ms", [row("a", "ok/0*1 wall<2", "--deadline-ms 500 {target}")],    LOADS),
        ("beside-dns-timeout", [row("a", "ok/0*1 wall<2", "--dns-timeout-ms 500 {target}")], LOADS),
        ("without-deadline",   [row("a", "ok/0*1 wall<2")],                    refused("without a deadline")),
        ("lower-bound-alone",  [row("a", "ok/0*1 wall>1")],                    LOADS),
    ],
    "failure-control": [
        ("outcome-with-control", [row("a", f"{EXPIRED}*1", control="b"), SUCCEEDS], LOADS),
        ("success-needs-none",   [row("a", "ok/0*4 exit=0")],                   LOADS),
        ("outcome-without",      [row("a", f"{EXPIRED}*1")],                    refused("needs a control")),
        ("alternative-without",  [row("a", "ok/0|read/EARLY_CLOSE_NOTIFY*1")],  refused("needs a control")),
        ("exit-without",         [row("a", "exit=2 stderr~--count")],           refused("needs a control")),
        ("signal-without",       [row("a", "signal=SIGPIPE")],                  refused("needs a control")),
        ("control-not-a-case",   [row("a", f"{EXPIRED}*1", control="zz")],      refused("'zz' is not a case")),
        ("expect-refused",       [row("a", "ok/0*1 frobnicate")],               refused("'frobnicate'")),
    ],
    # harness/rows.py's load_case_file: a key missing, unknown, of the wrong type: file:line (the second
    # case's [[case]] is line 8, or the key's own line) and the case
    "case-keys": [
        ("expect-as-terms",  [SUCCEEDS, row("a", None, extra='expect = ["ok/0*1", "exit=0"]')],
                             loads_as("expect", "ok/0*1 exit=0")),
        ("lists-joined",     [SUCCEEDS, row("a", "ok/0*1", extra='peers = ["tls leaf-ecdsa", "dns a.test=a:127.0.0.1"]')],
                             loads_as("peers", "tls leaf-ecdsa; dns a.test=a:127.0.0.1")),
        ("left-out-is-none", [SUCCEEDS, row("a", "ok/0*1", transports="-")], loads_as("transports", "-")),
        ("missing-key",      [SUCCEEDS, row("a", None)],
                             refused("cases.toml:8: a: missing 'expect'")),
        ("unknown-key",      [SUCCEEDS, row("a", "ok/0*1", extra='peer = ["tls leaf-ecdsa"]')],
                             refused("cases.toml:14: a: unknown key 'peer'")),
        ("transports-text",  [SUCCEEDS, row("a", "ok/0*1", transports="-", extra='transports = "bio fd"')],
                             refused("cases.toml:13: a: transports must be list, got 'bio fd'")),
        ("expect-a-number",  [SUCCEEDS, row("a", None, extra="expect = 1")],
                             refused("cases.toml:13: a: expect must be str or list")),
        ("terms-not-text",   [SUCCEEDS, row("a", None, extra="expect = [1]")],
                             refused("cases.toml:13: a: expect's items must be str")),
        ("dash-for-none",    [SUCCEEDS, row("a", "ok/0*1", extra='shim = "-"')],
                             refused('cases.toml:14: a: shim = "-": leave')),
        ("empty-list",       [SUCCEEDS, row("a", "ok/0*1", transports="-", extra="transports = []")],
                             refused("cases.toml:13: a: transports is an empty array")),
        ("named-twice",      [SUCCEEDS, SUCCEEDS],
                             refused("cases.toml:9: b: defined twice (first at line 1)")),
    ],
}


# ---- running them --------------------------------------------------------------------------------

def said(problems: list[str], word: str) -> tuple[bool, str]:
    """A failing verdict holds when there are problems and they say WORD (the right one was found)."""
    text = "; ".join(problems)
    if not problems:
        return False, f"held: expected a problem saying {word!r}"
    return word in text, text[:160] if word in text else f"no {word!r} in: {text[:160]!r}"


def judged(expect: str, seen: Seen, verdict: tuple[str, str]) -> tuple[bool, str]:
    problems = judge(parse(expect), seen.run, seen.reports)
    if verdict == HOLDS:
        return not problems, "; ".join(problems)
    return said(problems, verdict[1])


def parsed(expect: str, verdict: tuple[str, str]) -> tuple[bool, str]:
    try:
        parse(expect)
    except ExpectError as e:   # only ExpectError: load_cases turns it into file:line and exit 2
        return said([str(e)], verdict[1])
    except Exception as e:
        return False, f"raised {e!r}, not ExpectError"
    return False, "parsed: expected a refusal"


def loaded(rows: list[str], verdict: tuple[str, str], folder: Path) -> tuple[bool, str]:
    path = folder / "cases.toml"
    path.write_text("\n".join(rows))
    try:
        loaded_rows = load_cases(path)
    except RowError as e:
        return (False, f"refused: {e}") if verdict[0] == "loads" else said([str(e)], verdict[1])
    if verdict[0] != "loads":
        return False, "loaded: expected a refusal"
    if not verdict[1]:
        return True, ""
    field, want = verdict[1]
    got = getattr(loaded_rows[-1], field)
    return got == want, f"{field} = {got!r}, expected {want!r}"


# ---- what --update writes (harness/cases.py observe) ---------------------------------------------

RACE = "read/ECONNRESET|write/ECONNRESET*1"   # a row's own line for a race it settles neither way
RECORDED_RACE = "read/ECONNRESET|write/PEER_CLOSED*1"   # a client's record of the same race, spelled its way
# (case, the row's line, the client's recorded line or None, the run, what --update writes: None, no difference)
OBSERVED = {
    "observe": [
        ("race-kept-its-first-side",  RACE, RECORDED_RACE, ran("read/104*1"), RECORDED_RACE),
        ("race-kept-its-other-side",  RACE, RECORDED_RACE, ran("write/-1*1"), RECORDED_RACE),
        ("record-no-longer-holds",    RACE, RECORDED_RACE, ran("ok/0*1"),     "ok/0*1"),
        ("difference-first-seen",     RACE, None,          ran("write/-1*1"), "write/PEER_CLOSED*1"),
        ("reference-held",            RACE, None,          ran("write/104*1"), None),
        ("skip-recorded-now-runs",    RACE, "skip",        ran("read/104*1"), None),
        ("terms-that-held-kept",      "ok/0*2 exit=0", None, ran("ok/0*1 handshake/-1*1", rc=1),
         "handshake/PEER_CLOSED*1 ok/0*1 exit=1"),
        # written by name (harness/outcomes.py), the number only where it has none
        ("written-by-name",           "ok/0*1",        None, ran("read/104*1"),   "read/ECONNRESET*1"),
        ("number-without-a-name",     "ok/0*1",        None, ran("handshake/-5*1"), "handshake/-5*1"),
    ],
}


def observed(reference: str, recorded: Optional[str], seen: Seen, want: Optional[str]) -> tuple[bool, str]:
    got = observe(reference, seen.run, seen.reports, lambda text: text, recorded)
    return got == want, f"--update writes {got!r}, expected {want!r}"


# --only's globs (harness/rows.py expand_globs): each a pattern list over names, and what it selects
# (in the names' order, each once) or which pattern matches nothing (the gate refuses it).
NAMES = ["names-wrong-host", "names-wildcard", "names-wildcard/bio", "names-wildcard/fd", "chain-deep", "4.4.1", "4.4.10"]
GLOBS = {
    "only-glob": [
        ("prefix", ["names-*"], ["names-wrong-host", "names-wildcard", "names-wildcard/bio", "names-wildcard/fd"], []),
        ("transport-suffix", ["*/fd"], ["names-wildcard/fd"], []),
        ("one-character", ["4.4.?"], ["4.4.1"], []),
        ("plain-name-kept", ["chain-deep", "nope"], ["chain-deep", "nope"], []),
        ("each-once", ["names-wildcard*", "*wildcard/bio"], ["names-wildcard", "names-wildcard/bio", "names-wildcard/fd"], []),
        ("matches-nothing", ["keys-*"], [], ["keys-*"]),
        ("bracket", ["4.4.1[0-9]"], ["4.4.10"], []),
    ],
}


def globbed(patterns: list[str], want: list[str], empty: list[str]) -> tuple[bool, str]:
    got = expand_globs(patterns, NAMES)
    return got == (want, empty), f"expand_globs({patterns}) = {got}, expected {(want, empty)}"


# harness/name_outcomes.py: the numbered terms of the expectation text named, nothing else touched
EXPECT_IN = ('[[case]]\nexpect = "handshake/10*1 read/104|write/-1*2 ok/0*1 handshake/-5*1 wall>1"\n'
             'why = "handshake/10*1 quoted in prose stays"\n')
TOML_IN = ('[[case]]\nexpect = "handshake/10*1 each.detail=62"\nwhy = "got = handshake/10*1 stays"\n'
           'got = ["deadline/2*1", \'refused/2130706433*1\']\nt = { outcome = "handshake/1", why = "read/104" }\n')
NAMED = {  # (case, text in, text out)
    "name_outcomes": [
        ("expect-terms", EXPECT_IN, EXPECT_IN.replace(
            '"handshake/10*1 read/104|write/-1*2', f'"{EXPIRED}*1 read/ECONNRESET|write/PEER_CLOSED*2')),
        ("toml-keys", TOML_IN, TOML_IN.replace('"handshake/10*1 each', f'"{EXPIRED}*1 each').replace(
            '"deadline/2*1", \'refused/2130706433*1\'', '"deadline/HANDSHAKE*1", \'refused/127.0.0.1*1\'').replace(
            'outcome = "handshake/1"', 'outcome = "handshake/X509_V_ERR_UNSPECIFIED"')),
    ],
}


def named(text: str, want: str) -> tuple[bool, str]:
    from ..name_outcomes import name_toml
    got, _ = name_toml(text)
    again, n = name_toml(got)
    if got != want:
        return False, f"wrote {got!r}, expected {want!r}"
    return again == got and n == 0, f"a second run changed {n} terms" if n else "named, and again: unchanged"
# ---- the case files of the tree: every line at most MAX_LINE characters (a long value goes over lines) -----

MAX_LINE = 200
NAMED_CASE_FILES = ["client/tests/client.toml", "dns/dns.toml", "faults/faults.toml", "gaps/gaps.toml",
                    "hostile/hostile.toml", "leaks/leaks.toml"]   # at least these: a search that finds none fails


def case_files() -> list[str]:
    """Every TOML file of the tree that holds [[case]] tables (build folders aside), relative to the root."""
    return [str(p.relative_to(ROOT)) for p in sorted(ROOT.glob("*/**/*.toml"))
            if not p.relative_to(ROOT).parts[0].startswith(("build", "."))
            and re.search(r"^\[\[case\]\]", p.read_text(), re.M)]


def lines_short(rel: str) -> tuple[bool, str]:
    long = [f"{rel}:{n}: {len(line)} characters" for n, line in enumerate((ROOT / rel).read_text().splitlines(), 1)
            if len(line) > MAX_LINE]
    return not long, "; ".join(long[:5]) + (f" (over {MAX_LINE}: write a long value as an array or a multi-line string)"
                                            if long else "")


def case_files_found(found: list[str]) -> tuple[bool, str]:
    missing = [f for f in NAMED_CASE_FILES if f not in found]
    return not missing, f"not found among the tree's [[case]] files: {', '.join(missing)}" if missing else ""


BLACK_HOLES = (ipaddress.ip_network("2001:db8:bad::/64"), ipaddress.ip_network("198.51.100.0/24"))  # netns.py


def black_holes_once(rel: str = "dns/dns.toml") -> tuple[bool, str]:
    """Every black-hole address (harness/netns.py) is named by one case of REL at most: the kernel keeps
    resolving a neighbour after the dial that asked for it is gone, and a later row's dial of the same
    address joins that resolution and fails early (race-head-start-given saw 666 ms of its 700 ms head
    start when it shared ::1 with race-ipv4-after-head-start)."""
    seen: dict[str, list[str]] = {}
    for case in tomllib.loads((ROOT / rel).read_text()).get("case", []):
        text = " ".join(case.get("peers", [])) + " " + str(case.get("client", ""))
        for word in set(re.split(r"[\s=,\[\]]+|\ba:", text)):
            try:
                addr = ipaddress.ip_address(word)
            except ValueError:
                continue
            if any(addr in net for net in BLACK_HOLES) and not addr.packed.endswith(b"\x02"):  # .2, ::2: the link's own
                seen.setdefault(str(addr), []).append(case["name"])
    shared = {a: names for a, names in seen.items() if len(names) > 1}
    return not shared and bool(seen), ("; ".join(f"{a} named by {', '.join(n)}" for a, n in sorted(shared.items()))
                                       or f"{len(seen)} black-hole addresses, each in one case")


def kind_sample_order(folder: Path) -> tuple[bool, str]:
    """Record.kind_sample draws the same cases whatever order the record was given its cases in (PKITS and
    leaks give a set, whose order follows the process's string hashes: two runs of one tree drew apart)."""
    from ..record import Record
    path = folder / "kinds.toml"
    path.write_text('[[difference]]\ncase = "a*"\ngot = "skip"\nkind = "limit"\nwhy = "w"\n')
    cases = [f"a{i}" for i in range(40)] + ["b"]
    draws = {tuple(c for _, _, c in Record(path, "t", cases=order).kind_sample(7)) for order in (cases, cases[::-1])}
    return len(draws) == 1, f"drawn: {sorted(draws)}"


COALESCE = """[[difference]]\ncase = "x/*"\nwithout = ["a=1"]\nkind = "limit"\nwhy = "w"\n
[[difference]]\ncase = "x/bio"\nwithout = ["b=1"]\nkind = "limit"\nwhy = "w"\n
[[difference]]\ncase = "x/fd"\nwithout = ["FD=1"]\nkind = "limit"\nwhy = "w"\n"""


def coalesce(folder: Path) -> tuple[bool, str]:
    """Record.coalesce: per-case entries adding the same without terms to the glob that holds them all, for
    its kind and why, join it (one entry left); entries that add different terms stay apart (three left)."""
    from ..record import Record
    path = folder / "coalesce.toml"
    shown = []
    for fd_term, want in (("b=1", [(["x/*"], ["a=1", "b=1"])]), ("FD=1", None)):
        path.write_text(COALESCE.replace('"FD=1"', f'"{fd_term}"'))
        record = Record(path, "t", cases=["x/bio", "x/fd", "y"], without=True)
        record.coalesce()
        got = [(d.names, d.without) for d in record.all]
        shown.append(got)
        if (want is not None and got != want) or (want is None and len(got) != 3):
            return False, f"{fd_term}: {got}"
    return True, f"alike: {shown[0]}; apart: {len(shown[1])} entries"


def all_cases(folder: Path) -> list[tuple[str, str, object]]:
    """(form, case id, a thunk giving (ok, detail)), in the tables' order."""
    out = [(f, f"{f}/{c}", lambda e=e, s=s, v=v: judged(e, s, v)) for f, rows in JUDGED.items() for c, e, s, v in rows]
    out += [(f, f"{f}/{c}", lambda e=e, v=v: parsed(e, v)) for f, rows in REFUSED.items() for c, e, v in rows]
    out += [(f, f"{f}/{c}", lambda r=r, v=v: loaded(r, v, folder)) for f, rows in LOADED.items() for c, r, v in rows]
    out += [(f, f"{f}/{c}", lambda e=e, r=r, s=s, w=w: observed(e, r, s, w))
            for f, rows in OBSERVED.items() for c, e, r, s, w in rows]
    out += [(f, f"{f}/{c}", lambda p=p, w=w, e=e: globbed(p, w, e)) for f, rows in GLOBS.items() for c, p, w, e in rows]
    out += [(f, f"{f}/{c}", lambda t=t, w=w: named(t, w)) for f, rows in NAMED.items() for c, t, w in rows]
    found = case_files()
    out += [("case-files", "case-files/found", lambda: case_files_found(found))]
    out += [("case-files", f"case-files/{rel}", lambda rel=rel: lines_short(rel)) for rel in found]
    out += [("case-files", "case-files/dns-black-holes-once", black_holes_once)]
    out += [("records", "records/kind-sample-order", lambda: kind_sample_order(folder))]
    out += [("records", "records/coalesce", lambda: coalesce(folder))]
    return out


def main() -> int:
    return selftest.run("harness_judge", __doc__, lambda ns, tmp: all_cases(tmp))


if __name__ == "__main__":
    sys.exit(main())
