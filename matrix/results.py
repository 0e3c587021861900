#!/usr/bin/python3
"""The results page: every matrix row against every client, differences from the reference marked.

Reads the cells each matrix gate observed (WORK/results/CLIENT.json, written by run_matrix.py)
and writes results.html (a static page: rows by group, one column per client) and results.md
(the same table in Markdown) into --out. A cell shows the client's outcome, one value when its
versions and servers agree, else each; a cell that differs from the reference's recorded
outcome is marked with its kind (bug, policy, limit) and reason; a cell that could not run is
marked as such. Exit 1 when a client named by --expect has no results (its gate did not run).

    /usr/bin/python3 -m matrix.results --work build/work/matrix --out build/work/matrix [--expect tlsnb go ...]
"""
from __future__ import annotations

import argparse
import html
import sys
from collections import defaultdict
from pathlib import Path

from matrix.crossing import load_results
from harness import RowError, bad_input, crossings

KIND_MARK = {"bug": "B", "policy": "P", "limit": "L", "": "?"}
STYLE = """
body { font: 13px/1.4 system-ui, sans-serif; margin: 24px; color: #222; }
h1 { font-size: 20px; } h2 { font-size: 15px; margin-top: 28px; }
table { border-collapse: collapse; table-layout: fixed; width: 100%; }
th, td { border: 1px solid #ccc; padding: 3px 6px; vertical-align: top; overflow-wrap: anywhere; }
th { background: #f3f3f3; position: sticky; top: 0; } td.row { white-space: nowrap; overflow: hidden; width: 17em; }
table.summary { width: auto; } table.summary td { text-align: right; }
td.same { background: #fff; color: #888; } td.ref { color: #222; } td.diff { background: #fff1c9; }
td.skip { background: #eee; color: #777; }
td.problem { background: #f8c9c9; } td.none { color: #bbb; }
.mark { font-weight: bold; margin-right: 4px; } .why { color: #555; font-size: 11px; }
.legend span { margin-right: 16px; padding: 2px 6px; }
"""


def short(outcome: str | None) -> str:
    if outcome is None:
        return "could not run"
    return outcome.replace("handshake/X509_V_ERR_", "x509:").replace("handshake/SSL_R_", "ssl:")


def cell_value(cells: list[dict]) -> str:
    """One value when every version and server agree, else per version (`1.2: X; 1.3: Y`), and per
    server only where the two servers differ."""
    values = {(c["version"], c["server"]): short(c["outcome"]) for c in cells}
    if len(set(values.values())) == 1:
        return next(iter(values.values()))
    parts = []
    for version in sorted({v for v, _ in values}):
        mine = {s: o for (v, s), o in values.items() if v == version}
        if len(set(mine.values())) == 1:
            parts.append(f"{version}: {next(iter(mine.values()))}")
        else:
            parts += [f"{version} {s}: {o}" for s, o in sorted(mine.items())]
    return "; ".join(parts)


def cell_class(cells: list[dict]) -> str:
    if any(c["problem"] for c in cells):
        return "problem"
    if all(c["outcome"] == "skip" for c in cells):
        return "skip"
    return "diff" if any(c["outcome"] != c["reference"] for c in cells) else "same"


def gather(results: list[dict]) -> tuple[list[str], dict[str, str], dict[tuple[str, str], list[dict]]]:
    """(clients, group of each row in order, cells by (row, client)); the reference's cells by transport bio."""
    clients = [r["client"] for r in results]
    groups: dict[str, str] = {}
    by_cell: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for r in results:
        for c in r["cells"]:
            if c.get("transport") in (None, "bio"):
                groups.setdefault(c["row"], c["group"])
                by_cell[(c["row"], r["client"])].append(c)
    return clients, groups, by_cell


def html_page(results: list[dict]) -> str:
    clients, groups, by_cell = gather(results)
    libs = {r["client"]: r["library"] for r in results}
    out = [f"<!doctype html><meta charset=utf-8><title>tlslab: the matrix across clients</title><style>{STYLE}</style>",
           "<h1>tlslab: the certificate matrix across clients</h1>",
           "<p>Each cell is what the client showed for the row (both TLS versions, both servers; one value when "
           "they agree). The first column is the reference. A yellow cell differs from the reference's recorded "
           "outcome, marked B (bug), P (policy) or L (limit) with the reason; grey: the client cannot be asked "
           "(exit 89); red: the cell could not run.</p>",
           "<p class=legend><span style='background:#fff1c9'>differs</span><span style='background:#eee'>skip</span>"
           "<span style='background:#f8c9c9'>could not run</span><span style='color:#888'>same as the reference</span></p>",
           summary_table(clients, groups, by_cell, libs)]
    for group in dict.fromkeys(groups.values()):
        out.append(f"<h2>{html.escape(group)}</h2><table><tr><th>row</th>")
        out += [f"<th title='{html.escape(libs[c])}'>{html.escape(c)}</th>" for c in clients]
        out.append("</tr>")
        for row in [r for r, g in groups.items() if g == group]:
            out.append(f"<tr><td class=row title='{html.escape(row)}'>{html.escape(row)}</td>")
            for client, cells, klass in row_cells(by_cell, row, clients):
                if not cells:
                    out.append("<td class=none>not run</td>")
                    continue
                mark = why = ""
                if klass == "diff" or klass == "skip":
                    kind, reason = cells[0]["kind"], cells[0]["why"]
                    mark = f"<span class=mark>{KIND_MARK.get(kind, '?')}</span>"
                    why = f"<div class=why>{html.escape(reason)}</div>"
                if klass == "same" and client == clients[0]:
                    klass = "same ref"
                out.append(f"<td class='{klass}'>{mark}{html.escape(cell_value(cells))}{why}</td>")
            out.append("</tr>")
        out.append("</table>")
    return "\n".join(out) + "\n"


def row_cells(by_cell: dict, row: str, clients: list[str]):
    """(client, its cells of ROW or None, their class) for each client, in order."""
    for client in clients:
        cells = by_cell.get((row, client))
        yield client, cells, cell_class(cells) if cells else "none"


def tally(cells: list[dict]) -> str:
    return cell_class(cells) if cell_class(cells) != "diff" else KIND_MARK.get(cells[0]["kind"], "?")


def summary_table(clients, groups, by_cell, libs) -> str:
    """Per client: rows run, the same as the reference, differing by kind, skipped, could not run."""
    heads = ["client", "library", "rows", "same", "bug", "policy", "limit", "skip", "could not run"]
    out = ["<table class=summary><tr>" + "".join(f"<th>{h}</th>" for h in heads) + "</tr>"]
    for client in clients:
        marks = [tally(by_cell[(row, client)]) for row in groups if by_cell.get((row, client))]
        counts = [len(marks)] + [marks.count(k) for k in ("same", "B", "P", "L", "skip", "problem")]
        out.append(f"<tr><td>{html.escape(client)}</td><td style='text-align:left'>{html.escape(libs[client][:90])}</td>"
                   + "".join(f"<td>{n}</td>" for n in counts) + "</tr>")
    return "\n".join(out) + "</table>"


def markdown(results: list[dict]) -> str:
    clients, groups, by_cell = gather(results)
    lines = ["| row | " + " | ".join(clients) + " |", "|---|" + "---|" * len(clients)]
    for row, group in groups.items():
        cells = []
        for client, found, klass in row_cells(by_cell, row, clients):
            if not found:
                cells.append("")
                continue
            mark = {"diff": f"**{KIND_MARK.get(found[0]['kind'], '?')}** ", "problem": "**could not run** "}.get(klass, "")
            cells.append(mark + cell_value(found))
        lines.append(f"| {group}: {row} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--work", type=Path, required=True, help="the matrix gates' work folder (holds results/)")
    p.add_argument("--out", type=Path, required=True, help="where results.html and results.md go")
    p.add_argument("--expect", nargs="*", default=[], help="clients that must have results")
    ns = p.parse_args()
    try:
        results = load_results(ns.work / "results")
    except RowError as e:
        bad_input("results.py", e)
    have = {r["client"] for r in results}
    waiting = [c for c in ns.expect if c not in have and not crossings.runs_in_tree("matrix", c)]
    missing = [c for c in ns.expect if c not in have and c not in waiting]
    if waiting:
        print(f"results: no results for {', '.join(waiting)}: not this tree's draw (harness/crossings.py)")
    ns.out.mkdir(parents=True, exist_ok=True)
    (ns.out / "results.html").write_text(html_page(results))
    (ns.out / "results.md").write_text(markdown(results))
    cells = sum(len(r["cells"]) for r in results)
    print(f"results: {len(results)} clients, {cells} cells -> {ns.out / 'results.html'}, {ns.out / 'results.md'}")
    if missing:
        print(f"results: no results for {', '.join(missing)} (their matrix gate did not run)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
