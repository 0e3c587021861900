"""Recorded differences: where a run was observed to differ from what the lab expects of it, and why.
One format for every gate, one loader, one --update. An entry holds only what differs:

    [[difference]]
    case = "names-wrong-host"     # a case id, a glob of them (`hrr*`, `*/fd`, `4.4.*`) or a list of both
    except = ["hrr-ok"]           # optional: cases the globs leave out
    got = "handshake/X509_V_ERR_HOSTNAME_MISMATCH*1"   # OBSERVED: only what differs from the row
    without = ["loop.idle_waits<1000+progress"]   # optional (case gates): the row's terms it does not hold
    kind = "limit"                # a person's: bug | policy | limit (a gate may name its own kinds)
    why = "..."                   # a person's: the reason in words; or reason = "KEY" of reasons.toml

How a case's expectation is made: the row's own (the reference), then every glob entry that matches it,
in the file's order, then the entry that names it; each merges its got into what came before (the gate's
MERGE: a case gate replaces the terms of the same kind, the matrix the cells it names, PKITS the whole).
A change to a row therefore reaches every client whose record does not name that term or cell.
A reason several entries share is written once, in reasons.toml beside the record
(`[reason]` KEY = "text"), and named by `reason = "KEY"`.

--update rewrites what it observed: an entry that still holds is kept as written; a case that now
differs gets an entry of its own holding the difference from what the globs already give it (kind and
why from the entry that covered it); a case that now holds the row's own expectation leaves its entry
and is excepted from the globs that match it. A new difference is written with kind and why empty, and a
record with an empty one fails its gate until a person writes them.

Loading refuses (RowError, file:line): an unknown or missing key, a kind not of the gate's, a case named
twice, a name that is no case of the gate or a glob that matches none, a got the gate cannot judge, an
unknown reason, and, where the gate gives each case's reference, an entry that records nothing (every case
it matches would be held to the same without it) or a `without` term the row does not have.

    record = Record(room / "pkits.toml", "pkits")      # a missing file: nothing recorded yet
    expected, diff = record.expected(case_id, reference)
    record.write(order, {case_id: full_got_or_None, ...})   # --update

Who records with it: the case gates (clients/NAME/{client,faults,hostile,dns}.toml, harness/cases.py),
the matrix (clients/NAME/matrix.toml, matrix/crossing.py), PKITS (pkits/pkits_gate.py), leaks and the
operator scan (mutants/survivors.toml, mutants/scan.py: identity keys file, op, before, after, nth).
"""
from __future__ import annotations

import fnmatch
import json
import random
import tomllib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Optional

from .rows import RowError, load_table, load_toml

KINDS = ("bug", "policy", "limit")
SKIP = "skip"   # the got of a case the client cannot be asked (it exits 89): every gate's word for it
TABLE = "difference"
REASONS = "reasons.toml"
WIDTH = 110     # a long string is written wrapped at this width (TOML's line-ending backslash)


def is_glob(name: str) -> bool:
    return any(c in name for c in "*?[")


def _matches(case: str, name: str) -> bool:
    return fnmatch.fnmatchcase(case, name) if is_glob(name) else case == name


@dataclass
class Difference:
    case: str                    # the case id as written (several: joined by ", "; several keys: by " | ")
    got: object                  # a string, or a table of strings (a gate's cells); None: only `without`
    kind: str
    why: str                     # the reason's text (a shared reason's, resolved)
    where: str                   # file:line of its entry, "" for one written by --update
    keys: dict = field(default_factory=dict)   # every identity key, case included
    names: list[str] = field(default_factory=list)     # the ids and globs it names
    excepted: list[str] = field(default_factory=list)  # the cases its globs leave out
    without: list[str] = field(default_factory=list)   # the row's terms it does not hold (case gates)
    reason: str = ""             # the key of a shared reason in reasons.toml, or ""

    @property
    def explained(self) -> bool:
        return bool(self.kind.strip() and self.why.strip())

    def matches(self, case: str) -> bool:
        return any(_matches(case, n) for n in self.names) and not any(_matches(case, n) for n in self.excepted)

    def names_case(self, case: str) -> bool:
        """True when the entry names CASE itself, not through a glob."""
        return case in self.names

    def label(self) -> str:
        return ", ".join(self.names) if self.names else self.case


def toml_value(value) -> str:
    """A string, number, list or (nested) table of them as one TOML value (json.dumps quotes as TOML does)."""
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(map(toml_value, value)) + "]"
    return json.dumps(value)


def toml_text(key: str, text: str, width: int = WIDTH) -> str:
    """KEY = TEXT, a long TEXT as a multi-line basic string wrapped at spaces, each line but the last
    ending in a space and a backslash (TOML folds the break and the next line's indent away): read back,
    the same string, or TEXT is written on one line."""
    one = f"{key} = {json.dumps(text)}"
    if len(one) <= width:
        return one
    lines, line = [], ""
    for word in json.dumps(text)[1:-1].split(" "):
        if line and len(line) + 1 + len(word) > width - 4:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    wrapped = f'{key} = """\\\n' + "".join(f"  {ln} \\\n" for ln in lines) + f'  {line}"""'
    try:
        same = tomllib.loads(wrapped)[key] == text
    except tomllib.TOMLDecodeError:
        same = False
    return wrapped if same else one


def toml_list(key: str, items: list, width: int = WIDTH) -> str:
    """KEY = [ITEMS], several a line when one line would be longer than WIDTH."""
    one = f"{key} = {toml_value(items)}"
    if len(one) <= width:
        return one
    lines, line = [], ""
    for item in map(toml_value, items):
        if line and len(line) + len(item) + 2 > width - 4:
            lines.append(line)
            line = ""
        line += ("" if not line else " ") + item + ","
    return f"{key} = [\n" + "".join(f"  {ln}\n" for ln in [*lines, line]) + "]"


class EntryError(ValueError):
    """A malformed entry: the key at fault and what is wrong (the loader adds file:line)."""

    def __init__(self, key: Optional[str], message: str):
        super().__init__(message)
        self.key, self.message = key, message


def _strings(value, what: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return list(value)
    raise EntryError(what, f"{what} must be a string or a list of strings")


def replace(base, got, without):
    """The default merge: what the entry recorded stands for the whole expectation."""
    return got


class Record:
    """One record file. WHAT names the gate in the header and in errors; KINDS the kinds a person may
    write; KEYS the identity keys (case alone by default, which may be a glob or a list; mutants'
    survivors: file, op, before, after, nth); CHECK_GOT(got) raises ValueError for a got the gate cannot
    judge; CASES, when given, the case ids that exist (a name of no case, or a glob of none, fails at load:
    a renamed case must not leave its record behind). OPTIONAL: identity keys an entry may leave out;
    DEFAULTS: an optional key's value when left out. GROUP: the identity key whose value the entries are
    written grouped by. NOTE: the gate's own lines for the header (what its got holds).
    The gate's language: MERGE(base, got, without) -> the expectation an entry makes of BASE (the default
    replaces it); WITHOUT, whether entries may name row terms they do not hold; REFERENCE(case) -> the row's
    own expectation of a case, with which the loader refuses an entry that records nothing; SAME(a, b);
    MINIMAL(base, full) -> (got, without): what --update writes for a case observed to show FULL."""

    def __init__(self, path: Path, what: str, kinds: Iterable[str] = KINDS, keys: tuple[str, ...] = ("case",),
                 check_got: Optional[Callable[[object], None]] = None, cases: Optional[Iterable[str]] = None,
                 optional: tuple[str, ...] = (), defaults: Optional[dict] = None, group: Optional[str] = None,
                 note: str = "", merge: Callable = replace, without: bool = False,
                 reference: Optional[Callable[[str], object]] = None, same: Callable = lambda a, b: a == b,
                 minimal: Callable = lambda base, full: (full, [])):
        self.path, self.what, self.kinds, self.keys = Path(path), what, tuple(kinds), keys
        self.defaults = dict(defaults or {})
        self.optional = (*optional, *(k for k in self.defaults if k not in optional))
        self.group, self.note = group, note
        self.merge, self.reference, self.same, self.minimal = merge, reference, same, minimal
        self.allow_without = without
        self.cases = list(cases) if cases is not None else None
        self.entries: dict[str, Difference] = {}   # by the case (identity) each entry names itself
        self.globs: list[Difference] = []          # the entries that name cases by a glob, in file order
        self.all: list[Difference] = []            # every entry, in file order
        self.reasons: dict[str, str] = {}
        if not self.path.is_file():
            return
        self._load(check_got)

    # ---- loading ---------------------------------------------------------------------------------

    def _load(self, check_got) -> None:
        single = self.keys == ("case",)
        schema = {k: (object, k not in self.optional) for k in self.keys}
        schema.update({"got": (object, not self.allow_without), "kind": (str, True), "why": (str, False),
                       "reason": (str, False)})
        if single:
            schema["except"] = (list, False)
        if self.allow_without:
            schema["without"] = (list, False)
        for row in load_toml(self.path, TABLE, schema, names=self.keys):
            try:
                d = self._entry(row, single, check_got)
            except EntryError as e:
                raise row.error(e.key, e.message) from e
            self.all.append(d)
            for name in d.names if single else [d.case]:
                if single and is_glob(name):
                    continue
                if name in self.entries:
                    raise row.error(self.keys[0], f"{name!r} recorded twice (first at {self.entries[name].where})")
                self.entries[name] = d
            if single and any(is_glob(n) for n in d.names):
                self.globs.append(d)
        if self.cases is not None and single:
            self._check_cases()

    def _entry(self, row, single: bool, check_got) -> Difference:
        for k in self.keys:
            value = row.get(k, "")
            if not (single and isinstance(value, list)) and \
                    (not isinstance(value, (str, int)) or isinstance(value, bool)):
                raise EntryError(k, f"{k} must be a string or a number" + (" or a list of them" if single else ""))
        got = row.get("got")
        if got is not None and not isinstance(got, (str, dict)):
            raise EntryError("got", "got must be a string or a table of them")
        without = _strings(row.get("without"), "without") if row.get("without") is not None else []
        if got is None and not without:
            raise EntryError("got", "give got, or without (the row's terms the case does not hold)")
        if row.get("kind") not in (*self.kinds, ""):
            raise EntryError("kind", f"kind must be one of {', '.join(self.kinds)}")
        if (row.get("why") is None) == (row.get("reason") is None):
            raise EntryError("why", "give why (the reason in words) or reason (a key of "
                             f"{self.path.parent / REASONS}), one of them")
        why = row.get("why")
        if why is None:
            why = self.reason_text(row.get("reason"))
        if check_got is not None and got is not None:
            try:
                check_got(got)
            except ValueError as e:
                raise EntryError("got", str(e)) from e
        if single:
            names = _strings(row.get("case"), "case")
            excepted = _strings(row.get("except"), "except") if row.get("except") is not None else []
            values = {"case": names[0] if len(names) == 1 else names}
            case = ", ".join(names)
        else:
            names, excepted = [], []
            values = {k: row.get(k) for k in self.keys if row.get(k) is not None}
            case = self.identity(values)
        return Difference(case, got, row.get("kind"), why, row.where(), values, names, excepted, without,
                          row.get("reason") or "")

    def reason_text(self, key: str) -> str:
        if not self.reasons:
            path = self.path.parent / REASONS
            table = load_table(path) if path.is_file() else {}
            if set(table) - {"reason"} or not isinstance(table.get("reason", {}), dict):
                raise EntryError("reason", f"{path}: holds one table, [reason], of KEY = \"text\"")
            self.reasons = dict(table.get("reason", {}))
        if key not in self.reasons or not isinstance(self.reasons[key], str):
            raise EntryError("reason", f"{key!r} is no reason of {self.path.parent / REASONS}")
        return self.reasons[key]

    def _check_cases(self) -> None:
        known = set(self.cases)
        for d in self.all:
            for name in d.names:
                if not is_glob(name) and name not in known:
                    raise RowError(f"{d.where}: {name!r} is not a case of {self.what}")
            members = self.members(d)
            for name in d.names:
                if is_glob(name) and not any(_matches(c, name) for c in members):
                    raise RowError(f"{d.where}: {name!r} matches no case of {self.what}")
            for name in d.excepted:
                if not any(_matches(c, name) and any(_matches(c, n) for n in d.names) for c in self.cases):
                    raise RowError(f"{d.where}: except {name!r} leaves out no case the entry names")
            if self.reference is not None:
                self._check_records(d, members)

    def _check_records(self, d: Difference, members: list[str]) -> None:
        changed = False
        for case in members:
            ref = self.reference(case)
            before = [e for e in self.applied(case) if e is not d]
            try:
                without_it = self.fold(ref, before)
                with_it = self.fold(ref, self.applied(case))
            except ValueError as e:
                raise RowError(f"{d.where}: {case}: {e}") from e
            changed = changed or not self.same(with_it, without_it)
        if not changed:
            raise RowError(f"{d.where}: {d.label()}: records nothing: every case it matches ({len(members)}) "
                           f"is held to the same without it (the row expects it already)")

    # ---- reading ---------------------------------------------------------------------------------

    def identity(self, values: dict) -> str:
        """The case id of an entry whose identity keys hold VALUES (a key left out: its default, else "")."""
        given = [str(values.get(k, self.defaults.get(k, ""))) for k in self.keys]
        return " | ".join(given) if len(self.keys) > 1 else given[0]

    def members(self, d: Difference) -> list[str]:
        """The cases an entry applies to (of CASES, when the record was given them; else the ones it names)."""
        if self.cases is None:
            return [n for n in d.names if not is_glob(n)] or [d.case]
        # d applies to a case when it is the case's own entry, or a glob entry that matches it (applied()):
        # said directly, not by building every case's list for every entry (entries x cases x globs)
        if not any(d is g for g in self.globs):
            named = set(d.names)
            return [c for c in self.cases if c in named and self.entries.get(c) is d]
        return [c for c in self.cases if self.entries.get(c) is d or d.matches(c)]

    def applied(self, case: str) -> list[Difference]:
        """The entries that make CASE's expectation, in the order they apply: the globs, then its own."""
        own = self.entries.get(case)
        return [d for d in self.globs if d is not own and d.matches(case)] + ([own] if own else [])

    def fold(self, reference, entries: list[Difference]):
        value = reference
        for d in entries:
            value = self.merge(value, d.got, d.without)
        return value

    def get(self, case: str) -> Optional[Difference]:
        """The difference recorded for CASE (several entries that apply: one that says all of them)."""
        applied = self.applied(case)
        if len(applied) <= 1:
            return applied[0] if applied else None
        kinds = [d.kind for d in applied]
        return Difference(case, applied[-1].got, " + ".join(dict.fromkeys(kinds)) if all(kinds) else "",
                          " / ".join(dict.fromkeys(d.why for d in applied)) if all(d.why for d in applied) else "",
                          ", ".join(d.where for d in applied), {"case": case}, [case])

    def expected(self, case: str, reference):
        """What a case must show: REFERENCE with every entry that applies merged in; and the difference."""
        applied = self.applied(case)
        return (self.fold(reference, applied), self.get(case)) if applied else (reference, None)

    def kind_sample(self, seed: int) -> list[tuple[str, Difference, str]]:
        """A sample's share of the record, a function of SEED (the tree's): for each kind its entries
        hold, one entry of that kind and one case it applies to, as (kind, entry, case). A sampled
        crossing runs these beside its fixed rows, so every kind of difference a client has is held
        on every tree, and a tree after tree reaches every entry (an entry of no case: none)."""
        out = []
        for kind in self.kinds:
            # sorted: a record given its cases as a set (PKITS, leaks) would list them in the order of the
            # process's string hashes, and two runs of one tree drew different cases (junit_compare saw it)
            entries = [(d, members) for d in self.all if d.kind == kind and (members := sorted(self.members(d)))]
            if entries:
                pick = random.Random(f"{seed}:{self.path.name}:{kind}")
                d, members = entries[pick.randrange(len(entries))]
                out.append((kind, d, members[pick.randrange(len(members))]))
        return out

    def unexplained(self) -> list[Difference]:
        """Entries a person has still to write kind or why for: each fails its gate."""
        return [d for d in self.all if not d.explained]

    # ---- --update --------------------------------------------------------------------------------

    def write(self, order: list[str], observed: dict[str, object], keys: Optional[dict[str, dict]] = None) -> None:
        """--update: OBSERVED gives each observed case's whole got, or None when it came out as the
        reference; cases not observed keep their entries. ORDER: the gate's case order (entries are
        written in the order of the first case each applies to). KEYS: the identity keys of a new
        multi-key case."""
        for case, full in observed.items():
            if self.keys != ("case",):
                self._write_keyed(case, full, keys)
            else:
                self._write_case(case, full)
        if self.keys == ("case",) and self.cases is not None:
            self.coalesce()
        rank = {c: i for i, c in enumerate(order)}

        def position(d: Difference) -> int:
            hits = [rank[c] for c in (order if self.keys == ("case",) else [d.case]) if c in rank and
                    (d.matches(c) if self.keys == ("case",) else True)]
            return min(hits, default=len(rank))

        ranked = sorted(self.all, key=position)
        self.path.write_text(self.header() + "\n" + "\n".join(self.blocks(ranked)))
        print(f"update: {self.path}: {len(ranked)} entries recorded", flush=True)

    def _write_keyed(self, case: str, full, keys) -> None:
        old = self.entries.get(case)
        if full is None:
            if old:
                self.all.remove(old)
                del self.entries[case]
            return
        ids = old.keys if old else (keys or {}).get(case, {self.keys[0]: case})
        new = Difference(case, full, old.kind if old else "", old.why if old else "", "", ids,
                         reason=old.reason if old else "")
        if old:
            self.all[self.all.index(old)] = new
        else:
            self.all.append(new)
        self.entries[case] = new

    def _write_case(self, case: str, full) -> None:
        ref = self.reference(case) if self.reference else None
        own = self.entries.get(case)
        globs = [d for d in self.globs if d.matches(case) and d is not own]
        base = self.fold(ref, globs) if globs else ref       # what the case is held to without its own entry
        if full is not None and self.same(self.fold(base, [own]) if own else base, full):
            return                                        # it still holds as written
        if own is not None:
            self._detach(own, case)
        if full is None or (self.reference is not None and self.same(ref, full)):
            for g in globs:                               # as the row's own: no entry applies to it
                g.excepted.append(case)
            return
        got, without = self.minimal(base, full) if base is not None else (full, [])
        source = own or (globs[0] if globs else None)
        new = Difference(case, got, source.kind if source else "", source.why if source else "", "",
                         {"case": case}, [case], [], list(without), source.reason if source else "")
        self.all.append(new)
        self.entries[case] = new

    def coalesce(self) -> None:
        """Entries of one case each that only add the same `without` terms to a glob entry, one for every
        case the glob holds, with its kind and why (a term the rows gained that none of its cases holds,
        for the glob's own reason): the terms join the glob, one fact written once, not once a case."""
        for g in list(self.globs):
            members = self.members(g)
            own = [self.entries.get(c) for c in members]
            if not members or any(d is None or d is g or d.got is not None or d.names != [c] or
                                  (d.kind, d.why, d.reason) != (g.kind, g.why, g.reason)
                                  for c, d in zip(members, own)):
                continue
            if any(d.without != own[0].without for d in own):
                continue
            g.without = g.without + [t for t in own[0].without if t not in g.without]
            for c, d in zip(members, own):
                self.all.remove(d)
                del self.entries[c]

    def _detach(self, d: Difference, case: str) -> None:
        """CASE leaves entry D (named among several: the others keep it; alone: the entry goes)."""
        del self.entries[case]
        if d.names == [case]:
            self.all.remove(d)
            if d in self.globs:
                self.globs.remove(d)
            return
        d.names = [n for n in d.names if n != case]
        d.keys = {"case": d.names[0] if len(d.names) == 1 else list(d.names)}
        d.case = ", ".join(d.names)

    # ---- writing ---------------------------------------------------------------------------------

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
        if self.keys == ("case",):
            names = d.names or [d.case]
            ids = (f"case = {json.dumps(names[0])}" if len(names) == 1 else toml_list("case", names)) + "\n"
            if d.excepted:
                ids += toml_list("except", d.excepted) + "\n"
        else:
            ids = "".join(f"{k} = {toml_value(d.keys[k])}\n" for k in self.keys
                          if k in d.keys and not (k in self.defaults and d.keys[k] == self.defaults[k]))
        got = f"got = {toml_value(d.got)}\n" if d.got is not None else ""
        without = toml_list("without", d.without) + "\n" if d.without else ""
        why = f"reason = {json.dumps(d.reason)}" if d.reason else toml_text("why", d.why)
        return f"[[{TABLE}]]\n{ids}{got}{without}kind = {json.dumps(d.kind)}\n{why}\n"

    def header(self) -> str:
        identity = "" if self.keys == ("case",) else f"# Identity: {', '.join(map(self.key_text, self.keys))}.\n"
        note = "".join(f"# {line}\n" for line in self.note.splitlines())
        globs = ("# case: a case, a glob of them or a list; only what differs from the row is recorded.\n"
                 if self.keys == ("case",) else "")
        return (f"# Recorded differences of {self.what} (harness/record.py): one [[{TABLE}]] a fact.\n"
                f"{identity}{globs}{note}"
                f"# got is OBSERVED (--update rewrites it, keeping kind and why); kind: {' | '.join(self.kinds)};\n"
                f"# why (or reason, a key of {REASONS}): written by a person (an empty kind or why fails the gate).\n")

    def key_text(self, key: str) -> str:
        """An identity key as the header names it: its default, or that it is optional."""
        if key in self.defaults:
            return f"{key} (when left out: {self.defaults[key]})"
        return f"{key} (optional)" if key in self.optional else key


__all__ = ["Difference", "EntryError", "KINDS", "Record", "RowError", "SKIP", "is_glob", "toml_list", "toml_text", "toml_value"]


def recorded_kinds(record: Record, given_seed: Optional[int], sampled: Callable[[str], bool]) -> list[str]:
    """The cases a sampled crossing adds to its fixed sample: one case of one entry of every kind the
    client's record holds (Record.kind_sample, drawn from the tree's seed, or --seed's), each printed;
    SAMPLED(case): the fixed sample runs it already."""
    from .gate import tree_seed
    seed = given_seed if given_seed is not None else tree_seed()[0]
    added = []
    for kind, d, case in record.kind_sample(seed):
        already = sampled(case)
        print(f"  recorded {kind}: {case} ({d.where or d.label()})" + (" (in the sample already)" if already else ""),
              flush=True)
        if not already:
            added.append(case)
    return added
