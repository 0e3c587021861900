"""Two runs' JUnit folders compared case by case: the same cases, the same verdicts?

    /usr/bin/python3 -m harness.junit_compare BUILD_A/junit BUILD_B/junit

Every <testcase> of every gate's file (harness/junit.py; CTest's own ctest*.xml are left out: they
name tests, not cases), keyed by its file and its name, with its verdict PASS, FAIL or SKIP. Prints
the counts, the cases only one run has and the cases whose verdict differs; exit 0 when there are
none, 1 otherwise, 2 on a folder that is missing or holds no case. One tree gives one verdict: a
quiet run and a loaded one of the same tree (`./run_all.sh --stress 1 --stress-cores 2`) must agree.
"""
from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from pathlib import Path


def cases(folder: Path) -> dict[tuple[str, str], str]:
    out = {}
    for path in sorted(folder.glob("*.xml")):
        if path.name.startswith("ctest"):
            continue
        try:
            tree = ET.parse(path)
        except ET.ParseError as e:
            raise SystemExit(f"junit_compare: {path}: not XML ({e})")
        for case in tree.iter("testcase"):
            verdict = "FAIL" if case.find("failure") is not None or case.find("error") is not None \
                else "SKIP" if case.find("skipped") is not None else "PASS"
            out[(path.stem, case.get("name") or "")] = verdict
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    runs = []
    for arg in argv:
        folder = Path(arg)
        found = cases(folder) if folder.is_dir() else {}
        if not found:
            print(f"junit_compare: {folder}: no JUnit case there", file=sys.stderr)
            return 2
        runs.append(found)
    a, b = runs
    only_a, only_b = sorted(set(a) - set(b)), sorted(set(b) - set(a))
    differ = sorted((k, a[k], b[k]) for k in set(a) & set(b) if a[k] != b[k])
    print(f"cases: {len(a)} in {argv[0]}, {len(b)} in {argv[1]}")
    for what, keys in ((f"only in {argv[0]}", only_a), (f"only in {argv[1]}", only_b)):
        for gate, name in keys:
            print(f"  {what}: {gate}: {name}")
    for (gate, name), va, vb in differ:
        print(f"  verdict differs: {gate}: {name}: {va} then {vb}")
    same = not (only_a or only_b or differ)
    print("the same cases, the same verdicts" if same else
          f"{len(only_a) + len(only_b)} case(s) in one run only, {len(differ)} verdict(s) differ")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
