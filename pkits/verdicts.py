"""An outcome as NIST's verdict, and a run's tally of every client against NIST.

    verdict_of("ok") == "accept"; verdict_of("handshake/X509_V_ERR_CERT_REVOKED") == "refuse"
    Tally(observations, records, tests).print()    # client, agreeing with NIST, differences by kind
"""
from __future__ import annotations

from collections import Counter
from typing import Optional

from harness.record import KINDS, SKIP

UNUSABLE = "exit 2"    # the client refused the test's files (a CRL it cannot read) as an unusable configuration
NOT_TAKEN = (SKIP, UNUSABLE)


def verdict_of(outcome: str) -> Optional[str]:
    """ok is an accept, a handshake failure a refusal; anything else (a deadline, a read error, a
    skip) is neither: NIST's verdicts are about the path, the handshake is where a client says it."""
    if outcome == "ok":
        return "accept"
    return "refuse" if outcome.startswith("handshake/") else None


def check_got(got) -> None:
    """A recorded got the gate can judge: an accept, a refusal, skip (exit 89) or exit 2."""
    if not isinstance(got, str) or (got not in NOT_TAKEN and verdict_of(got) is None):
        raise ValueError(f"got {got!r}: ok, handshake/DETAIL, {SKIP} or {UNUSABLE}")


class Tally:
    """Every observation of a run, counted per client against NIST (an invalid test a client refuses
    while it refuses the test's control too agrees only by chance: counted apart, `control refused`)."""

    def __init__(self, observations: list, records: dict, tests: dict):
        self.observations, self.records, self.tests = observations, records, tests
        self.by = {(o.test.test, o.client.name): o for o in observations}

    def state(self, o) -> tuple[str, str]:
        """(agree | bug | policy | limit | skip | unrecorded | fail, why) of one observation."""
        diff = self.records[o.client.name].get(o.test.test)
        if o.not_asked:
            return "skip", o.not_asked
        if o.problem:
            return "fail", o.problem
        nist = "accept" if o.test.valid else "refuse"
        if verdict_of(o.outcome) == nist:
            return "agree", ""
        same = diff is not None and (diff.got == o.outcome or verdict_of(diff.got) == verdict_of(o.outcome) is not None)
        if same and diff.kind in KINDS:
            return diff.kind, diff.why
        return "unrecorded", ""

    def hollow(self, o) -> bool:
        """An invalid test refused while its control (a Valid test) was refused too, by the same client."""
        control = self.by.get((o.test.control, o.client.name))
        return not o.test.valid and control is not None and verdict_of(control.outcome) == "refuse"

    def counts(self, client: str) -> Counter:
        found: Counter = Counter()
        for o in self.observations:
            if o.client.name != client:
                continue
            state, _ = self.state(o)
            found[state] += 1
            found["asked"] += state != "skip"
            found["hollow"] += state == "agree" and self.hollow(o)
        return found

    def cells(self) -> list[dict]:
        return [{"test": o.test.test, "client": o.client.name, "outcome": o.outcome, "text": o.text,
                 "state": self.state(o)[0], "why": self.state(o)[1], "control_refused": self.hollow(o)}
                for o in self.observations]

    def print(self) -> None:
        """One line a client: README.md's table (pkits/README.md), measured."""
        clients = list(dict.fromkeys(o.client.name for o in self.observations))
        print("pkits: | client | agree with NIST | of which the control was refused too | bug | policy | limit "
              "| not asked |", flush=True)
        for name in clients:
            n = self.counts(name)
            print(f"pkits: | {name} | {n['agree']} of {n['asked']} | {n['hollow']} | {n['bug']} | {n['policy']} "
                  f"| {n['limit']} | {n['skip']} |" + (f" unrecorded {n['unrecorded']}, failed {n['fail']}"
                                                        if n['unrecorded'] or n['fail'] else ""), flush=True)
