"""The last observation of every cell of the results page, kept where a clean clone has it.

One file a client, harness/last_cells/NAME.tsv: `gate case verdict text tree date`, tab-separated,
sorted by gate and case, one line a cell (the case gates' PASS/FAIL/SKIP and JUnit message, the
matrix's outcome of a row, PKITS's state and outcome). Written by clients/results_page.py `--keep`
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
HEADER = "# gate\tcase\tverdict\ttext\ttree\tdate  (harness/cell_store.py; written by clients.results_page --keep)"


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
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line or line.startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) != 6:
            raise ValueError(f"{path}:{number}: want 6 tab-separated fields, got {len(fields)}")
        gate, case, *rest = fields
        out.setdefault(gate, {})[case] = Seen(*rest)
    return out


def save(client: str, cells: dict[str, dict[str, Seen]], store: Path = STORE) -> Path:
    store.mkdir(parents=True, exist_ok=True)
    path = store / f"{client}.tsv"
    lines = [HEADER] + [f"{gate}\t{case}\t{s.verdict}\t{clean(s.text)}\t{s.tree}\t{s.date}"
                        for gate in sorted(cells) for case, s in sorted(cells[gate].items())]
    path.write_text("\n".join(lines) + "\n")
    return path


def merged(kept: dict[str, dict[str, Seen]], new: dict[str, dict[str, Seen]]) -> dict[str, dict[str, Seen]]:
    """KEPT with every cell NEW observed laid over it (the newer observation wins)."""
    out = {g: dict(cases) for g, cases in kept.items()}
    for gate, cases in new.items():
        out.setdefault(gate, {}).update(cases)
    return out
