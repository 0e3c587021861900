#!/usr/bin/python3
"""The lab's one picture of every client: every gate's rows down the side, every client across.

Reads what the last gate run left (the JUnit file each gate wrote into --junit, the matrix's cells
in --work/matrix/results, the PKITS cells in --work/pkits_full or --work/pkits: results.json) and each
client's records (clients/NAME/{matrix,faults,leaks,hostile,client,dns,pkits}.toml, harness/record.py:
the recorded differences with their kind and reason; profile.toml's [disabled]).
Writes one static HTML page: a section per gate, a column per client (tlsnb first), each cell the
outcome as the reference's ("as tlsnb"), the recorded difference with its kind (bug, policy,
limit) and reason, a skip with its reason, a failure, or "not run" (the default gate samples: the
page says which gates ran whole). Filters by gate and by kind. Exit 2 on unreadable input; the
page is a picture, never a verdict (the gates are).

    /usr/bin/python3 -m clients.results_page --junit build/junit --work build/work --out build/work/results.html
"""
from __future__ import annotations

import argparse
import html
import json
import sys
import tomllib
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from harness.layout import CASE_FILES
from harness.record import KINDS, Difference, Record
from harness.rows import RowError
from pkits import table as pkits_table

ROOT = Path(__file__).resolve().parent.parent
CLIENTS = ROOT / "clients"
# gate -> (the reference's JUnit file, a client's JUnit file pattern, the client's record file)
GATES = {
    "faults": ("faults", "faults_{c}", "faults.toml"),
    "leaks": ("leaks", "leaks_{c}", "leaks.toml"),
    "hostile": ("hostile", "hostile_{c}", "hostile.toml"),
    "client": ("client", "client_{c}", "client.toml"),
    "dns": ("dns", "dns_{c}", "dns.toml"),
}
FULL_ONLY = {"client"}  # crossed over the clients under label full only


@dataclass
class Cell:
    state: str          # same | diff | skip | fail | none | ref
    text: str = ""
    kind: str = ""
    why: str = ""


class PageError(Exception):
    pass


def read_junit(path: Path) -> dict[str, tuple[str, str]]:
    """case -> (PASS|FAIL|SKIP, message) from one gate's JUnit file (missing file: empty)."""
    if not path.is_file():
        return {}
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        raise PageError(f"{path}: not a JUnit file ({e})") from e
    cases = {}
    for case in root.iter("testcase"):
        verdict, message = "PASS", ""
        for child in case:
            if child.tag in ("failure", "error"):
                verdict, message = "FAIL", child.get("message") or (child.text or "")
            elif child.tag == "skipped":
                verdict, message = "SKIP", child.get("message") or ""
        cases[case.get("name", "")] = (verdict, message)
    return cases


def read_record(client: str, file: str) -> Record:
    """A client's record of differences (harness/record.py; a missing file: empty, as the reference's)."""
    try:
        label = file.removesuffix(".toml")   # a case gate's record may name the row terms it does not hold
        return Record(CLIENTS / client / file, f"{label} {client}", without=label in CASE_FILES)
    except RowError as e:
        raise PageError(str(e)) from e


def clients_here() -> list[str]:
    names = [p.parent.name for p in sorted(CLIENTS.glob("*/profile.toml"))]
    return ["tlsnb"] + [n for n in names if n != "tlsnb" and n != "examples"]


def disabled_of(client: str) -> dict[str, str]:
    path = CLIENTS / client / "profile.toml"
    if not path.is_file():
        return {}
    return tomllib.loads(path.read_text()).get("disabled", {})


def case_record(records: Record, case: str) -> Optional[Difference]:
    """A record names a case as the gate does (`Plain`, `Plain/bio`) or by its row (`Plain`)."""
    return records.get(case) or records.get(case.split("/")[0])


def gate_cell(gate: str, client: str, case: str, junit: dict, records: Record, disabled: dict) -> Cell:
    found = junit.get(case)
    reason = disabled.get(f"{gate}:{case}") or disabled.get(f"{gate}:{case.split('/')[0]}")
    if found is None:
        if reason:
            return Cell("skip", "disabled", why=reason)
        one_transport = case.endswith("/fd") and not any(k.endswith("/fd") for k in junit)
        return Cell("none", "one transport (bio)" if junit and one_transport else "not run")
    verdict, message = found
    if verdict == "FAIL":
        return Cell("fail", "FAIL", why=message[:300])
    record = case_record(records, case)
    if verdict == "SKIP":
        if record is not None:
            return Cell("diff", "skip (exit 89)", record.kind, record.why)
        return Cell("skip", "skip", why=message[:300])
    if client == "tlsnb":
        return Cell("ref", "pass")
    if record is not None:
        held = [str(record.got)] if record.got is not None else []
        return Cell("diff", " ".join(held + [f"not {t}" for t in record.without]), record.kind, record.why)
    return Cell("same", "as tlsnb")


def gate_section(gate: str, clients: list[str], junit_dir: Path) -> tuple[list[str], dict[tuple[str, str], Cell], dict]:
    ref_file, client_file, record_file = GATES[gate]
    per_client = {"tlsnb": read_junit(junit_dir / f"{ref_file}.xml")}
    for c in clients[1:]:
        per_client[c] = read_junit(junit_dir / f"{client_file.format(c=c)}.xml")
    rows: list[str] = list(per_client["tlsnb"])
    for c in clients[1:]:
        # a client without --transport runs a row once, as the case itself (Plain for Plain/bio): its
        # cell goes on the reference's bio row
        per_client[c] = {(f"{case}/bio" if case not in rows and f"{case}/bio" in rows else case): v
                         for case, v in per_client[c].items()}
        rows += [case for case in per_client[c] if case not in rows]
    cells = {}
    for c in clients:
        records = read_record(c, record_file)
        disabled = disabled_of(c) if c != "tlsnb" else {}
        for case in rows:
            cells[(case, c)] = gate_cell(gate, c, case, per_client[c], records, disabled)
    ran = {c: bool(per_client[c]) for c in clients}
    return rows, cells, ran


def matrix_section(clients: list[str], work: Path) -> tuple[list[str], dict[tuple[str, str], Cell], dict]:
    folder = work / "matrix" / "results"
    results = {}
    for c in clients:
        path = folder / f"{c}.json"
        if path.is_file():
            try:
                results[c] = json.loads(path.read_text())
            except ValueError as e:
                raise PageError(f"{path}: not a results file ({e})") from e
    rows: list[str] = []
    by = {}
    for c, result in results.items():
        for cell in result.get("cells", []):
            if cell["row"] not in rows:
                rows.append(cell["row"])
            by.setdefault((cell["row"], c), []).append(cell)
    cells = {}
    for c in clients:
        records = read_record(c, "matrix.toml")
        for row in rows:
            mine = by.get((row, c))
            if not mine:
                cells[(row, c)] = Cell("none", "not run")
            elif any(x.get("problem") for x in mine):
                cells[(row, c)] = Cell("fail", "could not run", why=next(x["problem"] for x in mine if x.get("problem")))
            elif c == "tlsnb":
                cells[(row, c)] = Cell("ref", short(mine))
            elif r := records.get(row):
                cells[(row, c)] = Cell("diff", short(mine), r.kind, r.why)
            else:
                cells[(row, c)] = Cell("same", "as tlsnb")
    ran = {c: c in results for c in clients}
    return rows, cells, ran


PKITS_RUNS = ("pkits_full", "pkits")   # the whole suite's run, the default gate's sample: the newer one
PKITS_STATES = {"agree": "agree", "skip": "skip", "fail": "fail", "unrecorded": "fail"}


def pkits_section(clients: list[str], work: Path) -> tuple[list[str], dict[tuple[str, str], Cell], dict]:
    """PKITS (pkits/): NIST's tests down the side, every client across (tlsnb too: NIST is the reference),
    each cell coloured by its agreement with NIST's verdict or the kind of its recorded difference."""
    runs = [work / run / "results.json" for run in PKITS_RUNS if (work / run / "results.json").is_file()]
    found = max(runs, key=lambda p: p.stat().st_mtime) if runs else None
    if found is None:
        return [], {}, {c: False for c in clients}
    try:
        result = json.loads(found.read_text())
    except ValueError as e:
        raise PageError(f"{found}: not a results file ({e})") from e
    rows = [f"{t['test']} {t['name']}" + ("" if t["settings"] == "-" else f" [{t['settings']}]") + f": {t['verdict']}"
            for t in result["tests"]]
    label = {t["test"]: row for t, row in zip(result["tests"], rows)}
    cells = {(row, c): Cell("none", "not run") for row in rows for c in clients}
    for x in result["cells"]:
        if x["client"] not in clients:
            continue
        state = PKITS_STATES.get(x["state"], "diff")
        text = (x["outcome"] or "").replace("handshake/X509_V_ERR_", "x509:").replace("handshake/SSL_R_", "ssl:")
        if x["state"] == "agree" and x.get("control_refused"):
            text += " (its control refused too)"
        cells[(label[x["test"]], x["client"])] = Cell(state, text or x["state"],
                                                      x["state"] if state == "diff" else "", x.get("why", ""))
    ran = {c: c in result["clients"] for c in clients}
    return rows, cells, ran


def pkits_note(rows: int) -> str:
    whole = len(pkits_table.rows())
    return f"the whole suite, {whole} tests" if rows == whole else \
        f"{rows} of {whole} tests: the default gate's sample (the whole suite: label full, pkits_full)"


def short(cells: list[dict]) -> str:
    values = {(x["version"], x["server"]): (x["outcome"] or "?") for x in cells}
    texts = {v.replace("handshake/X509_V_ERR_", "x509:").replace("handshake/SSL_R_", "ssl:") for v in values.values()}
    return "; ".join(sorted(texts))


STYLE = """
body { font: 13px/1.4 system-ui, sans-serif; margin: 20px; color: #222; }
h1 { font-size: 20px; margin-bottom: 4px; } h2 { font-size: 15px; margin: 26px 0 6px; }
.note { color: #555; max-width: 70em; }
table { border-collapse: collapse; table-layout: fixed; width: 100%; }
th, td { border: 1px solid #ccc; padding: 2px 5px; vertical-align: top; overflow-wrap: anywhere; font-size: 12px; }
th { background: #f3f3f3; position: sticky; top: 0; } td.case { width: 16em; font-family: monospace; }
td.same { color: #999; } td.ref { color: #222; } td.none { color: #bbb; background: #fafafa; }
td.skip { background: #eee; color: #777; } td.fail { background: #f8c9c9; } td.agree { background: #d6f5d6; }
td.bug { background: #ffc4c4; } td.policy { background: #d9e8ff; } td.limit { background: #fff1c9; }
.k { font-weight: bold; margin-right: 4px; } .why { color: #555; font-size: 11px; display: block; }
.bar { position: sticky; top: 0; background: #fff; padding: 6px 0; z-index: 2; border-bottom: 1px solid #ddd; }
.bar label { margin-right: 12px; } table.sum td { text-align: right; } table.sum { width: auto; }
"""

SCRIPT = """
function apply() {
  const gates = new Set([...document.querySelectorAll('input.gate:checked')].map(e => e.value));
  const kinds = new Set([...document.querySelectorAll('input.kind:checked')].map(e => e.value));
  document.querySelectorAll('section').forEach(s => s.style.display = gates.has(s.dataset.gate) ? '' : 'none');
  document.querySelectorAll('tr.r').forEach(tr => {
    const has = tr.dataset.kinds.split(' ').filter(k => k);
    tr.style.display = (kinds.has('all') || has.some(k => kinds.has(k))) ? '' : 'none';
  });
}
document.querySelectorAll('input').forEach(e => e.addEventListener('change', apply));
"""


def render_cell(cell: Cell) -> str:
    cls = cell.kind if cell.state == "diff" and cell.kind in KINDS else cell.state
    mark = f'<span class="k">{cell.kind}</span>' if cell.state == "diff" else ""
    brief = cell.why if len(cell.why) <= 110 else cell.why[:105].rsplit(" ", 1)[0] + " ..."
    why = f'<span class="why">{html.escape(brief)}</span>' if cell.why and cell.state != "same" else ""
    title = f' title="{html.escape(cell.why, quote=True)}"' if cell.why else ""
    return f'<td class="{cls}"{title}>{mark}{html.escape(cell.text)}{why}</td>'


def section(gate: str, clients: list[str], rows: list[str], cells: dict, ran: dict, full_note: str) -> str:
    head = "".join(f"<th>{html.escape(c)}{'' if ran[c] else ' (not run)'}</th>" for c in clients)
    body = []
    for row in rows:
        kinds = {cells[(row, c)].kind for c in clients if cells[(row, c)].state == "diff"}
        kinds |= {"fail"} if any(cells[(row, c)].state == "fail" for c in clients) else set()
        tds = "".join(render_cell(cells[(row, c)]) for c in clients)
        body.append(f'<tr class="r" data-kinds="{" ".join(sorted(kinds))}"><td class="case">{html.escape(row)}</td>{tds}</tr>')
    return (f'<section data-gate="{gate}"><h2>{gate} <span class="note">({len(rows)} rows; {full_note})</span></h2>'
            f'<table><tr><th class="case">row</th>{head}</tr>{"".join(body)}</table></section>')


def summary(clients: list[str], sections: dict) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in clients[1:])
    lines = []
    for label in ("as tlsnb", *KINDS, "skip", "fail", "not run"):
        tds = []
        for c in clients[1:]:
            n = 0
            for gate, (rows, cells, _) in sections.items():
                for row in rows if gate != "pkits" else []:   # pkits' cells are judged by NIST, not by tlsnb
                    cell = cells[(row, c)]
                    n += {"as tlsnb": cell.state == "same", "skip": cell.state == "skip", "fail": cell.state == "fail",
                          "not run": cell.state == "none"}.get(label, cell.state == "diff" and cell.kind == label)
            tds.append(f"<td>{n}</td>")
        lines.append(f"<tr><th>{label}</th>{''.join(tds)}</tr>")
    return f'<table class="sum"><tr><th></th>{head}</tr>{"".join(lines)}</table>'


def page(clients: list[str], sections: dict, notes: dict) -> str:
    gates = "".join(f'<label><input type="checkbox" class="gate" value="{g}" checked> {g}</label>' for g in sections)
    kinds = "".join(f'<label><input type="checkbox" class="kind" value="{k}"{" checked" if k == "all" else ""}> {k}</label>'
                    for k in ("all", *KINDS, "fail"))
    body = "".join(section(g, clients, *sections[g], notes[g]) for g in sections)
    return (f"<!doctype html><meta charset='utf-8'><title>tlslab: every client</title><style>{STYLE}</style>"
            f"<h1>tlslab: every gate's rows, every client</h1><p class='note'>Each cell (hover it for the whole reason): <b>as tlsnb</b> (the client "
            f"held the reference's own expectation), a recorded difference with its kind (<b>bug</b>, <b>policy</b>, "
            f"<b>limit</b>) and reason, a skip (exit 89 or disabled, with why), a failure of the last run, or not run. "
            f"The default gate samples the matrix and the leak rows and runs the client rows under <code>--full</code> only: "
            f"each section says what ran. The pkits section holds every client (tlsnb too) to NIST's verdict: "
            f"<b>agree</b> (green), or the recorded difference's kind; it is left out of the summary.</p>{summary(clients, sections)}"
            f"<div class='bar'>gates: {gates} &nbsp; rows with: {kinds}</div>{body}<script>{SCRIPT}</script>")


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--junit", type=Path, required=True, help="the folder of the gates' JUnit files (build/junit)")
    p.add_argument("--work", type=Path, required=True, help="the lab's work folder (build/work: the matrix's cells)")
    p.add_argument("--out", type=Path, required=True, help="the page to write")
    return p.parse_args()


def main() -> int:
    args = parse_args()
    if not args.junit.is_dir():
        print(f"results_page.py: --junit: '{args.junit}' is not a folder (run the gates first: ./run_all.sh)", file=sys.stderr)
        return 2
    clients = clients_here()
    try:
        sections = {"matrix": matrix_section(clients, args.work)}
        for gate in GATES:
            sections[gate] = gate_section(gate, clients, args.junit)
        sections["pkits"] = pkits_section(clients, args.work)
    except PageError as e:
        print(f"results_page.py: {e}", file=sys.stderr)
        return 2
    notes = {}
    for gate, (rows, cells, ran) in sections.items():
        whole = [c for c in clients[1:] if ran[c] and not any(cells[(r, c)].state == "none" for r in rows)]
        notes[gate] = (f"whole for {', '.join(whole)}" if whole else "sampled") + \
                      ("; crossed over the clients under --full only" if gate in FULL_ONLY else "")
    notes["pkits"] = pkits_note(len(sections["pkits"][0]))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(page(clients, sections, notes))
    total = sum(len(rows) for rows, _, _ in sections.values())
    print(f"results page: {args.out} ({total} rows, {len(clients)} clients)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
