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

from harness.clients import Profile
from harness.outcomes import OutcomeNames, UnknownOutcome
from harness.record import SKIP, Record
from harness.rows import RowError
from matrix.rows import SERVERS, VERSIONS

NOTE = """got: an outcome, skip (exit 89) or a table by "1.2" / "1.2 lab" (as rows.toml's bio and fd);
"A|B" is a race the library does not settle, each alternative observed."""


def client_record(client: Profile, row_names: set[str], names: OutcomeNames) -> Record:
    """CLIENT's matrix.toml, every got one the matrix can judge (a missing file: no difference yet)."""

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

    return Record(client.room / "matrix.toml", f"matrix {client.name}", check_got=check_got, cases=row_names,
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
