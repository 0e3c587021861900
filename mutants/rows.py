"""mutants/mutants.toml: load it and refuse anything malformed before a single build.

A malformed row (unknown or missing key, unknown check, a verdict that is not killed or
survived, a source outside client/, a `find` that does not occur exactly once) raises
RowError naming the file and line; the runner exits 2 with that one line.
"""
from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

VERDICTS = ("killed", "survived")
# key -> required
ROW_KEYS = {"name": True, "file": True, "find": True, "replace": True, "killer": True, "expect": True,
            "breaks": True, "reason": True, "also": False}


class RowError(Exception):
    """Malformed input: the message starts with file:line."""


@dataclass
class Mutant:
    name: str
    where: str           # file:line of the row, for messages
    file: str            # relative to the repository, e.g. client/attempt.cc
    find: str
    replace: str
    killer: str          # the check that must kill it
    expect: str          # killed | survived, as observed
    breaks: str
    reason: str
    also: dict[str, str] = field(default_factory=dict)  # other checks and their observed verdicts

    def cases(self) -> list[tuple[str, str]]:
        """(check, expected verdict), the killer first."""
        return [(self.killer, self.expect), *self.also.items()]

    def mutated_text(self, root: Path) -> str:
        """The source with the edit applied; RowError unless `find` occurs exactly once."""
        source = root / self.file
        try:
            text = source.read_text()
        except OSError as e:
            raise RowError(f"{self.where}: {self.name}: cannot read {self.file}: {e.strerror}")
        count = text.count(self.find)
        if count != 1:
            raise RowError(f"{self.where}: {self.name}: `find` occurs {count} times in {self.file} "
                           f"(must be exactly once: the patch no longer applies)")
        return text.replace(self.find, self.replace)


def _row_lines(text: str) -> list[int]:
    return [i + 1 for i, line in enumerate(text.splitlines()) if re.match(r"\s*\[\[mutant\]\]\s*(#.*)?$", line)]


def load(path: Path, root: Path, checks: set[str]) -> list[Mutant]:
    try:
        text = path.read_text()
        data = tomllib.loads(text)
    except OSError as e:
        raise RowError(f"{path}:1: {e.strerror}")
    except tomllib.TOMLDecodeError as e:
        raise RowError(f"{path}: {e}")
    unknown_top = set(data) - {"mutant"}
    if unknown_top:
        raise RowError(f"{path}:1: unknown table {sorted(unknown_top)[0]!r} (only [[mutant]] rows)")
    lines = _row_lines(text)
    rows = data.get("mutant", [])
    mutants, seen = [], set()
    for i, row in enumerate(rows):
        line = lines[i] if i < len(lines) else 1
        where = f"{path}:{line}"
        for key in row:
            if key not in ROW_KEYS:
                raise RowError(f"{where}: unknown key {key!r}")
        for key, required in ROW_KEYS.items():
            if required and key not in row:
                raise RowError(f"{where}: missing key {key!r}")
        for key in ROW_KEYS:
            if key != "also" and key in row and not isinstance(row[key], str):
                raise RowError(f"{where}: {key} must be a string")
        m = Mutant(where=where, also=dict(row.get("also", {})), **{k: v for k, v in row.items() if k != "also"})
        if m.name in seen or not re.fullmatch(r"[a-z0-9_]+", m.name):
            raise RowError(f"{where}: name {m.name!r} is repeated or not [a-z0-9_]+")
        seen.add(m.name)
        if not re.fullmatch(r"client/[a-z0-9_]+\.cc", m.file) or not (root / m.file).is_file():
            raise RowError(f"{where}: {m.name}: file {m.file!r} is not a client/*.cc source (headers are not relinked)")
        if m.find == m.replace or not m.find:
            raise RowError(f"{where}: {m.name}: find and replace must differ, find must not be empty")
        for check, verdict in m.cases():
            if check not in checks:
                raise RowError(f"{where}: {m.name}: unknown check {check!r} (known: {', '.join(sorted(checks))})")
            if verdict not in VERDICTS:
                raise RowError(f"{where}: {m.name}: verdict {verdict!r} for {check} is not killed or survived")
        if m.killer in m.also:
            raise RowError(f"{where}: {m.name}: the killer {m.killer} is repeated under also")
        m.mutated_text(root)  # the patch must still apply
        mutants.append(m)
    return mutants
