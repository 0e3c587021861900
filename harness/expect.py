"""The lab's expect grammar: what one run of a client must show, as words on one line.

    ok/0*64 server.requests=192 shim.eagain>0 loop.idle_waits<200 each.requests_done=3

A term is one of
    STAGE/DETAIL*N        N attempts ended STAGE/DETAIL; all such terms together are the whole count.
                          DETAIL is a name (harness/outcomes.py: handshake/SSL_R_UNEXPECTED_MESSAGE,
                          read/PEER_CLOSED, lookup/TIMEOUT); a number only where it has none (a number
                          that has one is refused, naming it); ok is ok/0
    A|B*N                 N attempts ended A or B, in any mix (a race the library does not settle:
                          each alternative was observed, and the row says why)
    exit=N                the process exited N
    signal=NAME           the process died by signal NAME (SIGPIPE)
    attempts=N            N attempt lines were printed
    stderr.lines=N        stderr held N lines
    stderr~WORD           stderr holds WORD (a refusal's one line names what it refused: stderr~--cafile)
    wall<S  wall>S        the process's wall time, seconds (an upper bound only beside a deadline the
                          row gives the client, at least 4x from it: harness/cases.py checks the flag)
    SOURCE.KEY OP VALUE   OP is = > < or ~ (holds VALUE as a part: a word of a detail_text, whose
                          spaces no term can hold); SOURCE is summary, shim, loop (the event loop counted:
                          waits, idle_waits, blocking_calls, ... harness/loop.py), a peer (server, dns, mux),
                          each (every attempt's KEY) or seq (the attempts' KEYs in conn order,
                          VALUE a comma list, compared whole: = only). KEY[SUB] reads a table's entry;
                          a table of counts compared with a number is summed ({"udp": 1, "tcp": 1} = 2).
Placeholders such as {port} are expanded before parsing (harness/cases.py says which).
"""
from __future__ import annotations

import re
import signal as signals
from dataclasses import dataclass, field
from typing import Optional

from .loop import KEYS as LOOP_KEYS
from .outcomes import STAGES, UnknownOutcome, default as default_names

ONE_OUTCOME = r"[a-z]+/[A-Za-z0-9_.-]+"
OUTCOME = re.compile(rf"^({ONE_OUTCOME}(?:\|{ONE_OUTCOME})*)\*(\d+)$")
NUMBER = re.compile(r"-?\d+")
COMPARE = re.compile(r"^([a-z][a-z0-9_]*)\.([A-Za-z0-9_]+)(?:\[([^\]]+)\])?(=|>|<|~)(.+)$")
WALL = re.compile(r"^wall(<|>)(\d+(?:\.\d+)?)$")
# A verdict is a count or an outcome, never a duration (DESIGN.md): CPU against a control's, CPU over
# wall, and a figure in milliseconds under a fixed number all move with the runner's speed and load.
TIMED = re.compile(r"^(cpu|busy)<")
MACHINE_SPEED = ("cpu_ms", "wall_ms", "cpu_ms_per_conn", "loop_gap_max_ms")
COUNT = re.compile(r"^(exit|attempts|stderr\.lines)=(\d+)$")
RUN_SOURCES = ("summary", "shim", "loop", "each", "seq")
# loop.KEY<N+progress: under N plus the run's own progress count (a loop may wake idle once for each
# call that moved bytes, as Asio's does: the bound grows with the work, never with the time)
PER_PROGRESS = re.compile(r"(\d+)\+progress")


class ExpectError(ValueError):
    """A term the grammar does not know (the caller adds file:line)."""


@dataclass
class Compare:
    source: str
    key: str
    sub: Optional[str]
    op: str
    value: str

    def text(self) -> str:
        return f"{self.source}.{self.key}" + (f"[{self.sub}]" if self.sub else "")


@dataclass
class Expectation:
    text: str
    outcomes: dict[str, int] = field(default_factory=dict)
    exit: Optional[int] = None
    signal: Optional[int] = None
    attempts: Optional[int] = None
    stderr_lines: Optional[int] = None
    stderr_words: list[str] = field(default_factory=list)
    wall: list[tuple[str, float]] = field(default_factory=list)
    compares: list[Compare] = field(default_factory=list)

    def peers(self) -> set[str]:
        """The peers whose reports the terms read."""
        return {c.source for c in self.compares if c.source not in RUN_SOURCES}

    def counts_loop(self) -> bool:
        """True when a term reads the loop's counts (the run then needs the I/O shim or strace: harness/loop.py)."""
        return any(c.source == "loop" for c in self.compares)

    def failure(self) -> bool:
        """True when the row expects something other than success (it then needs a control)."""
        return (any(k != "ok/0" for k in self.outcomes) or self.signal is not None
                or self.exit not in (None, 0))


def outcome_key(text: str) -> str:
    """One outcome, `stage/NAME` (a number where it has no name), as the run counts it: 'stage/detail'."""
    stage, _, detail = text.partition("/")
    if stage == "ok":
        if detail != "0":
            raise ExpectError(f"ok is written ok/0 ({text!r} is not)")
        return text
    if stage not in STAGES:
        raise ExpectError(f"unknown stage {stage!r} in {text!r} (one of {', '.join(STAGES)})")
    names = default_names()
    if NUMBER.fullmatch(detail):
        if named := names.named(stage, int(detail)):
            raise ExpectError(f"write {named} for {text} (a number only where no name exists: harness/outcomes.py)")
        return f"{stage}/{int(detail)}"
    try:
        return f"{stage}/{names.parse(text)[1]}"
    except UnknownOutcome as e:
        raise ExpectError(str(e)) from e


def outcome_text(key: str) -> str:
    """A run's 'stage/detail' (or 'A|B' of them) as it is written: by name, the number where none exists."""
    def one(k: str) -> str:
        stage, _, detail = k.partition("/")
        if stage == "ok" or not NUMBER.fullmatch(detail):
            return k
        return default_names().named(stage, int(detail)) or k
    return "|".join(one(k) for k in key.split("|"))


def outcome_term(key: str, n: int) -> str:
    """The term that counts N attempts ending KEY ('stage/detail'), by name: what --update writes."""
    return f"{outcome_text(key)}*{n}"


def named_outcomes(counts: dict[str, int]) -> dict[str, int]:
    """Counts by 'stage/detail', keyed by name (a failure's message shows what a person writes)."""
    return {outcome_text(k): n for k, n in counts.items()}


def _outcome(term: str) -> Optional[tuple[str, str, str]]:
    """(TERM, the run's key of its outcomes, its count) for an outcome term, else None."""
    m = OUTCOME.match(term)
    if not m:
        return None
    try:
        return term, "|".join(outcome_key(a) for a in m[1].split("|")), m[2]
    except ExpectError as e:
        raise ExpectError(f"{term!r}: {e}") from e


def _once(exp: Expectation, attr: str, value, term: str) -> None:
    """Sets a term that takes one value: given twice, the value not kept would go unjudged."""
    if getattr(exp, attr) is not None:
        raise ExpectError(f"{term!r}: {attr} given twice (a line holds one; the other would go unjudged)")
    setattr(exp, attr, value)


def parse(text: str) -> Expectation:
    exp = Expectation(text)
    for term in text.split():
        if m := _outcome(term):   # m[1]: the run's key, 'stage/detail' (names translated once, here)
            exp.outcomes[m[1]] = exp.outcomes.get(m[1], 0) + int(m[2])
        elif term.startswith("signal="):
            name = term.split("=", 1)[1]
            # a Signals member only: SIG_DFL and SIG_BLOCK are 0, which a run nobody killed would hold
            if not name.startswith("SIG") or not isinstance(getattr(signals, name, None), signals.Signals):
                raise ExpectError(f"unknown signal {name!r}")
            _once(exp, "signal", int(getattr(signals, name)), term)
        elif m := COUNT.match(term):
            _once(exp, {"stderr.lines": "stderr_lines"}.get(m[1], m[1]), int(m[2]), term)
        elif m := WALL.match(term):
            exp.wall.append((m[1], float(m[2])))
        elif TIMED.match(term):
            raise ExpectError(f"{term!r} judges by CPU time, which moves with the runner: count the loop "
                              f"instead (loop.idle_waits<N, loop.blocking_calls=0: harness/loop.py)")
        elif term.startswith("stderr~") and len(term) > len("stderr~"):
            exp.stderr_words.append(term[len("stderr~"):])
        elif m := COMPARE.match(term):
            if m[1] == "summary" and m[2] in MACHINE_SPEED and m[4] == "<":
                raise ExpectError(f"{term!r} bounds a figure in machine-speed units: count what it stands for "
                                  f"(loop.idle_waits<N, harness/loop.py), or bound wall beside a deadline the "
                                  f"client is given (harness/README.md)")
            if m[1] == "loop" and (m[2] not in LOOP_KEYS or m[3]):
                raise ExpectError(f"{term!r}: the loop's counts are {', '.join(LOOP_KEYS)} (harness/loop.py)")
            if m[1] == "loop" and not (re.fullmatch(r"\d+", m[5]) or (m[4] == "<" and PER_PROGRESS.fullmatch(m[5]))):
                raise ExpectError(f"{term!r}: a loop count compares with a whole number, or with N+progress "
                                  f"(under N plus one a call that moved bytes: <N+progress only)")
            if m[1] == "seq" and m[4] != "=":  # _compare reads seq whole: any other op would be judged as =
                raise ExpectError(f"{term!r}: seq compares the whole list in conn order, with = only")
            exp.compares.append(Compare(m[1], m[2], m[3], m[4], m[5]))
        else:
            raise ExpectError(f"unknown expectation term {term!r} (see harness/expect.py)")
    return exp


def _number(text: str) -> Optional[float]:
    try:
        return float(text)
    except ValueError:
        return None


def _read(value, sub: Optional[str]):
    if sub is None:
        return value
    return value.get(sub) if isinstance(value, dict) else None


def _same(got, want: str, op: str) -> bool:
    if isinstance(got, dict) and all(isinstance(v, (int, float)) for v in got.values()):
        got = sum(got.values())
    if got is None:
        return False
    if op == "~":
        return want in str(got)
    if op == "=":
        if isinstance(got, bool):
            return str(got).lower() == want
        n = _number(want)
        if n is not None and isinstance(got, (int, float)):
            return float(got) == n
        return str(got) == want
    n, g = _number(want), _number(str(got))
    if n is None or g is None:
        return False
    return g > n if op == ">" else g < n


def _compare(c: Compare, run, reports: dict[str, dict]) -> Optional[str]:
    """What is wrong with one comparison, or None."""
    if c.source == "each":
        bad = [a.get(c.key) for a in run.attempts if not _same(_read(a.get(c.key), c.sub), c.value, c.op)]
        if bad or not run.attempts:
            return f"each.{c.key}{c.op}{c.value} does not hold: {sorted(map(str, bad))[:5] or 'no attempts'}"
        return None
    if c.source == "seq":
        got = [str(_read(a.get(c.key), c.sub)) for a in sorted(run.attempts, key=lambda a: a.get("conn", 0))]
        return None if got == c.value.split(",") else f"seq.{c.key} = {','.join(got)}, expected {c.value}"
    where = run.summary if c.source == "summary" else reports.get(c.source)
    if where is None:
        return f"{c.source}: no report (a peer that did not stop cleanly, or a shim that saw nothing)"
    got = _read(where.get(c.key), c.sub)
    m = PER_PROGRESS.fullmatch(c.value) if c.source == "loop" else None
    if m:
        progress = where.get("progress")
        if not isinstance(progress, int):
            return f"{c.text()}<{c.value}: no progress count in the loop's report"
        bound = int(m[1]) + progress
        return None if _same(got, str(bound), "<") else \
            f"{c.text()} = {got}, expected <{c.value} (= {m[1]} + {progress})"
    return None if _same(got, c.value, c.op) else f"{c.text()} = {got}, expected {c.op}{c.value}"


def outcomes_hold(expected: dict[str, int], got: dict[str, int]) -> bool:
    """Every attempt is counted by exactly one term (`A|B` counts A and B together)."""
    left = dict(got)
    for keys, n in expected.items():
        if sum(left.pop(k, 0) for k in keys.split("|")) != n:
            return False
    return not left


def judge(exp: Expectation, run, reports: dict[str, dict]) -> list[str]:
    """What in RUN (harness.runs.Run) and the peers' REPORTS differs from EXP; empty when it holds."""
    problems: list[str] = []
    if run.problem:
        problems.append(run.problem)
    if exp.signal is not None and run.signal != exp.signal:
        problems.append(f"expected death by {signals.Signals(exp.signal).name}, got exit {run.rc} "
                        f"signal {run.signal}")
    elif exp.signal is None and run.signal:
        problems.append(f"killed by signal {run.signal}")
    if exp.exit is not None and (run.signal or run.rc != exp.exit):
        problems.append(f"exit {run.rc}, expected {exp.exit}")
    if exp.attempts is not None and len(run.attempts) != exp.attempts:
        problems.append(f"{len(run.attempts)} attempt lines, expected {exp.attempts}")
    if exp.stderr_lines is not None and len(run.stderr.strip().splitlines()) != exp.stderr_lines:
        problems.append(f"stderr has {len(run.stderr.strip().splitlines())} lines, expected {exp.stderr_lines}: "
                        f"{run.stderr.strip()[-200:]!r}")
    for word in exp.stderr_words:
        if word not in run.stderr:
            problems.append(f"stderr does not hold {word!r}: {run.stderr.strip()[-200:]!r}")
    for op, seconds in exp.wall:
        if not (run.wall_s < seconds if op == "<" else run.wall_s > seconds):
            problems.append(f"wall {run.wall_s:.2f} s, expected {op} {seconds} s")
    if exp.outcomes and not outcomes_hold(exp.outcomes, run.outcomes()):
        problems.append(f"outcomes {named_outcomes(run.outcomes())}, expected {named_outcomes(exp.outcomes)}")
    for c in exp.compares:
        if why := _compare(c, run, reports):
            problems.append(why)
    return problems
