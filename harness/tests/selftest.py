"""The one main of the lab's self-tests made of (form, case, thunk) triples (test_judge, test_lab_gate,
matrix's and PKITS's test_matching): `--list`, `--only FORM|CASE`, a PASS/FAIL line a case (a thunk
that raises is a failure with its reason, not a stack trace), the count of cases and forms, then the
Gate's last line."""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Callable, Optional

from ..gate import Gate

Case = tuple[str, str, Callable[[], tuple[bool, str]]]   # (form, case id, thunk -> (ok, detail))


def run(name: str, doc: str, make_cases: Callable[[argparse.Namespace, Path], list[Case]],
        extra: Optional[Callable[[argparse.ArgumentParser], None]] = None, note: str = "") -> int:
    """NAME's whole main: its flags (EXTRA adds more), the cases MAKE_CASES builds in a scratch folder, the tally."""
    p = argparse.ArgumentParser(description=doc.splitlines()[0])
    p.add_argument("--only", nargs="*", default=[], help="run only these cases (case ids, or forms: every case of one)")
    p.add_argument("--list", action="store_true", help="print the case ids, run nothing")
    if extra:
        extra(p)
    ns = p.parse_args()
    gate = Gate(name)
    with tempfile.TemporaryDirectory(prefix=f"{name}.") as tmp:
        cases = make_cases(ns, Path(tmp))
        if ns.list:
            print("\n".join(case for _, case, _ in cases))
            return 0
        unknown = [o for o in ns.only if o not in {c for _, c, _ in cases} | {f for f, _, _ in cases}]
        if unknown:
            print(f"{name}: --only {unknown[0]}: no such case or form (--list)", file=sys.stderr)
            return 2
        chosen = [(f, c, t) for f, c, t in cases if not ns.only or f in ns.only or c in ns.only]
        for _, case, thunk in chosen:
            try:
                ok, detail = thunk()
            except Exception as e:  # a judge that blows up is a failure with its reason, not a stack trace
                ok, detail = False, f"raised {e!r}"
            gate.check(case, ok, detail)
    print(f"{name}: {len(chosen)} cases over {len({f for f, _, _ in chosen})} forms{note}", flush=True)
    return gate.finish()


class Captured(Gate):
    """A gate a gate's judging code is run into by a self-test: its verdicts kept, nothing printed, no
    TLSLAB_FAIL_FAST exit (a FAIL is what half of such cases must see)."""

    def __init__(self):
        super().__init__("captured")
        self.seen: list[tuple[str, str, str]] = []   # (PASS|FAIL|SKIP, case, detail)

    def check(self, case: str, ok: bool, detail: str = "") -> bool:
        self.seen.append(("PASS" if ok else "FAIL", case, detail))
        return ok

    def skip(self, case: str, why: str) -> None:
        self.seen.append(("SKIP", case, why))

    def only(self, what: str) -> tuple[str, str]:
        """The one verdict judged (PASS|FAIL|SKIP, its detail), or NONE when there was not exactly one."""
        if len(self.seen) != 1:
            return "NONE", f"{len(self.seen)} verdicts for one {what}: {self.seen}"
        verdict, _, detail = self.seen[0]
        return verdict, detail


def passes(word: str = "") -> tuple[str, str]:
    return ("PASS", word)


def fails(word: str) -> tuple[str, str]:
    return ("FAIL", word)


def skips(word: str) -> tuple[str, str]:
    return ("SKIP", word)


def held_to(want: tuple[str, str], got: tuple[str, str]) -> tuple[bool, str]:
    """GOT's verdict is WANT's, and its line says WANT's word (the right reason)."""
    verdict, word = want
    if got[0] != verdict:
        return False, f"expected {verdict}{' saying ' + repr(word) if word else ''}, got {got[0]}: {got[1][:200]}"
    if word not in got[1]:
        return False, f"{got[0]} without {word!r}: {got[1][:200]}"
    return True, f"{got[0]}: {got[1][:160]}"
