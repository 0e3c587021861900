"""Numbered outcome terms rewritten to their names, in place (harness/outcomes.py's one table).

    /usr/bin/python3 -m harness.name_outcomes FILE...     # prints FILE: N terms named, per file

Only the expectation text is touched: in a TOML file (the case files, the records, the profiles)
the string values of the keys `expect`, `got`, `outcome` and `without` (a string, or the strings of
an array or inline table). In there, a term `STAGE/NUMBER` (with `*N`, or
alternatives `A|B*N`) whose number has a name becomes `STAGE/NAME*N`; a number without a name
(handshake/-5) and ok/0 stay; every other term, and every other byte of the file, stays as it is.
A second run changes nothing. Each rewritten term is checked to count the same 'stage/detail' as
before (harness/expect.py's outcome_key), and a TOML file to load to the same data but the
rewritten values, before it is written; a file it cannot read so is refused (exit 2), one line.
"""
from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

from .expect import NUMBER, outcome_key
from .outcomes import STAGES, default

TOML_KEYS = ("expect", "got", "outcome", "without")   # without: a record's row terms (harness/record.py)
TERM = re.compile(r"^([a-z]+/[A-Za-z0-9_.-]+(?:\|[a-z]+/[A-Za-z0-9_.-]+)*)(\*\d+)?$")


class NamingError(ValueError):
    pass


def name_term(term: str) -> str:
    """TERM with each numbered outcome that has a name written by it; any other term as it is."""
    m = TERM.match(term)
    if not m:
        return term
    parts = []
    for alt in m[1].split("|"):
        stage, _, detail = alt.partition("/")
        named = default().named(stage, int(detail)) if stage in STAGES and stage != "ok" and NUMBER.fullmatch(detail) else None
        if named is not None and outcome_key(named) != f"{stage}/{int(detail)}":
            raise NamingError(f"{alt} named {named}, which counts {outcome_key(named)}")
        parts.append(named or alt)
    return "|".join(parts) + (m[2] or "")


def name_text(text: str) -> tuple[str, int]:
    """TEXT (an expectation) with its numbered terms named, whitespace kept; and how many terms changed."""
    pieces = re.split(r"(\s+)", text)
    named = [p if p.isspace() or not p else name_term(p) for p in pieces]
    return "".join(named), sum(a != b for a, b in zip(pieces, named))


# A TOML string, in any of its four forms (the groups: its delimiter, its content)
STRING = re.compile(r'("""|\'\'\'|"|\')((?:\\.|(?!\1)[^\\])*?)\1', re.S)
KEY = re.compile(rf"(?m)(?:^|(?<=[{{,]))[ \t]*(?:{'|'.join(TOML_KEYS)})[ \t]*=[ \t]*")


def _value_end(text: str, start: int) -> int:
    """Where the TOML value that starts at START ends: a string, or an array or inline table of them."""
    if text[start] in "[{":
        depth, i = 0, start
        while i < len(text):
            if text[i] in "\"'":
                m = STRING.match(text, i)
                if not m:
                    raise NamingError(f"an unterminated string at offset {i}")
                i = m.end()
                continue
            depth += text[i] in "[{"
            depth -= text[i] in "]}"
            i += 1
            if depth == 0:
                return i
        raise NamingError(f"an unterminated value at offset {start}")
    m = STRING.match(text, start)
    return m.end() if m else start


def name_toml(text: str) -> tuple[str, int]:
    out, count, last = [], 0, 0
    for key in KEY.finditer(text):
        if key.start() < last:   # a key's name inside a value already rewritten
            continue
        end = _value_end(text, key.end())
        value = text[key.end():end]
        named = []
        pos = 0
        for s in STRING.finditer(value):
            content, n = name_text(s[2]) if "\\" not in s[2] else (s[2], 0)
            named += [value[pos:s.start(2)], content]
            pos, count = s.end(2), count + n
        out += [text[last:key.end()], "".join(named) + value[pos:]]
        last = end
    return "".join(out) + text[last:], count


def _expected(data, under: str = ""):
    """The loaded TOML DATA with the values under TOML_KEYS named as name_toml names them."""
    if isinstance(data, dict):
        return {k: _expected(v, k if k in TOML_KEYS else under) for k, v in data.items()}
    if isinstance(data, list):
        return [_expected(v, under) for v in data]
    return name_text(data)[0] if under and isinstance(data, str) else data


def name_file(path: Path) -> int:
    if path.suffix != ".toml":
        raise NamingError("not a .toml file (the case files and the records are TOML)")
    text = path.read_text()
    new, count = name_toml(text)
    try:
        before, after = tomllib.loads(text), tomllib.loads(new)
    except tomllib.TOMLDecodeError as e:
        raise NamingError(f"not TOML ({e})") from e
    if _expected(before) != after:
        raise NamingError("the rewritten file would not load to the same data with its outcomes named")
    if new != text:
        path.write_text(new)
    return count


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv else 2
    for arg in argv:
        try:
            print(f"{arg}: {name_file(Path(arg))} terms named", flush=True)
        except (OSError, UnicodeDecodeError, NamingError, ValueError) as e:
            print(f"{arg}: {e}", file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
