"""Recorded differences: where a run was observed to differ from what the lab expects of it, and why.
One format for every gate, one loader, one --update:

    [[difference]]
    case = "names-wrong-host"     # the case, as its gate names it (more identity keys where a gate says so)
    got = "handshake/62"          # OBSERVED: --update rewrites it, in the gate's own language
    kind = "bug"                  # a person's: bug | policy | limit (a gate may name its own kinds)
    why = "..."                   # a person's: the reason, in words

--update rewrites `got` of every case it observed, keeps `kind` and `why`, drops the entry of a case
that came out as expected and keeps the entries of cases it did not run; a new difference is written
with `kind` and `why` empty, and a record with an empty one fails its gate until a person writes them.

    record = Record(room / "pkits.toml", "pkits")      # a missing file: nothing recorded yet
    expected = record.expected(case_id, reference)     # the recorded got, else the reference's
    record.write(order, {case_id: got_or_None, ...})   # --update

Who records with it: the case gates (clients/NAME/{client,faults,hostile,dns}.toml, harness/cases.py),
the matrix (clients/NAME/matrix.toml, matrix/crossing.py) and the operator scan (mutants/survivors.toml,
mutants/scan.py: identity keys file, op, before, after, nth).
"""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Optional

from .rows import RowError, load_toml

KINDS = ("bug", "policy", "limit")
SKIP = "skip"   # the got of a case the client cannot be asked (it exits 89): every gate's word for it
TABLE = "difference"


@dataclass
class Difference:
    case: str                    # the case id (for several identity keys: their values joined by " | ")
    got: object                  # a string, or a table of strings (a gate's cells)
    kind: str
    why: str
    where: str                   # file:line of its entry, "" for one written by --update
    keys: dict = field(default_factory=dict)   # every identity key, case included

    @property
    def explained(self) -> bool:
        return bool(self.kind.strip() and self.why.strip())


def toml_value(value) -> str:
    """A string, number or (nested) table of them as one TOML value (json.dumps quotes as TOML does)."""
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value)


class Record:
    """One record file. WHAT names the gate in the header and in errors; KINDS the kinds a person may
    write; KEYS the identity keys (case alone by default; mutants' survivors: file, op, before, after,
    nth); CHECK_GOT(got) raises ValueError for a got the gate cannot judge; CASES, when given, the case
    ids that exist (an entry for any other fails at load: a renamed case must not leave its record behind).
    OPTIONAL: identity keys an entry may leave out; DEFAULTS: an optional key's value when left out (the
    identity holds it; --update leaves it out again). GROUP: the identity key whose value the entries
    are written grouped by, each group under a generated one-line comment. NOTE: the gate's own lines
    for the header (what its got holds)."""

    def __init__(self, path: Path, what: str, kinds: Iterable[str] = KINDS, keys: tuple[str, ...] = ("case",),
                 check_got: Optional[Callable[[object], None]] = None, cases: Optional[set[str]] = None,
                 optional: tuple[str, ...] = (), defaults: Optional[dict] = None, group: Optional[str] = None,
                 note: str = ""):
        self.path, self.what, self.kinds, self.keys = Path(path), what, tuple(kinds), keys
        self.defaults = dict(defaults or {})
        self.optional = (*optional, *(k for k in self.defaults if k not in optional))
        self.group, self.note = group, note
        self.entries: dict[str, Difference] = {}
        if not self.path.is_file():
            return
        schema = {k: (object, k not in self.optional) for k in keys}
        schema.update({"got": (object, True), "kind": (str, True), "why": (str, True)})
        for row in load_toml(self.path, TABLE, schema, names=keys):
            for k in keys:
                if not isinstance(row.get(k, ""), (str, int)) or isinstance(row.get(k), bool):
                    raise row.error(k, f"{k} must be a string or a number")
            if not isinstance(row.get("got"), (str, dict)):
                raise row.error("got", "got must be a string or a table of them")
            values = {k: row.get(k) for k in keys if row.get(k) is not None}
            case = self.identity(values)
            if cases is not None and case not in cases:
                raise row.error(keys[0], f"{case!r} is not a case of {what}")
            if row.get("kind") not in (*self.kinds, ""):
                raise row.error("kind", f"kind must be one of {', '.join(self.kinds)}")
            if check_got is not None:
                try:
                    check_got(row.get("got"))
                except ValueError as e:
                    raise row.error("got", str(e)) from e
            if case in self.entries:
                raise row.error(keys[0], f"recorded twice (first at {self.entries[case].where})")
            self.entries[case] = Difference(case, row.get("got"), row.get("kind"), row.get("why"), row.where(), values)

    def identity(self, values: dict) -> str:
        """The case id of an entry whose identity keys hold VALUES (a key left out: its default, else "")."""
        given = [str(values.get(k, self.defaults.get(k, ""))) for k in self.keys]
        return " | ".join(given) if len(self.keys) > 1 else given[0]

    def get(self, case: str) -> Optional[Difference]:
        return self.entries.get(case)

    def expected(self, case: str, reference):
        """What a case must show: its recorded got, else REFERENCE; and the difference, if any."""
        diff = self.entries.get(case)
        return (diff.got, diff) if diff else (reference, None)

    def unexplained(self) -> list[Difference]:
        """Entries a person has still to write kind or why for: each fails its gate."""
        return [d for d in self.entries.values() if not d.explained]

    def write(self, order: list[str], observed: dict[str, object], keys: Optional[dict[str, dict]] = None) -> None:
        """--update: OBSERVED gives each observed case's got, or None when it came out as expected (its
        entry goes); cases not observed keep their entries. ORDER: the gate's case order (entries not in
        it follow in their old order). KEYS: the identity keys of a new multi-key case."""
        for case, got in observed.items():
            if got is None:
                self.entries.pop(case, None)
                continue
            old = self.entries.get(case)
            ids = old.keys if old else (keys or {}).get(case, {self.keys[0]: case})
            self.entries[case] = Difference(case, got, old.kind if old else "", old.why if old else "", "", ids)
        known = set(order)
        ranked = [c for c in order if c in self.entries] + [c for c in self.entries if c not in known]
        self.path.write_text(self.header() + "\n" + "\n".join(self.blocks([self.entries[c] for c in ranked])))
        print(f"update: {self.path}: {len(ranked)} differences recorded", flush=True)

    def blocks(self, ranked: list[Difference]) -> list[str]:
        """One block an entry; with GROUP, the entries of each group together (in the order each group
        first comes), the group's first block opened by its one-line comment."""
        if self.group is None:
            return [self.block(d) for d in ranked]
        groups: dict[str, list[Difference]] = {}
        for d in ranked:
            groups.setdefault(str(d.keys.get(self.group, "")), []).append(d)
        out = []
        for value, members in groups.items():
            kinds = Counter(d.kind if d.explained else "unexplained" for d in members)
            counts = ", ".join(f"{kinds[k]} {k}" for k in (*self.kinds, "unexplained") if kinds[k])
            out += [f"# ---- {value}: {len(members)} recorded ({counts})\n" + self.block(members[0]),
                    *map(self.block, members[1:])]
        return out

    def block(self, d: Difference) -> str:
        ids = "".join(f"{k} = {toml_value(d.keys[k])}\n" for k in self.keys
                      if k in d.keys and not (k in self.defaults and d.keys[k] == self.defaults[k]))
        return (f"[[{TABLE}]]\n{ids}got = {toml_value(d.got)}\nkind = {json.dumps(d.kind)}\n"
                f"why = {json.dumps(d.why)}\n")

    def header(self) -> str:
        identity = "" if self.keys == ("case",) else f"# Identity: {', '.join(map(self.key_text, self.keys))}.\n"
        note = "".join(f"# {line}\n" for line in self.note.splitlines())
        return (f"# Recorded differences of {self.what} (harness/record.py): one [[{TABLE}]] a case that differs.\n"
                f"{identity}{note}"
                f"# got is OBSERVED (--update rewrites it, keeping kind and why); kind: {' | '.join(self.kinds)};\n"
                f"# why: the reason, written by a person (an empty kind or why fails the gate).\n")

    def key_text(self, key: str) -> str:
        """An identity key as the header names it: its default, or that it is optional."""
        if key in self.defaults:
            return f"{key} (when left out: {self.defaults[key]})"
        return f"{key} (optional)" if key in self.optional else key


__all__ = ["Difference", "KINDS", "Record", "RowError", "SKIP", "toml_value"]
