"""mutants/mutants.toml: load it and refuse anything malformed before a single build.

A malformed row (unknown or missing key, a gate row that is not LABEL:CASE, a verdict that
is not killed or survived, a source outside client/, a `find` that does not occur exactly
once in code) raises RowError naming the file and line; the runner exits 2 with that line.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from harness.rows import RowError, TomlRow, load_toml

VERDICTS = ("killed", "survived")
SCHEMA = {"name": (str, True), "file": (str, True), "find": (str, True), "replace": (str, True),
          "killer": (str, True), "expect": (str, True), "breaks": (str, True), "reason": (str, True),
          "also": (dict, False)}
GATE_ROW = re.compile(r"^[a-z]+:\S+$")
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
        if in_comment(text, starts[0]):
            raise RowError(f"{self.where}: {self.name}: `find` occurs in {self.file} only inside a comment")
        return text.replace(self.find, self.replace)


def in_comment(text: str, offset: int) -> bool:
    """True when OFFSET of a C++ source lies inside a comment (string literals are skipped)."""
    for m in COMMENT.finditer(text):
        if m.start() <= offset < m.end():
            return m.group(0).startswith("/")
        if m.start() > offset:
            break
    return False


def load(path: Path, root: Path) -> list[Mutant]:
    mutants = []
    for row in load_toml(path, "mutant", SCHEMA):
        where = row.where()
        m = Mutant(where=where, also=dict(row.get("also", {})), **{k: v for k, v in row.fields.items() if k != "also"})
        if not re.fullmatch(r"[a-z0-9_]+", m.name):
            raise row.error("name", f"name {m.name!r} is not [a-z0-9_]+")
        if not re.fullmatch(r"client/[a-z0-9_]+\.cc", m.file) or not (root / m.file).is_file():
            raise row.error("file", f"file {m.file!r} is not a client/*.cc source (headers are not relinked)")
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
