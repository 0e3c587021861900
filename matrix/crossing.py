"""A client under test's side of the matrix: where it differs from the reference, and why.

clients/NAME/matrix.toml is the client's record (harness/record.py): one [[difference]] per matrix
row where its observed cells differ from the reference's recorded ones (tlsnb, memory-BIO
transport), `case` the row's name. A row absent there must come out exactly as the reference's.
`got` is what the client shows: an outcome, `skip` (it exits 89 for this row), or a table by
version ("1.2") or version and server ("1.2 lab") as in rows.toml; an outcome may be alternatives,
"A|B": a race the client's library does not settle, each one observed (--update keeps them while
what it sees is one of them).

`run_matrix.py --client NAME --update` rewrites `got` from observation and keeps kind and why.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

from harness.clients import Profile
from harness.outcomes import OutcomeNames, UnknownOutcome
from harness.record import SKIP, Record
from harness.rows import RowError
from matrix.rows import SERVERS, VERSIONS, cell_value

NOTE = """got: the cells that differ from the row's: one outcome (every cell), skip (exit 89) or a table by
"1.2" / "1.2 lab" (as rows.toml's bio and fd); "A|B" is a race the library does not settle, each observed."""


def cells_of(row, transports) -> list[str]:
    """Every cell a client is asked of ROW, as "TRANSPORT VERSION SERVER" (bio for a client without
    --transport: the reference it is held to)."""
    return [f"{t} {v} {s}" for t in transports for v in row.versions for s in row.servers]


def merge_cells(base: dict, got, without=()) -> dict:
    """A row's cells (BASE) with a record's GOT: one outcome for every cell, or a table whose "1.2"
    gives each server's cell of that version and "1.2 lab" one server's (rows.py's cell_value)."""
    table = dict(base)
    for cell in table:
        value = cell_value(got, *cell.split()[1:])
        if value is not None:
            table[cell] = value
    return table


def _is_cells(value) -> bool:
    return isinstance(value, dict) and all(len(k.split()) == 3 for k in value)


def same_cells(a, b) -> bool:
    """Two expectations of a row alike: each the cells' table ("bio 1.2 lab") or collapse()'s form."""
    if _is_cells(a) and _is_cells(b):
        return a == b
    cells, other = (a, b) if _is_cells(a) else (b, a)
    return _is_cells(cells) and all(cell_value(other, *c.split()[1:]) == v for c, v in cells.items())


def minimal_cells(base: dict, full) -> tuple[object, list]:
    """What a record holds for a row observed to show FULL (collapse()'s form) where BASE is what the row
    and the globs give: the cells that differ, as one outcome when they are every cell and agree."""
    per = {cell: cell_value(full, *cell.split()[1:]) for cell in base}
    differ = {cell.split(" ", 1)[1]: per[cell] for cell in base if per[cell] != base[cell]}
    pairs = {cell.split(" ", 1)[1] for cell in base}
    if set(differ) == pairs and len(set(differ.values())) == 1:
        return next(iter(differ.values())), []
    table: dict[str, str] = {}
    for version in dict.fromkeys(p.split()[0] for p in sorted(pairs)):
        mine = {p: differ[p] for p in pairs if p.split()[0] == version and p in differ}
        if mine and len(mine) == sum(p.split()[0] == version for p in pairs) and len(set(mine.values())) == 1:
            table[version] = next(iter(mine.values()))
        else:
            table.update(dict(sorted(mine.items())))
    return table, []


def client_record(client: Profile, rows: Optional[dict], names: OutcomeNames,
                  transports: tuple = ("bio",)) -> Record:
    """CLIENT's matrix.toml, every got one the matrix can judge (a missing file: no difference yet).
    ROWS: the rows by name (None: any case; harness/tests/test_records.py checks them itself), each
    case's reference its cells for TRANSPORTS."""

    def check_got(got: object) -> None:
        table = got if isinstance(got, dict) else {"": got}
        cells = {*VERSIONS, *(f"{v} {s}" for v in VERSIONS for s in SERVERS)}
        for key, text in table.items():
            if key and key not in cells:
                raise ValueError(f"got's key {key!r} is not among {', '.join(sorted(cells))}")
            if not isinstance(text, str):
                raise ValueError("got must be an outcome or a table of outcomes")
            for outcome in text.split("|") if text != SKIP else []:
                try:
                    names.parse(outcome)
                except UnknownOutcome as e:
                    raise ValueError(str(e)) from e

    def reference(case: str) -> dict:
        row = rows[case]
        return {cell: row.expected(*cell.split()) for cell in cells_of(row, transports)}

    return Record(client.room / "matrix.toml", f"matrix {client.name}", check_got=check_got,
                  cases=None if rows is None else list(rows), merge=merge_cells,
                  reference=None if rows is None else reference, same=same_cells, minimal=minimal_cells,
                  note=NOTE)


def write_results(path: Path, client, cells: list[dict]) -> None:
    """One client's observed cells for the results page (matrix/results.py)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"client": client.name, "library": client.library, "reference": client.reference,
                                "cells": cells}, indent=1))


def load_results(folder: Path) -> list[dict]:
    found = []
    for p in sorted(folder.glob("*.json")):
        try:
            found.append(json.loads(p.read_text()))
        except ValueError as e:
            raise RowError(f"{p}:1: not a results file ({e})") from e
    return sorted(found, key=lambda r: (not r["reference"], r["client"]))
