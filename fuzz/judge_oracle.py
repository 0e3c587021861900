#!/usr/bin/python3
"""The client's judge (client/dns_judge.cc) against an independent oracle: Python's ipaddress.

    judge_oracle.py --dump BUILD/fuzz/dns_judge_dump [--seed S] [--random N]

Oracle: an address is special when ipaddress says it is not globally reachable
(not is_global) or multicast, or when it falls in one of the ranges ADDED below, which the
client's table refuses and the module does not. Checked: both edges of every range of
the table and of every network the module knows, and their neighbours; 6 addresses for
each first octet; N seeded random addresses (2,000,000 by default); then whole answers
through pin_choose (the first special address is the one named, --allow-private picks
the first). Zero disagreements, or the gate fails and prints the first ones.
"""
from __future__ import annotations

import argparse
import bisect
import ipaddress
import os
import random
import subprocess
import sys
import time
from ipaddress import IPv4Address, IPv4Network
from typing import Callable

from harness import Gate, rerun_line

# The table of the brief and of client/dns_judge.cc, as written in the issue.
TABLE = ["0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
         "192.0.0.0/24", "192.0.2.0/24", "192.31.196.0/24", "192.52.193.0/24", "192.88.99.0/24", "192.168.0.0/16",
         "192.175.48.0/24", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
         "255.255.255.255/32"]

# What the table refuses beyond the module's "not globally reachable", and why.
ADDED = {
    "192.0.0.0/24": "the module exempts 192.0.0.9 and 192.0.0.10 (globally reachable anycast); the table takes the /24",
    "192.31.196.0/24": "AS112-v4: globally reachable per IANA; no service a client should dial",
    "192.52.193.0/24": "AMT relays: globally reachable per IANA; same",
    "192.88.99.0/24": "deprecated 6to4 relay anycast (RFC 7526)",
    "192.175.48.0/24": "direct delegation AS112 service: globally reachable per IANA; same",
}
ADDED_NETS = [IPv4Network(n) for n in ADDED]


def oracle(addr: IPv4Address) -> bool:
    return (not addr.is_global) or addr.is_multicast or any(addr in net for net in ADDED_NETS)


class Piecewise:
    """A verdict that is the same on every address between two network edges, asked of FN once per
    piece and looked up after. FN here is the module's properties (and the lab's ADDED blocks): each is
    membership in networks the module lists (module_networks()), so its value changes only at their
    edges, which are the pieces' starts. The lookup is then FN's own answer at a tenth of the cost (the
    2,000,000 random addresses); every CHECK-th lookup is asked of FN too, and a disagreement, a
    module made of something else, fails the gate by name."""

    CHECK = 17   # prime: a stride of 16 met only the fourth of the four kinds judge_oracle6 draws in turn

    def __init__(self, nets: list, fn: Callable[[int], bool], top: int) -> None:
        starts = {0}
        for net in nets:
            starts.update(v for v in (int(net.network_address), int(net.broadcast_address) + 1) if v < top)
        self.starts, self.fn = sorted(starts), fn
        self.values = [fn(v) for v in self.starts]
        self.calls = self.asked = 0

    def __call__(self, value: int) -> bool:
        got = self.values[bisect.bisect_right(self.starts, value) - 1]
        self.calls += 1
        if self.calls % self.CHECK == 0:
            self.asked += 1
            if self.fn(value) != got:
                raise AssertionError(f"address {value:#x}: the module's own answer is not its piece's "
                                     f"(its properties use a network module_networks() does not list)")
        return got

    def note(self) -> str:
        return f"{len(self.starts)} pieces, {self.asked:,} lookups asked of the module too"


def module_networks() -> list[IPv4Network]:
    """Every network the module's IPv4 properties are made of."""
    c = ipaddress._IPv4Constants  # the data behind is_private, is_global, is_multicast...
    nets = [c._linklocal_network, c._loopback_network, c._multicast_network, c._public_network,
            c._reserved_network, IPv4Network(f"{c._unspecified_address}/32")]
    nets += list(c._private_networks) + list(getattr(c, "_private_networks_exceptions", []))
    return nets


def edges(nets: list[IPv4Network]) -> list[int]:
    found: set[int] = set()
    for net in nets:
        first, last = int(net.network_address), int(net.broadcast_address)
        for value in (first - 1, first, first + 1, last - 1, last, last + 1):
            if 0 <= value < 2 ** 32:
                found.add(value)
    return sorted(found)


def first_octets() -> list[int]:
    return [o << 24 | rest for o in range(256) for rest in (0, 1, 0x7FFFFF, 0x800000, 0xFFFFFE, 0xFFFFFF)]


def dump(binary: str, lines: list[str], allow_private: bool = False, why: bool = False) -> list[str]:
    argv = [binary] + (["--allow-private"] if allow_private else []) + (["--why"] if why else [])
    proc = subprocess.run(argv, input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise SystemExit(f"judge_oracle.py: {binary} exited {proc.returncode}: {proc.stderr.strip()}")
    return proc.stdout.splitlines()


def pieces4() -> Piecewise:
    """The oracle by pieces of the module's networks and the ADDED blocks (the random addresses')."""
    return Piecewise(module_networks() + ADDED_NETS, lambda v: oracle(IPv4Address(v)), 2 ** 32)


def quad_of(value: int) -> str:
    return f"{value >> 24}.{value >> 16 & 255}.{value >> 8 & 255}.{value & 255}"


def compare_addresses(gate: Gate, binary: str, case: str, values: list[int], note: str,
                      pieces: Piecewise | None = None) -> None:
    """The dump's verdict on each of VALUES against the oracle (by its PIECES, for the random ones)."""
    quads = [quad_of(v) for v in values]
    verdicts = dump(binary, quads)
    wrong, special = [], 0
    for value, quad, verdict in zip(values, quads, verdicts):
        try:
            expected = pieces(value) if pieces else oracle(IPv4Address(value))
        except AssertionError as e:
            gate.check(case, False, str(e))
            return
        special += expected
        if (verdict == "refused 0") != expected:
            wrong.append(f"{quad}: judge says {verdict}, oracle says {'special' if expected else 'public'}")
    if len(verdicts) != len(quads):
        wrong.append(f"{len(verdicts)} verdicts for {len(quads)} addresses")
    detail = f"{len(quads):,} addresses ({special:,} special) {note}, {len(wrong)} disagreements"
    gate.check(case, not wrong, detail if not wrong else detail + "\n    " + "\n    ".join(wrong[:10]))


def compare_answers(gate: Gate, binary: str, rng: random.Random, pool: list[str], count: int,
                    special: Callable[[str], bool], note: str = "") -> None:
    """Whole answers drawn from `pool`: the first special address is named, --allow-private picks the first."""
    answers = [[pool[rng.randrange(len(pool))] for _ in range(rng.randint(1, 6))] for _ in range(count)]
    lines = [" ".join(answer) for answer in answers]
    strict, lax = dump(binary, lines), dump(binary, lines, allow_private=True)
    wrong, refused = [], 0
    for line, answer, got, got_lax in zip(lines, answers, strict, lax):
        specials = [i for i, text in enumerate(answer) if special(text)]
        expected = f"refused {specials[0]}" if specials else "chosen 0"
        refused += bool(specials)
        if got != expected or got_lax != "chosen 0":
            wrong.append(f"[{line}]: judge says {got} / {got_lax} with --allow-private, oracle says {expected} / chosen 0")
    detail = (f"{count:,} answers of 1 to 6 addresses{note} ({refused:,} refused): the first special one named, "
              f"--allow-private chooses the first, {len(wrong)} disagreements")
    gate.check("answers", not wrong, detail if not wrong else detail + "\n    " + "\n    ".join(wrong[:10]))


def begin(doc: str, file: str, heading: str) -> argparse.Namespace | None:
    """The oracles' command line, then a line `HEADING seed N; reproduce: COMMAND`; None (after
    one line on stderr) when the dump is not there."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--dump", required=True, help="the dns_judge_dump binary")
    parser.add_argument("--seed", type=int, default=int(os.environ.get("TLSLAB_SEED", "5")))
    parser.add_argument("--random", type=int, default=2_000_000, help="random addresses to compare")
    args = parser.parse_args()
    if not os.access(args.dump, os.X_OK):
        print(f"{os.path.basename(sys.argv[0])}: no dns_judge_dump at {args.dump!r}", file=sys.stderr)
        return None
    print(f"{heading} seed {args.seed}; reproduce: "
          f"{rerun_line(file, '--dump', args.dump, '--seed', args.seed, '--random', args.random)}", flush=True)
    return args


def main() -> int:
    args = begin(__doc__, __file__, "judge oracle:")
    if args is None:
        return 2
    for net, why in ADDED.items():
        print(f"  added to the module: {net}: {why}")
    gate = Gate("judge oracle")
    start = time.monotonic()
    table_edges = edges([IPv4Network(n) for n in TABLE])
    compare_addresses(gate, args.dump, "table edges", table_edges, "at both edges of the 19 ranges and beside them")
    module_edges = edges(module_networks())
    compare_addresses(gate, args.dump, "module edges", module_edges,
                      f"at both edges of the module's {len(module_networks())} networks and beside them")
    compare_addresses(gate, args.dump, "first octets", first_octets(), "6 for each first octet")
    rng = random.Random(args.seed)
    pieces = pieces4()
    compare_addresses(gate, args.dump, "random", [rng.getrandbits(32) for _ in range(args.random)],
                      f"seeded random (seed {args.seed}), the oracle asked once per piece of the module's networks", pieces)
    print(f"  random: the oracle's {pieces.note()}")
    pool = [str(IPv4Address(v)) for v in table_edges + module_edges + [rng.getrandbits(32) for _ in range(2000)]]
    compare_answers(gate, args.dump, rng, pool, 20_000, lambda text: oracle(IPv4Address(text)))
    print(f"judge oracle: {time.monotonic() - start:.1f} s", flush=True)
    return gate.finish()


if __name__ == "__main__":
    sys.exit(main())
