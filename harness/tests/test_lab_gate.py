"""lab_gate judged: the whole gate's own reading of CTest's results, held and failed.

harness/lab_gate.py turns CTest's JUnit file (ctest --output-junit) into the summary's table and the
last line `tlslab: N passed, N failed`: the lab's one verdict. A reading that let an unknown status,
a test that did not run or a test with no result at all pass would turn the whole lab green with
no gate noticing. Each form of that reading is held by a JUnit file that must pass and failed by
one that must fail, each a small XML string written here in CTest 3.25's own shape (observed: it
writes status="run", "fail", "notrun" with <skipped message=...>, and "disabled"; a skip the test
asked for is notrun with SKIP_RETURN_CODE=N or SKIP_REGULAR_EXPRESSION_MATCHED, the second what
gtest_discover_tests' "[  SKIPPED ]" gives a GTEST_SKIP). For every case, each of these must agree:
the label's row (PASS or FAIL, its passed count), Run.failed() over the label's tests, the tests
skipped, the last line, and the summary's FAIL lines (the tests it names, and those it must not);
the CPU form holds the per-label CPU-seconds and what is reported as not measured.
mutants/mutants.toml's `lab_gate_*` rows prove the cases bite. No CTest is run.

    /usr/bin/python3 -m harness.tests.test_lab_gate [--list] [--only FORM|CASE ...]
"""
from __future__ import annotations

import contextlib
import io
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from ..ctest import Test
from . import selftest
from ..lab_gate import Run, attach_cpu, cpu_figures, junit_results, label_rows, print_summary, verdict_line

METER = "/b/harness/cpu_meter/python3"   # a metered test's command starts so (tlslab_gate)


# ---- JUnit files as CTest writes them --------------------------------------------------------

def case(name: str, status: Optional[str], inner: str = "", time: str = "1.5", out: str = "") -> str:
    """One <testcase>; STATUS None leaves the attribute out; OUT its output (XML-escaped here)."""
    attr = "" if status is None else f' status="{status}"'
    text = (out or f"output of {name}").replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return (f'<testcase name="{name}" classname="{name}" time="{time}"{attr}>{inner}'
            f'<system-out>{text}</system-out></testcase>')


def junit(*cases: str) -> str:
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<testsuite name="(empty)" tests="0" failures="0" '
            'disabled="0" skipped="0" hostname="" time="1" timestamp="2024-01-01T00:00:00">'
            + "".join(cases) + "</testsuite>")


FAILURE = '<failure message=""/>'


def skip(message: Optional[str]) -> str:
    return "<skipped/>" if message is None else f'<skipped message="{message}"/>'


def unit(*names: str) -> list[Test]:
    return [Test(n, ["unit"], command=[METER, "-m", f"x.{n}"]) for n in names]


# ---- what the reading must say ------------------------------------------------------------------

@dataclass
class Want:
    """What lab_gate must make of a JUnit file: only the fields given are compared."""
    verdicts: dict[str, str]                  # label -> PASS | FAIL (the table's result)
    passed: Optional[dict[str, int]] = None   # label -> its row's passed count (skipped included)
    failed: Optional[list[str]] = None        # Run.failed(the selection)
    skipped: Optional[list[str]] = None       # the selection's tests skipped by themselves
    last: Optional[str] = None                # the last line
    named: list[str] = field(default_factory=list)      # words the summary must print
    unnamed: list[str] = field(default_factory=list)    # words it must not
    cpu: Optional[dict[str, float]] = None    # label -> its row's CPU-seconds
    unmeasured: Optional[dict[str, int]] = None   # label -> its tests with no CPU figure


@dataclass
class Case:
    xml: str
    tests: list[Test]
    want: Want
    figures: dict[str, str] = field(default_factory=dict)   # TEST.json files of the meter: name -> text


def figure(test: str, cpu: float) -> str:
    return json.dumps({"test": test, "cpu_s": cpu, "user_s": cpu, "system_s": 0.0, "wall_s": 1.5, "exit": 0})


def labels_in(tests: list[Test]) -> list[str]:
    return list(dict.fromkeys(label for t in tests for label in t.labels))


def judged(c: Case, folder: Path) -> tuple[bool, str]:
    path = folder / "ctest.xml"
    path.write_text(c.xml)
    run = Run(results=junit_results(path), wall_s=2.0, log=path, tree_cpu_s=10.0, ctest_self_s=0.5,
              machine_busy_s=20.0, cores=2)
    cpu_dir = folder / "cpu"
    cpu_dir.mkdir(exist_ok=True)
    for old in cpu_dir.glob("*.json"):
        old.unlink()
    for name, text in c.figures.items():
        (cpu_dir / f"{name}.json").write_text(text)
    attach_cpu(run, cpu_figures(cpu_dir))
    rows = label_rows(c.tests, labels_in(c.tests), run)
    names = {t.name for t in c.tests}
    shown = io.StringIO()
    with contextlib.redirect_stdout(shown):
        print_summary(rows, run, [], c.tests)
    summary = shown.getvalue()
    got = {"verdicts": {r.label: r.verdict for r in rows}, "passed": {r.label: r.passed for r in rows},
           "failed": run.failed(c.tests), "skipped": sorted(n for n in run.skipped() if n in names),
           "last": verdict_line(c.tests, run), "cpu": {r.label: round(r.cpu_s, 3) for r in rows},
           "unmeasured": {r.label: r.unmeasured for r in rows}}
    w = c.want
    problems = [f"{key}: expected {getattr(w, key)!r}, got {got[key]!r}" for key in got
                if getattr(w, key) is not None and getattr(w, key) != got[key]]
    problems += [f"the summary does not say {word!r}" for word in w.named if word not in summary]
    problems += [f"the summary says {word!r}" for word in w.unnamed if word in summary]
    if problems:
        return False, "; ".join(problems)
    return True, f"{' '.join(f'{k} {v}' for k, v in got['verdicts'].items())}; {got['last']}"


# ---- the forms: each held by a file that must pass and failed by one that must fail ------------

PASS1 = "tlslab: 1 passed, 0 failed"
MUTANTS_OUT = "\n".join([f"PASS m{i}/x:y  (killed as recorded: x: exit 1: FAIL y: expected ok/0)" for i in range(14)]
                        + [f"  rerun: cd /root && gate --only c{i}" for i in range(13)]   # kept, after the FAIL line
                        + ["FAIL m2/x:y: expected survived, got killed (re-record the row)", "mutants: 14 passed, 1 failed"])
FAIL1 = "tlslab: 0 passed, 1 failed"

CASES: dict[str, list[tuple[str, Case]]] = {
    "run": [   # status run is passed; fail is failed
        ("holds", Case(junit(case("a", "run")), unit("a"),
                       Want({"unit": "PASS"}, {"unit": 1}, [], [], PASS1, unnamed=["FAIL a"]))),
        ("fails", Case(junit(case("a", "fail", FAILURE)), unit("a"),
                       Want({"unit": "FAIL"}, {"unit": 0}, ["a"], [], FAIL1, named=["FAIL a (failed"]))),
    ],
    "fail": [   # one failed test of two reddens the label and is the one named
        ("holds", Case(junit(case("a", "run"), case("b", "run")), unit("a", "b"),
                       Want({"unit": "PASS"}, {"unit": 2}, [], [], "tlslab: 2 passed, 0 failed"))),
        ("fails", Case(junit(case("a", "run"), case("b", "fail", FAILURE)), unit("a", "b"),
                       Want({"unit": "FAIL"}, {"unit": 1}, ["b"], [], "tlslab: 1 passed, 1 failed",
                            named=["FAIL b (failed"], unnamed=["FAIL a"]))),
        ("timeout", Case(junit(case("a", "fail", FAILURE, time="60.0")), unit("a"),
                         Want({"unit": "FAIL"}, {"unit": 0}, ["a"], [], FAIL1))),
    ],
    "notrun": [   # notrun is not passed unless the test itself asked for the skip
        ("holds", Case(junit(case("a", "notrun", skip("SKIP_RETURN_CODE=77"))), unit("a"),
                       Want({"unit": "PASS"}, {"unit": 1}, [], ["a"],
                            "tlslab: 0 passed, 0 failed, 1 skipped (by the test itself)"))),
        ("fails", Case(junit(case("a", "notrun", skip("Unable to find executable"))), unit("a"),
                       Want({"unit": "FAIL"}, {"unit": 0}, ["a"], [], FAIL1, named=["FAIL a (not run"]))),
        ("required-files", Case(junit(case("a", "notrun", skip("Required Files Missing"))), unit("a"),
                                Want({"unit": "FAIL"}, {"unit": 0}, ["a"], [], FAIL1))),
        ("fixture", Case(junit(case("a", "notrun", skip("Fixture dependency failed"))), unit("a"),
                         Want({"unit": "FAIL"}, {"unit": 0}, ["a"], [], FAIL1))),
    ],
    "skipped": [   # skipped only with a SKIP_ message on a notrun test (GTEST_SKIP through SKIP_REGULAR_EXPRESSION)
        ("holds", Case(junit(case("a", "run"), case("b", "notrun", skip("SKIP_REGULAR_EXPRESSION_MATCHED"))),
                       unit("a", "b"),
                       Want({"unit": "PASS"}, {"unit": 2}, [], ["b"],
                            "tlslab: 1 passed, 0 failed, 1 skipped (by the test itself)", unnamed=["FAIL b"]))),
        ("no-message", Case(junit(case("b", "notrun", skip(None))), unit("b"),
                            Want({"unit": "FAIL"}, {"unit": 0}, ["b"], [], FAIL1))),
        ("not-skip-prefix", Case(junit(case("b", "notrun", skip("NOT_SKIP_REGULAR_EXPRESSION_MATCHED"))), unit("b"),
                                 Want({"unit": "FAIL"}, {"unit": 0}, ["b"], [], FAIL1))),
        ("under-fail", Case(junit(case("b", "fail", FAILURE + skip("SKIP_RETURN_CODE=77"))), unit("b"),
                            Want({"unit": "FAIL"}, {"unit": 0}, ["b"], [], FAIL1))),
        ("under-disabled", Case(junit(case("b", "disabled", skip("SKIP_RETURN_CODE=77"))), unit("b"),
                                Want({"unit": "FAIL"}, {"unit": 0}, ["b"], [], FAIL1))),
    ],
    "unknown-status": [   # a status CTest did not write as run is not passed, whatever it says
        ("holds", Case(junit(case("a", "run"), case("b", "run")), unit("a", "b"),
                       Want({"unit": "PASS"}, {"unit": 2}, [], [], "tlslab: 2 passed, 0 failed"))),
        ("disabled", Case(junit(case("a", "disabled")), unit("a"),
                          Want({"unit": "FAIL"}, {"unit": 0}, ["a"], [], FAIL1, named=["FAIL a"]))),
        ("empty", Case(junit(case("a", "")), unit("a"),
                       Want({"unit": "FAIL"}, {"unit": 0}, ["a"], [], FAIL1, named=["FAIL a"]))),
        ("absent", Case(junit(case("a", None)), unit("a"),
                        Want({"unit": "FAIL"}, {"unit": 0}, ["a"], [], FAIL1, named=["FAIL a"]))),
        ("passed-word", Case(junit(case("a", "passed")), unit("a"),   # CDash's word, not CTest's JUnit's
                             Want({"unit": "FAIL"}, {"unit": 0}, ["a"], [], FAIL1, named=["FAIL a"]))),
        ("other-case", Case(junit(case("a", "RUN")), unit("a"),
                            Want({"unit": "FAIL"}, {"unit": 0}, ["a"], [], FAIL1, named=["FAIL a"]))),
    ],
    "no-result": [   # a test of the label that has no <testcase> at all is failed, and named
        ("holds", Case(junit(case("a", "run"), case("b", "run")), unit("a", "b"),
                       Want({"unit": "PASS"}, {"unit": 2}, [], [], "tlslab: 2 passed, 0 failed"))),
        ("fails", Case(junit(case("a", "run")), unit("a", "b"),
                       Want({"unit": "FAIL"}, {"unit": 1}, ["b"], [], "tlslab: 1 passed, 1 failed",
                            named=["FAIL b (no result"], unnamed=["FAIL a"]))),
        ("another-test-instead", Case(junit(case("a", "run"), case("c", "run")), unit("a", "b"),
                                      Want({"unit": "FAIL"}, {"unit": 1}, ["b"], [], "tlslab: 1 passed, 1 failed"))),
        ("none-at-all", Case(junit(), unit("a"), Want({"unit": "FAIL"}, {"unit": 0}, ["a"], [], FAIL1))),
    ],
    "labels": [   # each label's row holds its own tests only
        ("holds", Case(junit(case("a", "run"), case("g", "run")), unit("a") + [Test("g", ["gaps"])],
                       Want({"unit": "PASS", "gaps": "PASS"}, {"unit": 1, "gaps": 1}, [], []))),
        ("fails", Case(junit(case("a", "run"), case("g", "fail", FAILURE)), unit("a") + [Test("g", ["gaps"])],
                       Want({"unit": "PASS", "gaps": "FAIL"}, {"unit": 1, "gaps": 0}, ["g"], [],
                            "tlslab: 1 passed, 1 failed"))),
    ],
    "counts": [   # the last line: each test once, as passed, failed or skipped
        ("holds", Case(junit(case("a", "run"), case("b", "run"), case("c", "notrun", skip("SKIP_RETURN_CODE=77"))),
                       unit("a", "b", "c"),
                       Want({"unit": "PASS"}, {"unit": 3}, [], ["c"],
                            "tlslab: 2 passed, 0 failed, 1 skipped (by the test itself)"))),
        ("fails", Case(junit(case("a", "run"), case("b", "fail", FAILURE), case("c", "notrun", skip("SKIP_RETURN_CODE=77")),
                             case("d", "notrun", skip("Unable to find executable")), case("f", "disabled"),
                             case("g", "weird")),
                       unit("a", "b", "c", "d", "e", "f", "g"),
                       Want({"unit": "FAIL"}, {"unit": 2}, ["b", "d", "e", "f", "g"], ["c"],
                            "tlslab: 1 passed, 5 failed, 1 skipped (by the test itself)",
                            named=["FAIL b", "FAIL d", "FAIL e", "FAIL f", "FAIL g"], unnamed=["FAIL a", "FAIL c"]))),
    ],
    "failure-lines": [   # a failed test is shown by its FAIL lines, never by PASS lines that quote a FAIL
        ("holds", Case(junit(case("m", "run", out=MUTANTS_OUT.replace("FAIL m2", "PASS m2"))), unit("m"),
                       Want({"unit": "PASS"}, unnamed=["FAIL m (", "killed as recorded"]))),
        ("fails", Case(junit(case("m", "fail", FAILURE, out=MUTANTS_OUT)), unit("m"),
                       Want({"unit": "FAIL"}, named=["FAIL m (failed", "    FAIL m2/x:y: expected survived"],
                            unnamed=["killed as recorded"]))),
    ],
    "cpu": [   # each label's CPU-seconds: its measured tests' figures; a test without one is counted as not measured
        ("holds", Case(junit(case("a", "run"), case("b", "run")), unit("a") + [Test("b", ["unit", "gaps"], command=[METER])],
                       Want({"unit": "PASS", "gaps": "PASS"}, cpu={"unit": 3.75, "gaps": 2.5},
                            unmeasured={"unit": 0, "gaps": 0}, unnamed=["not measured"]),
                       {"a": figure("a", 1.25), "b": figure("b", 2.5)})),
        ("fails", Case(junit(case("a", "run"), case("b", "run"), case("u", "run")),   # m: no result at all
                       unit("a", "b", "m") + [Test("u", ["unit"], command=["/b/client/tests/tlsnb_units"])],
                       Want({"unit": "FAIL"}, cpu={"unit": 1.25}, unmeasured={"unit": 3},
                            named=["(3 not measured)", "tlsnb_units 1", "no figure written (killed?): b, m"]),
                       {"a": figure("a", 1.25), "b": "{not json", "zz": figure("zz", 9.0)})),
    ],
}


def all_cases(folder: Path) -> list[tuple[str, str, object]]:
    return [(form, f"{form}/{name}", lambda c=c: judged(c, folder)) for form, rows in CASES.items() for name, c in rows]


def main() -> int:
    return selftest.run("harness_lab_gate", __doc__, lambda ns, tmp: all_cases(tmp))


if __name__ == "__main__":
    sys.exit(main())
