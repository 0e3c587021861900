#!/usr/bin/python3
"""The lab's one picture of every client: every gate's rows down the side, every client across.

Reads what the last gate run left (the JUnit file each gate wrote into --junit, the matrix's cells
in --work/matrix/results, the PKITS cells in --work/pkits_full or --work/pkits: results.json) and each
client's records (clients/NAME/{matrix,faults,leaks,hostile,client,dns,pkits}.toml, harness/record.py:
the recorded differences with their kind and reason; profile.toml's [disabled]).
Writes one static HTML page: a section per gate, a column per client (tlsnb first), each cell the
outcome as the reference's ("as tlsnb"), the recorded difference with its kind (bug, policy,
limit) and reason, a skip with its reason, a failure, or "not run" (the default gate samples: the
page says which gates ran whole). Above them, the conformance view: the hostile rows by the RFC
clause their scenario puts a client to the test on (hostile/scenarios.py), a clause's cell conforming
or the worst kind its rows recorded. Filters by gate and by kind. Exit 2 on unreadable input; the
page is a picture, never a verdict (the gates are).

    /usr/bin/python3 -m clients.results_page --junit build/junit --work build/work --out build/work/results.html
"""
from __future__ import annotations

import argparse
import datetime
import html
import json
import sys
import tomllib
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from harness import cell_store
from harness.cell_store import Seen
from harness.crossings import tree
from harness.layout import CASE_FILES
from harness.record import KINDS, Difference, Record
from harness.rows import RowError
from pkits import table as pkits_table

ROOT = Path(__file__).resolve().parent.parent
CLIENTS = ROOT / "clients"
# gate -> (the reference's JUnit file, a client's JUnit files: the sampled crossing's and the whole one's
# (label full), the older first, the client's record file)
GATES = {
    "faults": ("faults", ("faults_{c}",), "faults.toml"),
    "leaks": ("leaks", ("leaks_{c}", "leaks_full_{c}"), "leaks.toml"),
    "hostile": ("hostile", ("hostile_{c}", "hostile_full_{c}"), "hostile.toml"),
    "client": ("client", ("client_sample_{c}", "client_{c}"), "client.toml"),
    "dns": ("dns", ("dns_{c}",), "dns.toml"),
}
ASKED_WITH = {"dns": "--ns"}   # a gate a client is crossed on only when its profile has the flag
FULL_ONLY = {"client"}  # crossed over the clients under label full only


@dataclass
class Cell:
    state: str          # same | diff | skip | fail | none | ref
    text: str = ""
    kind: str = ""
    why: str = ""
    tree: str = ""      # the tree the observation was made on, and its date (harness/cell_store.py)
    date: str = ""


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


def flags_of(client: str) -> list[str]:
    path = CLIENTS / client / "profile.toml"
    return tomllib.loads(path.read_text()).get("flags", []) if path.is_file() else []


def case_record(records: Record, case: str) -> Optional[Difference]:
    """A record names a case as the gate does (`Plain`, `Plain/bio`) or by its row (`Plain`)."""
    return records.get(case) or records.get(case.split("/")[0])


def gate_cell(gate: str, client: str, case: str, seen: dict[str, Seen], records: Record, disabled: dict) -> Cell:
    found = seen.get(case)
    reason = disabled.get(f"{gate}:{case}") or disabled.get(f"{gate}:{case.split('/')[0]}")
    if found is None:
        if reason:
            return Cell("skip", "disabled", why=reason)
        if client != "tlsnb" and gate in ASKED_WITH and ASKED_WITH[gate] not in flags_of(client):
            return Cell("na", f"not asked (no {ASKED_WITH[gate]})")
        if client != "tlsnb" and case.endswith("/fd") and "--transport" not in flags_of(client):
            return Cell("na", "one transport (bio)")
        return Cell("none", "not run")
    return dated(judged_cell(client, case, found.verdict, found.text, records), found)


def judged_cell(client: str, case: str, verdict: str, message: str, records: Record) -> Cell:
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


def dated(cell: Cell, seen: Seen) -> Cell:
    cell.tree, cell.date = seen.tree, seen.date
    return cell


Observed = dict[str, dict[str, dict[str, Seen]]]   # gate -> client -> case -> its last observation


SINCE = 0.0   # --since: a results file older than this was not written by the run being read


def fresh(path: Path) -> bool:
    """PATH exists and the run being read wrote it (its mtime not before --since)."""
    return path.is_file() and path.stat().st_mtime >= SINCE


def observed_now(clients: list[str], junit_dir: Path, work: Path, now: tuple[str, str]) -> Observed:
    """Every cell the last run left (its JUnit files, the matrix's and PKITS's results), as observations;
    with --since, only the files that run wrote (an older file's cells are not the run's to date)."""
    seen: Observed = {"matrix": matrix_now(clients, work, now)}
    for gate, (ref_file, client_files, _) in GATES.items():
        seen[gate] = {}
        for c in clients:
            files = [junit_dir / f"{ref_file}.xml"] if c == "tlsnb" else \
                sorted((junit_dir / f"{f.format(c=c)}.xml" for f in client_files),
                       key=lambda p: p.stat().st_mtime if p.is_file() else 0)
            seen[gate][c] = {case: Seen(v, m, *now) for path in files if fresh(path)
                             for case, (v, m) in read_junit(path).items()}
    seen["pkits"] = pkits_now(clients, work, now)
    return seen


def observed(clients: list[str], junit_dir: Path, work: Path, store: Path, now: tuple[str, str]) -> Observed:
    """The kept observations (harness/last_cells) with the last run's laid over them."""
    fresh = observed_now(clients, junit_dir, work, now)
    out: Observed = {}
    for c in clients:
        try:
            kept = cell_store.load(c, store)
        except ValueError as e:
            raise PageError(str(e)) from e
        mine = cell_store.merged(kept, {g: fresh[g].get(c, {}) for g in fresh})
        for gate, cases in mine.items():
            out.setdefault(gate, {})[c] = cases
    for gate in fresh:
        out.setdefault(gate, {})
        for c in clients:
            out[gate].setdefault(c, {})
    return out


def reference_row(case: str, rows: list[str]) -> str:
    if case in rows:
        return case
    crossed = [r for r in (f"{case}/bio", f"{case}/fd") if r in rows]
    return crossed[0] if crossed else case


def gate_section(gate: str, clients: list[str], seen: Observed) -> tuple[list[str], dict[tuple[str, str], Cell], dict]:
    per_client = dict(seen[gate])
    rows: list[str] = list(per_client["tlsnb"])
    for c in clients[1:]:
        # a client without --transport runs a row once, as the case itself (Plain for Plain/bio): its
        # cell goes on the reference's bio row, or on its one row of a row that has one transport (X/fd)
        per_client[c] = {reference_row(case, rows): v for case, v in per_client[c].items()}
        rows += [case for case in per_client[c] if case not in rows]
    cells = {}
    for c in clients:
        records = read_record(c, GATES[gate][2])
        disabled = disabled_of(c) if c != "tlsnb" else {}
        for case in rows:
            cells[(case, c)] = gate_cell(gate, c, case, per_client[c], records, disabled)
    ran = {c: bool(per_client[c]) for c in clients}
    return rows, cells, ran


def matrix_now(clients: list[str], work: Path, now: tuple[str, str]) -> dict[str, dict[str, Seen]]:
    """client -> row -> the row's cells as one observation: `ran` and their outcomes, or `problem` and why."""
    folder = work / "matrix" / "results"
    out: dict[str, dict[str, Seen]] = {}
    for c in clients:
        path = folder / f"{c}.json"
        if not fresh(path):
            continue
        try:
            result = json.loads(path.read_text())
        except ValueError as e:
            raise PageError(f"{path}: not a results file ({e})") from e
        by: dict[str, list[dict]] = {}
        for cell in result.get("cells", []):
            by.setdefault(cell["row"], []).append(cell)
        out[c] = {row: Seen("problem", next(x["problem"] for x in mine if x.get("problem")), *now)
                  if any(x.get("problem") for x in mine) else Seen("ran", short(mine), *now) for row, mine in by.items()}
    return out


def matrix_section(clients: list[str], seen: Observed) -> tuple[list[str], dict[tuple[str, str], Cell], dict]:
    order = {name: i for i, name in enumerate(matrix_rows())}
    rows = sorted({row for c in clients for row in seen["matrix"].get(c, {})}, key=lambda r: (order.get(r, len(order)), r))
    cells = {}
    for c in clients:
        records = read_record(c, "matrix.toml")
        mine = seen["matrix"].get(c, {})
        for row in rows:
            found = mine.get(row)
            if found is None:
                cells[(row, c)] = Cell("none", "not run")
            elif found.verdict == "problem":
                cells[(row, c)] = dated(Cell("fail", "could not run", why=found.text), found)
            elif c == "tlsnb":
                cells[(row, c)] = dated(Cell("ref", found.text), found)
            elif r := records.get(row):
                cells[(row, c)] = dated(Cell("diff", found.text, r.kind, r.why), found)
            else:
                cells[(row, c)] = dated(Cell("same", "as tlsnb"), found)
    ran = {c: bool(seen["matrix"].get(c)) for c in clients}
    return rows, cells, ran


def matrix_rows() -> list[str]:
    """matrix/rows.toml's row names in its order (the page's order of the matrix section)."""
    return [t["name"] for t in tomllib.loads((ROOT / "matrix" / "rows.toml").read_text()).get("row", [])]


PKITS_RUNS = ("pkits_full", "pkits")   # the whole suite's run, the default gate's sample: the newer one
PKITS_STATES = {"agree": "agree", "skip": "skip", "fail": "fail", "unrecorded": "fail"}
REFUSED_TOO = " (its control refused too)"


def pkits_now(clients: list[str], work: Path, now: tuple[str, str]) -> dict[str, dict[str, Seen]]:
    """client -> test -> its state (agree, skip, fail or the recorded kind) and outcome, from the newer run."""
    runs = [work / run / "results.json" for run in PKITS_RUNS if fresh(work / run / "results.json")]
    found = max(runs, key=lambda p: p.stat().st_mtime) if runs else None
    out: dict[str, dict[str, Seen]] = {}
    if found is None:
        return out
    try:
        result = json.loads(found.read_text())
    except ValueError as e:
        raise PageError(f"{found}: not a results file ({e})") from e
    for x in result["cells"]:
        if x["client"] in clients:
            text = (x["outcome"] or "").replace("handshake/X509_V_ERR_", "x509:").replace("handshake/SSL_R_", "ssl:")
            if x["state"] == "agree" and x.get("control_refused"):
                text += REFUSED_TOO
            out.setdefault(x["client"], {})[x["test"]] = Seen(x["state"], text or x["state"], *now)
    return out


def pkits_section(clients: list[str], seen: Observed) -> tuple[list[str], dict[tuple[str, str], Cell], dict]:
    """PKITS (pkits/): NIST's tests down the side, every client across (tlsnb too: NIST is the reference),
    each cell coloured by its agreement with NIST's verdict or the kind of its recorded difference."""
    observed_tests = {t for c in clients for t in seen["pkits"].get(c, {})}
    tests = [t for t in pkits_table.rows() if t.test in observed_tests]
    rows = [f"{t.test} {t.name}" + ("" if t.settings == "-" else f" [{t.settings}]") + f": {t.verdict}" for t in tests]
    cells = {(row, c): Cell("none", "not run") for row in rows for c in clients}
    for c in clients:
        records = read_record(c, "pkits.toml")
        for t, row in zip(tests, rows):
            found = seen["pkits"].get(c, {}).get(t.test)
            if found is None:
                continue
            state = PKITS_STATES.get(found.verdict, "diff")
            d = records.get(t.test) if state == "diff" else None
            cells[(row, c)] = dated(Cell(state, found.text, found.verdict if state == "diff" else "",
                                         d.why if d else ""), found)
    ran = {c: bool(seen["pkits"].get(c)) for c in clients}
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
td.na { color: #bbb; }
td.skip { background: #eee; color: #777; } td.fail { background: #f8c9c9; } td.agree { background: #d6f5d6; }
td.bug { background: #ffc4c4; } td.policy { background: #d9e8ff; } td.limit { background: #fff1c9; }
.seen { color: #999; font-size: 10px; display: block; }
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


TODAY = datetime.date.today()


def render_cell(cell: Cell) -> str:
    cls = cell.kind if cell.state == "diff" and cell.kind in KINDS else cell.state
    mark = f'<span class="k">{cell.kind}</span>' if cell.state == "diff" else ""
    brief = cell.why if len(cell.why) <= 110 else cell.why[:105].rsplit(" ", 1)[0] + " ..."
    why = f'<span class="why">{html.escape(brief)}</span>' if cell.why and cell.state != "same" else ""
    title = f' title="{html.escape(cell.why, quote=True)}"' if cell.why else ""
    age = Seen("", "", cell.tree, cell.date).age(TODAY) if cell.date else ""
    seen = f'<span class="seen">{html.escape(cell.tree)}, {age}</span>' if cell.tree else ""
    return f'<td class="{cls}"{title}>{mark}{html.escape(cell.text)}{why}{seen}</td>'


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
    for label in ("as tlsnb", *KINDS, "skip", "fail", "not asked", "not run"):
        tds = []
        for c in clients[1:]:
            n = 0
            for gate, (rows, cells, _) in sections.items():
                for row in rows if gate != "pkits" else []:   # pkits' cells are judged by NIST, not by tlsnb
                    cell = cells[(row, c)]
                    n += {"as tlsnb": cell.state == "same", "skip": cell.state == "skip", "fail": cell.state == "fail",
                          "not run": cell.state == "none", "not asked": cell.state == "na"}.get(
                        label, cell.state == "diff" and cell.kind == label)
            tds.append(f"<td>{n}</td>")
        lines.append(f"<tr><th>{label}</th>{''.join(tds)}</tr>")
    return f'<table class="sum"><tr><th></th>{head}</tr>{"".join(lines)}</table>'


# A clause's cell: the worst of its rows' cells, in this order (the first found names the colour).
CONFORMANCE_ORDER = ("fail", "bug", "policy", "limit", "skip", "none")


def scenario_clauses() -> dict[str, tuple[str, str, bool]]:
    """Each hostile row: (its scenario's clause, the requirement, whether tlsnb's own row says it
    breaks it: a why that starts `tlsnb breaks`)."""
    from harness.cases import load_cases
    from hostile.hostile_gate import row_scenarios
    return {case: (sc.clause, sc.requires, (row.why or "").lstrip().startswith("tlsnb breaks"))
            for case, (row, sc) in row_scenarios(load_cases(ROOT / "hostile" / "hostile.toml")).items()}


def by_clause(rows: list[str], clauses: dict) -> dict[str, list[str]]:
    """The page's hostile rows (a row, or a row and a transport) grouped by their scenario's clause."""
    out: dict[str, list[str]] = {}
    for case in rows:
        out.setdefault(clauses.get(case.split("/")[0], ("?", "", False))[0], []).append(case)
    return out


def conformance_tally(clients: list[str], hostile: tuple) -> dict[str, dict[str, int]]:
    """Each client's clauses counted by their cell in the conformance view (conforms, bug, policy, ...)."""
    rows, cells, _ = hostile
    clauses = scenario_clauses()
    out: dict[str, dict[str, int]] = {c: {} for c in clients}
    for cases in by_clause(rows, clauses).values():
        for c in clients:
            word = clause_cell(c, cases, cells, clauses)[0]
            out[c][word] = out[c].get(word, 0) + 1
    return out


def clause_cell(c: str, cases: list[str], cells: dict, clauses: dict) -> tuple[str, str, str]:
    """A client's cell of one clause: its word, its text, its class."""
    got = [cells[(case, c)] for case in cases]
    states = [x.kind if x.state == "diff" else x.state for x in got if x.state != "na"]  # na: one transport
    broken = c == "tlsnb" and any(clauses.get(case.split("/")[0], ("", "", False))[2] for case in cases)
    worst = "bug" if broken else next((k for k in CONFORMANCE_ORDER if k in states), "agree")
    if not states or all(x == "none" for x in states):
        worst = "none" if states else "na"
    counts = ", ".join(f"{k} {states.count(k)}" for k in CONFORMANCE_ORDER if states.count(k))
    n = sum(x in ("same", "ref") for x in states)
    word = {"agree": "conforms", "none": "not run", "na": "not asked"}.get(worst, worst)
    return word, word + f" ({n} of {len(states)} as tlsnb" + (f"; {counts}" if counts else "") + ")", worst


def conformance(clients: list[str], hostile: tuple) -> str:
    """The hostile rows by RFC clause down the side, every client across: a clause's cell is conforming
    (every row of it held as the reference's, green) or the worst of its rows' recorded kinds."""
    rows, cells, _ = hostile
    clauses = scenario_clauses()
    grouped = by_clause(rows, clauses)
    head = "".join(f"<th>{html.escape(c)}</th>" for c in clients)
    body = []
    for clause in sorted(grouped, key=lambda c: [(0, int(x), "") if x.isdigit() else (1, 0, x)
                                                   for x in c.replace("-", ".").split(".")]):
        tds = []
        for c in clients:
            _, text, cls = clause_cell(c, grouped[clause], cells, clauses)
            tds.append(f'<td class="{cls}">{html.escape(text)}</td>')
        requires = "; ".join(sorted({clauses[k.split('/')[0]][1] for k in grouped[clause] if k.split('/')[0] in clauses}))
        body.append(f'<tr class="r" data-kinds=""><td class="case" title="{html.escape(requires, quote=True)}">'
                    f'{html.escape(clause)}</td>{"".join(tds)}</tr>')
    return (f'<section data-gate="conformance"><h2>conformance <span class="note">(the hostile rows by the RFC clause '
            f'each puts a client to the test on, {len(grouped)} clauses; a clause is <b>conforms</b> when each of its rows '
            f'held the reference\'s own outcome, else the worst kind recorded; hover a clause for its requirements)</span></h2>'
            f'<table><tr><th class="case">clause</th>{head}</tr>{"".join(body)}</table></section>')


def page(clients: list[str], sections: dict, notes: dict) -> str:
    gates = "".join(f'<label><input type="checkbox" class="gate" value="{g}" checked> {g}</label>'
                    for g in ("conformance", *sections))
    kinds = "".join(f'<label><input type="checkbox" class="kind" value="{k}"{" checked" if k == "all" else ""}> {k}</label>'
                    for k in ("all", *KINDS, "fail"))
    body = "".join(section(g, clients, *sections[g], notes[g]) for g in sections)
    return (f"<!doctype html><meta charset='utf-8'><title>tlslab: every client</title><style>{STYLE}</style>"
            f"<h1>tlslab: every gate's rows, every client</h1><p class='note'>Each cell (hover it for the whole reason): <b>as tlsnb</b> (the client "
            f"held the reference's own expectation), a recorded difference with its kind (<b>bug</b>, <b>policy</b>, "
            f"<b>limit</b>) and reason, a skip (exit 89 or disabled, with why), a failure, or not run. "
            f"Each cell is the latest observation of it the tree kept (harness/last_cells, written by <code>--full</code>) "
            f"or the last run made, with the tree it ran on and its age; only a cell no kept run ever ran says not run. The pkits section holds every client (tlsnb too) to NIST's verdict: "
            f"<b>agree</b> (green), or the recorded difference's kind; it is left out of the summary.</p>{summary(clients, sections)}"
            f"<div class='bar'>gates: {gates} &nbsp; rows with: {kinds}</div>{conformance(clients, sections['hostile'])}{body}"
            f"<script>{SCRIPT}</script>")


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--junit", type=Path, required=True, help="the folder of the gates' JUnit files (build/junit)")
    p.add_argument("--work", type=Path, required=True, help="the lab's work folder (build/work: the matrix's cells)")
    p.add_argument("--out", type=Path, required=True, help="the page to write")
    p.add_argument("--store", type=Path, default=cell_store.STORE,
                   help="the kept observations, a file a client (default harness/last_cells: committed)")
    p.add_argument("--tree", help="the tree the run ran on (default: this checkout's, as harness.crossings names it)")
    p.add_argument("--since", type=float, default=0.0, metavar="EPOCH",
                   help="only results files written at or after this time are the run's (lab_gate passes its start)")
    p.add_argument("--keep", action="store_true",
                   help="write this run's observations over the kept ones into --store (run_all.sh --full does)")
    return p.parse_args()


def store_size(store: Path) -> int:
    return sum(p.stat().st_size for p in store.glob("*.tsv"))


def main() -> int:
    global SINCE
    args = parse_args()
    SINCE = args.since
    if not args.junit.is_dir():
        print(f"results_page.py: --junit: '{args.junit}' is not a folder (run the gates first: ./run_all.sh)", file=sys.stderr)
        return 2
    clients = clients_here()
    try:
        seen = observed(clients, args.junit, args.work, args.store, (args.tree or tree(), TODAY.isoformat()))
        sections = {"matrix": matrix_section(clients, seen)}
        for gate in GATES:
            sections[gate] = gate_section(gate, clients, seen)
        sections["pkits"] = pkits_section(clients, seen)
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
    never = {c: sum(cells[(r, c)].state == "none" for g, (rows, cells, _) in sections.items() for r in rows)
             for c in clients}
    print(f"results page: {args.out} ({total} rows, {len(clients)} clients; never run: "
          f"{', '.join(f'{c} {n}' for c, n in never.items())})")
    words = ("conforms", *KINDS, "skip", "fail", "not run", "not asked")
    print("conformance, clauses by their cell: " + " ".join(f"{w:>9}" for w in words))
    for c, tally in conformance_tally(clients, sections["hostile"]).items():
        print(f"  {c:<32} " + " ".join(f"{tally.get(w, 0):>9}" for w in words))
    if args.keep:
        for c in clients:
            cell_store.save(c, {g: seen[g].get(c, {}) for g in seen}, args.store)
        print(f"results page: kept every cell's last observation in {args.store} ({store_size(args.store)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
