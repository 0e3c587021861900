"""The one loader for the lab's row files, TOML and TSV. Every error names file and line.

    rows = load_case_file(Path("faults/faults.toml"), CaseRow)   # [[case]] tables as dataclass rows, .where = "file:line"
    rows = load_toml(Path("matrix/rows.toml"), "row", MATRIX_KEYS)   # TomlRow: .fields, .line, .key_lines
    rows = load_tsv(Path("pkits/tests.tsv"), PkitsTest)           # dataclass rows of a TSV record

A malformed file raises RowError; a gate turns it into one line on stderr and exit 2
(`bad_input`), before anything runs.
"""
from __future__ import annotations

import dataclasses
import os
import re
import sys
import tomllib
from dataclasses import dataclass, field
import fnmatch
from pathlib import Path
from typing import Optional


class RowError(Exception):
    """Malformed input: the message starts with file:line."""


def bad_input(program: str, error: Exception | str) -> None:
    """One line on stderr, exit 2: the lab's answer to a malformed row, flag or file."""
    print(f"{program}: {error}", file=sys.stderr)
    raise SystemExit(2)


def require_files(program: str, paths, build_hint: str) -> None:
    """bad_input for the first of PATHS that does not exist: the build's products a script needs."""
    for path in paths:
        if not os.path.exists(path):
            bad_input(program, f"no such file {str(path)!r} ({build_hint})")


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError as e:
        raise RowError(f"{path}:1: {e.strerror}") from e


# ---- TSV: a header line naming the columns, `#` comments, one tab-separated row a line -------------

def load_tsv(path: Path, row_type) -> list:
    """The rows of a TSV record as `row_type` dataclasses (every field but `where` is a column;
    `where` gets "file:line"). A missing or extra cell, or a header that is not the columns,
    raises RowError naming file and line."""
    names = [f.name for f in dataclasses.fields(row_type) if f.name != "where"]
    numbered = [(n, line) for n, line in enumerate(_read(path).splitlines(), 1)
                if line.strip() and not line.startswith("#")]
    if not numbered:
        raise RowError(f"{path}:1: no header line")
    header_no, header = numbered[0]
    columns = header.split("\t")
    if columns != names:
        raise RowError(f"{path}:{header_no}: columns {columns} (expected {names})")
    rows = []
    for n, line in numbered[1:]:
        cells = line.split("\t")
        if len(cells) != len(names):
            raise RowError(f"{path}:{n}: {len(cells)} cells, expected {len(names)} ({', '.join(names)})")
        empty = [name for name, cell in zip(names, cells) if not cell.strip()]
        if empty:
            raise RowError(f"{path}:{n}: empty cell {empty[0]!r} (write - for none)")
        row = row_type(**dict(zip(names, cells)))
        if "where" in {f.name for f in dataclasses.fields(row_type)}:
            row.where = f"{path}:{n}"
        rows.append(row)
    return rows


def unique(rows: list, key: str = "case") -> None:
    """RowError when two rows share a name."""
    seen: dict[str, str] = {}
    for row in rows:
        name = getattr(row, key)
        if name in seen:
            raise RowError(f"{row.where}: {key} {name!r} is defined twice (first at {seen[name]})")
        seen[name] = row.where


def expand_globs(patterns: list[str], names: list[str]) -> tuple[list[str], list[str]]:
    """PATTERNS with each glob (`names-*`, `*/fd`, `4.4.?`: fnmatch's *, ? and [...]) replaced by the
    NAMES it matches, in NAMES' order; a plain name is kept as given. Also the globs that match
    nothing (each gate refuses them, as it refuses a name it does not know)."""
    out: list[str] = []
    empty: list[str] = []
    for pattern in patterns:
        if not any(c in pattern for c in "*?["):
            out.append(pattern)
            continue
        hits = [n for n in names if fnmatch.fnmatchcase(n, pattern)]
        if not hits:
            empty.append(pattern)
        out += [n for n in hits if n not in out]
    return out, empty


# ---- TOML: [[table]] rows, each key checked against a schema -----------------------------------------

@dataclass
class TomlRow:
    fields: dict
    line: int                                   # the [[table]] header's line
    path: Path
    key_lines: dict[str, int] = field(default_factory=dict)
    names: tuple[str, ...] = ("name",)          # the keys that name the row in an error

    @property
    def name(self) -> str:
        given = [str(self.fields[k]) for k in self.names if k in self.fields]
        return " | ".join(given) if given else "?"

    def get(self, key: str, default=None):
        return self.fields.get(key, default)

    def where(self, key: Optional[str] = None) -> str:
        return f"{self.path}:{self.key_lines.get(key, self.line) if key else self.line}"

    def error(self, key: Optional[str], message: str) -> RowError:
        return RowError(f"{self.where(key)}: {self.name}: {message}")


def _key_lines(text: str, table: str) -> list[tuple[int, dict[str, int]]]:
    """For each [[table]] in order: its header line and the line of each key."""
    rows: list[tuple[int, dict[str, int]]] = []
    header = re.compile(rf"\s*\[\[{re.escape(table)}\]\]\s*(#.*)?$")
    for number, line in enumerate(text.splitlines(), 1):
        if header.match(line):
            rows.append((number, {}))
        elif rows and (m := re.match(r"\s*([A-Za-z0-9_\"]+)\s*=", line)):
            rows[-1][1].setdefault(m.group(1).strip('"'), number)
    return rows


def load_toml(path: Path, table: str, schema: dict[str, tuple[type, bool]],
              names: tuple[str, ...] = ("name",)) -> list[TomlRow]:
    """The [[table]] rows of a TOML file. SCHEMA: key -> (type, required); `object` accepts any type.
    Unknown keys, missing keys, wrong types, top-level tables other than TABLE, repeated names:
    RowError naming file, line and the row (by its NAMES keys' values)."""
    text = _read(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"at line (\d+)", str(e))
        raise RowError(f"{path}:{m.group(1) if m else 1}: {e}") from e
    extra = set(data) - {table}
    if extra:
        raise RowError(f"{path}:1: unknown top-level keys {sorted(extra)} (only [[{table}]] rows)")
    lines = _key_lines(text, table)
    rows = [TomlRow(r, lines[i][0] if i < len(lines) else 1, path, lines[i][1] if i < len(lines) else {}, names)
            for i, r in enumerate(data.get(table, []))]
    seen: dict[str, int] = {}
    for row in rows:
        check_keys(row, schema)
        if "name" in schema:
            if row.name in seen:
                raise row.error("name", f"defined twice (first at line {seen[row.name]})")
            seen[row.name] = row.line
    return rows


def check_keys(row: TomlRow, schema: dict[str, tuple[type | tuple[type, ...], bool]]) -> None:
    for key, value in row.fields.items():
        if key not in schema:
            raise row.error(key, f"unknown key {key!r} (known: {', '.join(schema)})")
        kind, _ = schema[key]
        if kind is not object and not isinstance(value, kind):
            names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
            raise row.error(key, f"{key} must be {names}, got {value!r}")
    for key, (_, required) in schema.items():
        if required and key not in row.fields:
            raise row.error(None, f"missing {key!r}")


def load_table(path: Path) -> dict:
    """A TOML file read whole (a profile): RowError with file:line when it does not parse."""
    text = _read(path)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"at line (\d+)", str(e))
        raise RowError(f"{path}:{m.group(1) if m else 1}: {e}") from e


# ---- case files: one [[case]] table a case, read into a row dataclass --------------------------------

CASE_TABLE = "case"
NONE = "-"          # a row's text for a key left out that has a default of none


@dataclass(frozen=True)
class CaseKey:
    """How one field of a case row is written in its [[case]] table."""
    toml: Optional[str] = None      # the key (default: the field's name)
    default: Optional[str] = None   # the row's text when the key is left out (None: the key is required)
    join: Optional[str] = None      # an array's separator in the row's text (None: a string only)
    array_only: bool = False        # with join: an array, never a string (a list: transports, peers)
    item: type = str                # the type of an array's items


def case_key(**how) -> dataclasses.Field:
    """A case row's field (`name: str = case_key(default=NONE)`): how CaseKey says it is written."""
    return field(metadata={"case_key": CaseKey(**how)})


def case_keys(row_type) -> dict[str, tuple[str, CaseKey]]:
    """TOML key -> (the row field it fills, how it is written), in the row's field order."""
    return {(how := f.metadata.get("case_key", CaseKey())).toml or f.name: (f.name, how)
            for f in dataclasses.fields(row_type) if f.name != "where"}


def _case_text(row: TomlRow, key: str, how: CaseKey) -> str:
    """The row's text of KEY: the string, or the array's items joined; HOW's default when left out."""
    if key not in row.fields:
        return how.default
    value = row.fields[key]
    if isinstance(value, list):
        if not value:
            raise row.error(key, f"{key} is an empty array (leave the key out for none)")
        bad = [v for v in value if type(v) is not how.item]
        if bad:
            raise row.error(key, f"{key}'s items must be {how.item.__name__}, got {bad[0]!r}")
        value = how.join.join(str(v) for v in value)
    if not value.strip():
        raise row.error(key, f"{key} is empty (leave the key out for none)")
    if value == NONE and how.default == NONE:
        raise row.error(key, f"{key} = \"-\": leave the key out for none")
    return value


def load_case_file(path: Path, row_type, names: tuple[str, ...] = ("name",)) -> list:
    """The [[case]] tables of PATH as ROW_TYPE dataclasses, each field's key written as its CaseKey
    says (`where` gets "file:line" of the table's header). A string is a string; a field with a
    join also takes an array of strings (a long value over lines: joined with JOIN), a list field only
    an array. A key left out takes its default (a required key has none). NAMES: the keys that name
    a case (two cases named alike are refused). Unknown or missing keys, wrong types, empty values,
    `-` written for a default of none: RowError naming file, line and the case."""
    keys = case_keys(row_type)
    schema = {key: (list if how.array_only else (str, list) if how.join else str, how.default is None)
              for key, (_, how) in keys.items()}
    rows = []
    for table in load_toml(path, CASE_TABLE, schema, names=names):
        values = {name: _case_text(table, key, how) for key, (name, how) in keys.items()}
        rows.append(row_type(**values, where=table.where()))
    return rows
