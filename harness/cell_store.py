"""The last observation of every cell of the results page, kept where a clean clone has it.

One file a client, harness/last_cells/NAME.tsv: first the runs its cells come from, `@ID tree date`
(ID a small number), then `gate case verdict text ID`, tab-separated, sorted by gate and case, one line
a cell (the case gates' PASS/FAIL/SKIP and JUnit message, the matrix's outcome of a row, PKITS's state
and outcome). Written by clients/results_page.py `--keep`
(run_all.sh `--full` passes it: the whole crossings' run), merging the run's observations over the
ones kept; the page reads it and lays any newer run's cells over it, so a cell says "not run" only
when no kept run ever ran it. Text is cut at TEXT_MAX characters (a failure's message is the gate's
to print in full).
"""
from __future__ import annotations

import datetime
from dataclasses import dataclass
from pathlib import Path

from .layout import ROOT

STORE = ROOT / "harness" / "last_cells"
TEXT_MAX = 160
HEADER = "# @run tree date, then gate case verdict text run (harness/cell_store.py; written by clients.results_page --keep)"


@dataclass(frozen=True)
class Seen:
    verdict: str
    text: str
    tree: str
    date: str          # ISO date

    def age(self, today: datetime.date) -> str:
        try:
            days = (today - datetime.date.fromisoformat(self.date)).days
        except ValueError:
            return "?"
        return "today" if days <= 0 else f"{days} d ago"


def clean(text: str) -> str:
    return " ".join(text.split())[:TEXT_MAX]


def load(client: str, store: Path = STORE) -> dict[str, dict[str, Seen]]:
    """gate -> case -> Seen, from STORE/CLIENT.tsv (none kept: empty)."""
    path = store / f"{client}.tsv"
    out: dict[str, dict[str, Seen]] = {}
    if not path.is_file():
        return out
    runs: dict[str, tuple[str, str]] = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line or line.startswith("#"):
            continue
        fields = line.split("\t")
        if line.startswith("@") and len(fields) == 3:
            runs[fields[0][1:]] = (fields[1], fields[2])
            continue
        if len(fields) != 5 or fields[4] not in runs:
            raise ValueError(f"{path}:{number}: want gate, case, verdict, text and a run named by an @ line")
        gate, case, verdict, text, run = fields
        out.setdefault(gate, {})[case] = Seen(verdict, text, *runs[run])
    return out


def save(client: str, cells: dict[str, dict[str, Seen]], store: Path = STORE) -> Path:
    store.mkdir(parents=True, exist_ok=True)
    path = store / f"{client}.tsv"
    runs = {run: str(i) for i, run in enumerate(sorted({(s.tree, s.date) for c in cells.values() for s in c.values()},
                                                       key=lambda r: (r[1], r[0])), 1)}
    lines = [HEADER] + [f"@{i}\t{tree}\t{date}" for (tree, date), i in runs.items()] + \
        [f"{gate}\t{case}\t{s.verdict}\t{clean(s.text)}\t{runs[(s.tree, s.date)]}"
         for gate in sorted(cells) for case, s in sorted(cells[gate].items())]
    path.write_text("\n".join(lines) + "\n")
    return path


def merged(kept: dict[str, dict[str, Seen]], new: dict[str, dict[str, Seen]]) -> dict[str, dict[str, Seen]]:
    """KEPT with every cell NEW observed laid over it (the newer observation wins)."""
    out = {g: dict(cases) for g, cases in kept.items()}
    for gate, cases in new.items():
        out.setdefault(gate, {}).update(cases)
    return out
