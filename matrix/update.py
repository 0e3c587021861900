"""--update: rewrite each observed row's `bio`, `fd` and `depth` lines from what was observed.

Only those three lines of a row change (comments, order and every other key stay);
the diff is printed. Cells the servers disagree on, or that could not run, are not
recorded: they are listed, and the row keeps its old lines.
"""
from __future__ import annotations

import difflib
import json
import re
from pathlib import Path

from rows import TRANSPORTS, Row, RowFile

RECORDED = ("bio", "fd", "depth")


def toml_value(value) -> str:
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()) + " }"
    return json.dumps(value) if isinstance(value, str) else str(value)


def collapse(per_version: dict):
    """One value when every version agrees, else a table keyed by version."""
    values = set(per_version.values())
    return values.pop() if len(values) == 1 else dict(sorted(per_version.items()))


def recorded_lines(row: Row, observations: list) -> tuple[dict | None, list[str]]:
    """The new bio/fd/depth values of one row, or None with the reasons it cannot be recorded."""
    mine = [o for o in observations if o.cell.row is row]
    problems = [f"{o.cell.label()}: {o.problem}" for o in mine if o.problem]
    by_cell: dict[tuple[str, str], set] = {}
    depths: dict[str, int] = {}
    for o in mine:
        if o.problem:
            continue
        by_cell.setdefault((o.cell.transport, o.cell.version), set()).add(o.outcome)
        if o.depth is not None:
            depths[f"{o.cell.transport} {o.cell.version}"] = o.depth
    for (transport, version), outcomes in by_cell.items():
        if len(outcomes) > 1:
            problems.append(f"{row.name} {transport} {version}: the servers disagree: {sorted(outcomes)}")
    if problems or not by_cell:
        return None, problems
    values = {t: collapse({v: next(iter(by_cell[(t, v)])) for v in row.versions}) for t in TRANSPORTS}
    if depths:
        uniform = set(depths.values())
        values["depth"] = uniform.pop() if len(uniform) == 1 else dict(sorted(depths.items()))
    return values, []


def rewrite_block(lines: list[str], values: dict) -> list[str]:
    """Replace (or add) the recorded keys in one [[row]] block's lines."""
    key_at = [i for i, line in enumerate(lines) if re.match(r"\s*[A-Za-z0-9_]+\s*=", line)]
    old = [i for i in key_at if lines[i].split("=")[0].strip() in RECORDED]
    insert_at = old[0] if old else (key_at[-1] + 1 if key_at else len(lines))
    new = [f"{k} = {toml_value(values[k])}\n" for k in RECORDED if k in values]
    kept = [line for i, line in enumerate(lines) if i not in old]
    insert_at -= sum(1 for i in old if i < insert_at)
    return kept[:insert_at] + new + kept[insert_at:]


def record(path: Path, rows: RowFile, observations: list) -> None:
    text = path.read_text()
    lines = text.splitlines(keepends=True)
    starts = [r.line - 1 for r in rows.rows] + [len(lines)]
    blocks = {r.name: (starts[i], starts[i + 1]) for i, r in enumerate(rows.rows)}
    observed = {o.cell.row.name: o.cell.row for o in observations}
    for name in sorted(observed, key=lambda n: -blocks[n][0]):  # bottom up: earlier offsets stay valid
        values, problems = recorded_lines(observed[name], observations)
        if values is None:
            print(f"update: {name} not recorded: " + "; ".join(problems))
            continue
        begin, end = blocks[name]
        lines[begin:end] = rewrite_block(lines[begin:end], values)
    new_text = "".join(lines)
    diff = list(difflib.unified_diff(text.splitlines(keepends=True), new_text.splitlines(keepends=True),
                                     str(path), str(path) + " (observed)"))
    print("".join(diff) if diff else "update: no expectation changed", end="" if diff else "\n")
    path.write_text(new_text)
