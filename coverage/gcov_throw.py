#!/usr/bin/python3
"""gcov for gcovr, with every exception edge marked (coverage.py's --gcov-executable).

gcov 12 writes `(throw)` after a branch only when its block ran: a block that never ran (in this
object) prints the same edge as a bare `branch N never executed`, so gcovr's
--exclude-throw-branches keeps it, and a twin object that never ran a function (the units' copy
of Attempt::take_record) adds its exception edges back, never taken, to lines the gate did run.
This runs gcov as gcovr asked, then reads gcov's JSON of the same data (which marks every edge)
and rewrites each unmarked exception edge in the .gcov files made as `branch N taken 0 (throw)`.
A line whose branches the two outputs do not list alike is left as gcov wrote it.

    gcov_throw.py GCOV-ARGS...      (as gcov: gcovr runs it)
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

CREATED = re.compile(r"[Cc]reating [`'](.*)'$", re.M)   # gcovr's own pattern for gcov's stdout
SOURCE_LINE = re.compile(r"^\s*[^:\s]+:\s*(\d+):")
NEVER = re.compile(r"^branch\s+(\d+) never executed$")
Marks = dict[str, dict[int, list[bool]]]   # source -> line -> the throw flag of each branch


def json_marks(argv: list[str], cwd: str) -> Marks:
    """gcov's JSON for the same inputs: each line's branches, in order, as throw flags."""
    keep, i = [], 0
    while i < len(argv):
        if argv[i] == "--object-directory" and i + 1 < len(argv):
            keep += argv[i:i + 2]
            i += 2
            continue
        if not argv[i].startswith("-"):
            keep.append(argv[i])
        i += 1
    out = subprocess.run(["gcov", "--json-format", "--stdout", "--branch-probabilities", *keep],
                         capture_output=True, text=True, cwd=cwd).stdout
    marks: Marks = {}
    decoder, pos = json.JSONDecoder(), 0
    while (pos := _skip_space(out, pos)) < len(out):
        doc, pos = decoder.raw_decode(out, pos)
        for f in doc.get("files", []):
            per_line = marks.setdefault(f["file"], {})
            seen: dict[int, int] = {}
            for line in f["lines"]:
                n = line["line_number"]
                seen[n] = seen.get(n, 0) + 1
                per_line.setdefault(n, []).extend(b["throw"] for b in line["branches"])
            for n, functions in seen.items():
                if functions > 1:   # one line in two functions: which branch is whose is not told
                    per_line.pop(n, None)
    return marks


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos].isspace():
        pos += 1
    return pos


def mark_file(path: Path, marks: Marks) -> None:
    """Rewrites the unmarked exception edges of one .gcov file."""
    lines = path.read_text().splitlines(keepends=True)
    source = next((ln.split("Source:", 1)[1].strip() for ln in lines[:5] if "Source:" in ln), "")
    flags = marks.get(source)
    if not flags:
        return
    where: dict[int, list[int]] = {}   # line number -> the indexes of its branch lines
    current = 0
    for i, text in enumerate(lines):
        if m := SOURCE_LINE.match(text):
            current = int(m.group(1))
        elif text.startswith("branch"):
            where.setdefault(current, []).append(i)
    changed = False
    for number, indexes in where.items():
        throws = flags.get(number)
        if throws is None or len(throws) != len(indexes):
            continue
        for i, is_throw in zip(indexes, throws):
            if is_throw and (m := NEVER.match(lines[i].strip())):
                lines[i] = f"branch {m.group(1)} taken 0 (throw)\n"
                changed = True
    if changed:
        path.write_text("".join(lines))


def main(argv: list[str]) -> int:
    real = subprocess.run(["gcov", *argv], capture_output=True, text=True)
    sys.stdout.write(real.stdout)
    sys.stderr.write(real.stderr)
    if real.returncode != 0 or not any(a.endswith((".gcda", ".gcno")) for a in argv):
        return real.returncode   # --help, --version, or a failure: as gcov said
    marks = json_marks(argv, ".")
    for name in CREATED.findall(real.stdout):
        mark_file(Path(name), marks)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
