"""harness/units.py judged (label unit): a GoogleTest program's report read as the lab's tally, on
fake programs written here (a shell script that lists cases and writes the XML a real one would).

A case listed and never reported, a failure in the report, a nonzero exit after every case passed
(LeakSanitizer's), a case reported and never listed: each must fail the gate; a clean report must
pass it with one line a case, and a skip is a skip.

    /usr/bin/python3 -m harness.tests.test_units
"""
from __future__ import annotations

import contextlib
import io
import os
import stat
import sys
import tempfile
from pathlib import Path

from harness import units

LIST = "A.\n  one\n  two\nP/B.\n  three/0  # GetParam() = 0\n"
CASE = '<testcase name="{n}" classname="{c}" status="run" result="{r}">{body}</testcase>'


def program(folder: Path, cases: list[tuple[str, str, str, str]], exit_status: int = 0) -> Path:
    """A fake GoogleTest program: CASES are (classname, name, result, body) of its XML report."""
    xml = "<testsuites>" + "".join(CASE.format(c=c, n=n, r=r, body=b) for c, n, r, b in cases) + "</testsuites>"
    path = folder / "fake_units"
    path.write_text(f"""#!/bin/sh
if [ "$1" = --gtest_list_tests ]; then printf '{LIST}'; exit 0; fi
out=${{1#--gtest_output=xml:}}
cat > "$out" <<'XML'
{xml}
XML
echo "some stderr of the program" >&2
exit {exit_status}
""")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def run(path: Path) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        rc = units.main([str(path), "--prefix", "x."])
    return rc, out.getvalue()


def main() -> int:
    good = [("A", "one", "completed", ""), ("A", "two", "completed", ""), ("P/B", "three/0", "completed", "")]
    failing = [("A", "one", "completed", '<failure message="a.cc:3 Expected 1 got 2"/>')] + good[1:]
    skipped = good[:2] + [("P/B", "three/0", "skipped", "<skipped/>")]
    cases = [  # (what, report, exit, rc wanted, text wanted)
        ("every case passed", good, 0, 0, "PASS x.P/B.three/0"),
        ("a case failed", failing, 1, 1, "FAIL x.A.one: a.cc:3 Expected 1 got 2"),
        ("a case listed, never reported", good[:2], 0, 1, "FAIL x.P/B.three/0: listed by the program, never reported"),
        ("exit 1 after every case passed", good, 1, 1, "FAIL exit: exit 1: some stderr of the program"),
        ("a case reported, never listed", good + [("A", "extra", "completed", "")], 0, 1,
         "FAIL x.A.extra: reported, never listed"),
        ("a skip", skipped, 0, 0, "SKIP x.P/B.three/0"),
    ]
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for what, report, status, want_rc, want in cases:
            rc, text = run(program(Path(tmp), report, status))
            ok = rc == want_rc and want in text
            bad += not ok
            print(f"{'PASS' if ok else 'FAIL'} {what}" + ("" if ok else f": exit {rc}, wanted {want_rc} and {want!r} in:\n{text}"))
    print(f"test_units: {len(cases) - bad} passed, {bad} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
