"""Mutation operators over one C++ source: every mutant they make, in source order.

Each operator rewrites one token or one statement of code (comments, string and character
literals, raw string literals over many lines such as tlsnb's --help text, and preprocessor
lines are never touched), the classic set of mull and dextool:

    rel     relational and boundary: < <-> <=, > <-> >=, == <-> !=
    neg     a condition negated: if (C) -> if (!(C)), while (C) -> while (!(C))
    logic   && <-> ||
    stmt    a call, assignment or increment statement removed (the line becomes `;`)
    ret     a returned value replaced: return true <-> return false
    const   an integer constant changed: 0 -> 1, 1 -> 0, N -> N + 1

Binary operators are matched with a space on each side (the house style), which keeps
template angle brackets, `->`, `<<` and `>>` out. A mutant's identity (file, operator, the line's
code before and after, nth: which of the file's identical changes it is) survives edits elsewhere
in the file, so a survivor's record follows it when lines move.

    for m in generate(Path("client/http_response.cc"), text): print(m.line, m.op, m.change)
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

OPERATORS = ("rel", "neg", "logic", "stmt", "ret", "const")
MASKED = re.compile(r"R\"(?P<delim>[^(\s\\]{0,16})\(.*?\)(?P=delim)\""   # a raw string, over many lines
                    r"|//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'|^[ \t]*#[^\n]*", re.S | re.M)
RELATIONAL = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "=="}
BINARY = re.compile(r"(?<= )(<=|>=|==|!=|<|>|&&|\|\|)(?= )")
CONDITION = re.compile(r"\b(if|while)\s*\(")
RETURN_BOOL = re.compile(r"\breturn (true|false);")
INTEGER = re.compile(r"(?<![\w.])\d+(?![\w.])")
CALLEE = r"(?:::)?[A-Za-z_]\w*(?:(?:::|\.|->)[A-Za-z_]\w*)*"
STATEMENT = re.compile(rf"^(\s*)(?:{CALLEE}\s*\(.*\)|\+\+{CALLEE}|{CALLEE}\+\+|"
                       rf"{CALLEE}(?:\[[^\]]*\])?\s*(?:=|\+=|-=|\|=)\s*[^=].*);\s*$")
NEGATE = "!(...)"   # the replacement of a negated condition: the original's text, inside !( )
NOT_STATEMENTS = ("return", "break", "continue", "case", "else", "delete", "throw", "goto")


@dataclass(frozen=True)
class Mutant:
    file: str          # client/attempt.cc
    line: int          # 1-based
    op: str            # one of OPERATORS
    before: str        # the line's code, stripped
    after: str         # the mutated line, stripped
    nth: int           # which of the file's mutants with this same change of this same text (0 first, in source order)
    text: str          # the whole mutated source

    IDENTITY: ClassVar[tuple[str, ...]] = ("file", "op", "before", "after", "nth")

    @property
    def identity(self) -> dict:
        """The keys a survivor's record names it by (mutants/survivors.toml, harness/record.py)."""
        return {k: getattr(self, k) for k in self.IDENTITY}

    @property
    def change(self) -> str:
        return f"{self.before}  ->  {self.after}"

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


def mask(text: str) -> str:
    """TEXT with comments, literals and preprocessor lines blanked (newlines kept): code only."""
    return MASKED.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def closing_paren(code: str, open_at: int) -> int:
    depth = 0
    for i in range(open_at, len(code)):
        if code[i] == "(":
            depth += 1
        elif code[i] == ")":
            depth -= 1
            if depth == 0:
                return i
    return -1


def edits(code: str) -> list[tuple[str, int, int, str]]:
    """(operator, start, end, replacement) for every mutation site of CODE (masked text)."""
    found: list[tuple[str, int, int, str]] = []
    for m in BINARY.finditer(code):
        token = m.group(1)
        if token in RELATIONAL:
            found.append(("rel", m.start(), m.end(), RELATIONAL[token]))
        else:
            found.append(("logic", m.start(), m.end(), "||" if token == "&&" else "&&"))
    for m in CONDITION.finditer(code):
        close = closing_paren(code, m.end() - 1)
        if close > 0:
            found.append(("neg", m.end(), close, NEGATE))
    for m in RETURN_BOOL.finditer(code):
        found.append(("ret", m.start(1), m.end(1), "false" if m.group(1) == "true" else "true"))
    for m in INTEGER.finditer(code):
        n = int(m.group(0))
        found.append(("const", m.start(), m.end(), str({0: 1, 1: 0}.get(n, n + 1))))
    found.extend(statement_removals(code))
    return sorted(found, key=lambda e: (e[1], OPERATORS.index(e[0])))


def statement_removals(code: str) -> list[tuple[str, int, int, str]]:
    """Whole-line statements (a call, an assignment, an increment) that start after a complete one;
    in a one-line `if (C) S;` the statement S alone (the whole line would orphan an `else`)."""
    found, offset, previous = [], 0, ";"
    for line in code.split("\n"):
        stripped = line.strip()
        start = offset + len(line) - len(line.lstrip())
        if stripped.startswith("if (") and (close := closing_paren(line, line.index("("))) > 0:
            line_rest = line[close + 1:]
            if STATEMENT.match(line_rest) and not line_rest.strip().startswith(NOT_STATEMENTS):
                start = offset + close + 1 + len(line_rest) - len(line_rest.lstrip())
                found.append(("stmt", start, offset + len(line.rstrip()), ";"))
        elif (STATEMENT.match(line) and previous[-1:] in (";", "{", "}", ")", ":")
              and not stripped.startswith(NOT_STATEMENTS + ("for ", "while ", "switch "))
              and stripped.count("(") == stripped.count(")")):
            found.append(("stmt", start, offset + len(line.rstrip()), ";"))
        if stripped:
            previous = stripped
        offset += len(line) + 1
    return found


def generate(path: Path, text: str, root: Path) -> list[Mutant]:
    """Every mutant of TEXT (the source at PATH), in source order."""
    code = mask(text)
    rel = str(path.resolve().relative_to(root.resolve()))
    mutants, seen = [], {}
    for op, start, end, replacement in edits(code):
        if replacement == NEGATE:
            replacement = f"!({text[start:end]})"
        mutated = text[:start] + replacement + text[end:]
        line_no = text.count("\n", 0, start) + 1
        before = text.splitlines()[line_no - 1].strip()
        after = mutated.splitlines()[line_no - 1].strip()
        nth = seen.get((op, before, after), 0)  # the same change of the same text elsewhere is another mutant
        seen[(op, before, after)] = nth + 1
        mutants.append(Mutant(rel, line_no, op, before, after, nth, mutated))
    return mutants
