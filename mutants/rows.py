"""mutants/mutants.toml: load it and refuse anything malformed before a single build.

A malformed row (unknown or missing key, a gate row that is not LABEL:CASE, a verdict that
is not killed or survived, a source that is neither a client/*.cc nor a harness/*.py, a `find`
that does not occur exactly once in code, a harness/ mutant that does not compile or names a
row that is not one of the library's self-tests) raises RowError naming the file and line; the
runner exits 2 with that line.
"""
from __future__ import annotations

import io
import itertools
import re
import tokenize
from dataclasses import dataclass, field
from pathlib import Path

from harness.rows import RowError, TomlRow, load_toml

VERDICTS = ("killed", "survived")
SCHEMA = {"name": (str, True), "file": (str, True), "find": (str, True), "replace": (str, True),
          "killer": (str, True), "expect": (str, True), "breaks": (str, True), "reason": (str, True),
          "also": (dict, False)}
GATE_ROW = re.compile(r"^[a-z]+:\S+$")
# A mutant of the lab library (harness/*.py) is killed by one of its self-tests: unit:harness_judge is
# `python3 -m harness.tests.test_judge`, run from a mutated copy of harness/ (run_mutants.py).
HARNESS_FILE = re.compile(r"harness/[a-z0-9_]+\.py")
HARNESS_TEST = re.compile(r"^unit:harness_([a-z0-9_]+)$")
COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", re.S)


@dataclass
class Mutant:
    name: str
    where: str           # file:line of the row, for messages
    file: str            # relative to the repository, e.g. client/attempt.cc
    find: str
    replace: str
    killer: str          # the gate row that must kill it (LABEL:CASE)
    expect: str          # killed | survived, as observed
    breaks: str
    reason: str
    also: dict[str, str] = field(default_factory=dict)  # other gate rows and their observed verdicts

    @property
    def in_harness(self) -> bool:
        """A mutant of the lab library, judged by its self-tests, not a client source relinked."""
        return self.file.startswith("harness/")

    def cases(self) -> list[tuple[str, str]]:
        """(gate row, expected verdict), the killer first."""
        return [(self.killer, self.expect), *self.also.items()]

    def mutated_text(self, root: Path) -> str:
        """The source with the edit applied; RowError unless `find` occurs exactly once, in code."""
        source = root / self.file
        try:
            text = source.read_text()
        except OSError as e:
            raise RowError(f"{self.where}: {self.name}: cannot read {self.file}: {e.strerror}")
        starts = [m.start() for m in re.finditer(re.escape(self.find), text)]
        if len(starts) != 1:
            raise RowError(f"{self.where}: {self.name}: `find` occurs {len(starts)} times in {self.file} "
                           f"(must be exactly once: the patch no longer applies)")
        if (in_prose if self.in_harness else in_comment)(text, starts[0]):
            raise RowError(f"{self.where}: {self.name}: `find` occurs in {self.file} only inside a comment")
        mutated = text.replace(self.find, self.replace)
        if self.in_harness:
            try:  # a mutant that cannot be imported would be "killed" by its own syntax
                compile(mutated, self.file, "exec")
            except SyntaxError as e:
                raise RowError(f"{self.where}: {self.name}: the mutated {self.file} does not compile: {e}")
        return mutated


def in_comment(text: str, offset: int) -> bool:
    """True when OFFSET of a C++ source lies inside a comment (string literals are skipped)."""
    for m in COMMENT.finditer(text):
        if m.start() <= offset < m.end():
            return m.group(0).startswith("/")
        if m.start() > offset:
            break
    return False


def in_prose(text: str, offset: int) -> bool:
    """True when OFFSET of a Python source lies in a comment or a docstring (a string that stands
    as a statement alone): expect.py's docstring spells every term its code judges."""
    starts = [0, *itertools.accumulate(map(len, text.splitlines(keepends=True)))]
    tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    code = [t for t in tokens if t.type not in (tokenize.NL, tokenize.COMMENT)]
    for t in tokens:
        if starts[t.start[0] - 1] + t.start[1] <= offset < starts[t.end[0] - 1] + t.end[1]:
            if t.type != tokenize.STRING:
                return t.type == tokenize.COMMENT
            i = code.index(t)
            before = code[i - 1].type if i else tokenize.NEWLINE
            alone = before in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT)
            return alone and code[i + 1].type == tokenize.NEWLINE
    return False


def harness_module(gate_row: str) -> str:
    """The module a harness/ mutant's row runs: unit:harness_judge is harness.tests.test_judge."""
    m = HARNESS_TEST.match(gate_row)
    return f"harness.tests.test_{m[1]}" if m else ""


def check_file(m: Mutant, row: TomlRow, root: Path) -> None:
    """A client/*.cc source (relinked), or a harness/*.py module whose rows are the library's self-tests."""
    if not (re.fullmatch(r"client/[a-z0-9_]+\.cc", m.file) or HARNESS_FILE.fullmatch(m.file)) \
            or not (root / m.file).is_file():
        raise row.error("file", f"file {m.file!r} is neither a client/*.cc source (headers are not relinked) "
                                f"nor a harness/*.py module")
    for gate_row, _ in m.cases() if m.in_harness else []:
        module = harness_module(gate_row)
        if not module or not (root / (module.replace(".", "/") + ".py")).is_file():
            raise row.error("killer", f"{gate_row!r}: a harness/ mutant is killed by a self-test of the library, "
                                      f"unit:harness_NAME (harness/tests/test_NAME.py)")


def load(path: Path, root: Path) -> list[Mutant]:
    mutants = []
    for row in load_toml(path, "mutant", SCHEMA):
        where = row.where()
        m = Mutant(where=where, also=dict(row.get("also", {})), **{k: v for k, v in row.fields.items() if k != "also"})
        if not re.fullmatch(r"[a-z0-9_]+", m.name):
            raise row.error("name", f"name {m.name!r} is not [a-z0-9_]+")
        check_file(m, row, root)
        if m.find == m.replace or not m.find:
            raise row.error("find", "find and replace must differ, find must not be empty")
        for gate_row, verdict in m.cases():
            if not GATE_ROW.match(gate_row):
                raise row.error("killer", f"{gate_row!r} is not a gate row LABEL:CASE (faults:PartialIo/bio)")
            if verdict not in VERDICTS:
                raise row.error("expect", f"verdict {verdict!r} for {gate_row} is not killed or survived")
        if m.killer in m.also:
            raise row.error("also", f"the killer {m.killer} is repeated under also")
        m.mutated_text(root)  # the patch must still apply
        mutants.append(m)
    return mutants
