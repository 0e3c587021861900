"""--update: rewrite each observed row's `bio`, `fd` and `depth` lines from what was observed.

Only those three lines of a row change (comments, order and every other key stay);
the diff is printed. A row with a cell that could not run is not recorded (it is
listed and keeps its old lines); cells the two servers end differently are recorded
per server, and the row then needs a servers_differ reason written by a person.
"""
from __future__ import annotations

import difflib
import re
from pathlib import Path

from harness.record import toml_value
from matrix.rows import TRANSPORTS, Row, RowFile

RECORDED = ("bio", "fd", "depth")


def collapse(row: Row, per_cell: dict[tuple[str, str], str]):
    """One value when every cell agrees; else a table by version, split by server only where they disagree."""
    if len(set(per_cell.values())) == 1:
        return next(iter(per_cell.values()))
    table: dict[str, str] = {}
    for v in row.versions:
        found = {s: per_cell[(v, s)] for s in row.servers if (v, s) in per_cell}
        if len(set(found.values())) == 1:
            table[v] = next(iter(found.values()))
        else:
            table.update({f"{v} {s}": o for s, o in found.items()})
    return table


def recorded_lines(row: Row, observations: list) -> tuple[dict | None, list[str]]:
    """The new bio/fd/depth values of one row, or None with the reasons it cannot be recorded."""
    mine = [o for o in observations if o.cell.row is row]
    problems = [f"{o.cell.label()}: {o.problem}" for o in mine if o.problem]
    if problems or not mine:
        return None, problems
    values: dict = {}
    for t in TRANSPORTS:
        values[t] = collapse(row, {(o.cell.version, o.cell.server): o.outcome for o in mine if o.cell.transport == t})
    depths = {f"{o.cell.transport} {o.cell.version}": o.depth for o in mine if o.depth is not None}
    if depths:
        uniform = set(depths.values())
        values["depth"] = uniform.pop() if len(uniform) == 1 else dict(sorted(depths.items()))
    if any(isinstance(values[t], dict) and any(" " in k for k in values[t]) for t in TRANSPORTS) \
            and not row.get("servers_differ"):
        problems.append(f"{row.name}: the servers end some cells differently; write servers_differ (why)")
    return values, problems


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
        if problems:
            print(f"update: {name}: " + "; ".join(problems))
        if values is None:
            continue
        begin, end = blocks[name]
        lines[begin:end] = rewrite_block(lines[begin:end], values)
    new_text = "".join(lines)
    diff = list(difflib.unified_diff(text.splitlines(keepends=True), new_text.splitlines(keepends=True),
                                     str(path), str(path) + " (observed)"))
    print("".join(diff) if diff else "update: no expectation changed", end="" if diff else "\n")
    path.write_text(new_text)
