"""A client under test's side of the matrix: where it differs from the reference, and why.

clients/NAME/matrix.toml holds one [[row]] per matrix row where the client's observed cells
differ from the reference's recorded ones (tlsnb, memory-BIO transport). A row absent there
must come out exactly as the reference's. Keys:

    name   the matrix row
    got    what the client shows: an outcome, `skip` (it exits 89 for this row), or a table by
           version ("1.2") or version and server ("1.2 lab") as in rows.toml; an outcome may be
           alternatives, "A|B": a race the client's library does not settle, each one observed
           (--update keeps them while what it sees is one of them)
    kind   bug | policy | limit: whose fault the difference is
    why    the reason, in words (written by a person: --update leaves it empty, and a cell
           whose recorded difference has no reason fails)

`run_matrix.py --client NAME --update` rewrites `got` from observation and keeps kind and why.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from harness.clients import KINDS
from harness.rows import RowError, load_toml

SKIP = "skip"
SCHEMA = {"name": (str, True), "got": (object, True), "kind": (str, True), "why": (str, True)}
HEADER = """# Where this client's matrix cells differ from the reference's (tlsnb), one [[row]] each; a row
# not here comes out as tlsnb's. got: an outcome, `skip` (exit 89) or a table by "1.2" / "1.2 lab";
# "A|B" is a race the library does not settle, each alternative observed.
# kind: bug | policy | limit. why: the reason. `got` is OBSERVED: run_matrix.py --client NAME --update
# rewrites it and keeps kind and why; a new difference is written with kind and why empty, and
# fails until a person writes them.
"""


@dataclass
class Difference:
    name: str
    got: object
    kind: str
    why: str
    where: str

    def expected(self, version: str, server: str) -> Optional[str]:
        if isinstance(self.got, dict):
            return self.got.get(f"{version} {server}", self.got.get(version))
        return self.got


class ClientRecord:
    """clients/NAME/matrix.toml, loaded (a missing file: no difference recorded yet)."""

    def __init__(self, path: Path, row_names: set[str]):
        self.path = path
        self.rows: dict[str, Difference] = {}
        if not path.is_file():
            return
        for row in load_toml(path, "row", SCHEMA):
            if row.name not in row_names:
                raise row.error("name", f"{row.name!r} is not a row of matrix/rows.toml")
            if row.get("kind") not in (*KINDS, ""):
                raise row.error("kind", f"kind must be one of {', '.join(KINDS)}")
            got = row.get("got")
            if not isinstance(got, (str, dict)):
                raise row.error("got", "got must be an outcome or a table of outcomes")
            self.rows[row.name] = Difference(row.name, got, row.get("kind"), row.get("why"), row.where())

    def expected(self, row_name: str, version: str, server: str, reference: Optional[str]) -> tuple[Optional[str], Optional[Difference]]:
        """What the client must show in a cell: its recorded difference, else the reference's."""
        diff = self.rows.get(row_name)
        if diff is not None:
            return diff.expected(version, server), diff
        return reference, None

    def write(self, order: list[str], observed: dict[str, object]) -> None:
        """Rewrite the file: OBSERVED gives each observed row's collapsed value, or None when the
        row came out as the reference's (its entry goes). Rows not observed keep their entry."""
        for name, got in observed.items():
            if got is None:
                self.rows.pop(name, None)
            else:
                old = self.rows.get(name)
                self.rows[name] = Difference(name, got, old.kind if old else "", old.why if old else "", "")
        blocks = []
        for name in [n for n in order if n in self.rows]:
            d = self.rows[name]
            blocks.append(f"[[row]]\nname = {json.dumps(name)}\ngot = {toml_value(d.got)}\n"
                          f"kind = {json.dumps(d.kind)}\nwhy = {json.dumps(d.why)}\n")
        self.path.write_text(HEADER + "\n" + "\n".join(blocks))


def toml_value(value) -> str:
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()) + " }"
    return json.dumps(value)


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
