#!/usr/bin/python3
"""The client's IPv6 judge (client/dns_judge6.cc) against Python's ipaddress and a table of its own.

    judge_oracle6.py --dump BUILD/fuzz/dns_judge_dump [--seed S] [--random N]

Oracle: an address is special when ipaddress says it is not globally reachable (not
is_global), or when one of the EXCEPTIONS below says the lab refuses it although the module
calls it global: every such disagreement must be explained by an exception, and the count
each one explains is printed (an exception that explains none with this Python is
printed as such: they differ between builds). Checked: both edges of every block of the
lab's table (TABLE, written here from the registry, not read from the client) and of every
network the module knows, with their neighbours; every embedding of IPv4 (mapped,
compatible, translated, NAT64 at /96 and /48, 6to4, Teredo server and client, ISATAP)
around every edge of the IPv4 table, with the reason checked to name the embedded address
and its IPv4 verdict; N seeded random addresses (2,000,000 by default: a quarter each
uniform, inside 2000::/3, inside a listed block, ISATAP in 2000::/3); then whole answers
mixing both families through pin_choose. Zero unexplained disagreements, or the gate fails.
"""
from __future__ import annotations

import random
import sys
import time
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network, _IPv6Constants
from typing import Callable

from harness import Gate
from fuzz.judge_oracle import (TABLE as TABLE4, Piecewise, begin, compare_answers, dump, edges as edges4,
                               module_networks as module_networks4, oracle as oracle4, pieces4)

# The IPv6 blocks the lab refuses (IANA IPv6 special-purpose registry, the deprecated
# site-local block, multicast), written from the registry: the client's table must agree.
TABLE = ["::/128", "::1/128", "::ffff:0:0/96", "::ffff:0:0:0/96", "::/96", "64:ff9b::/96", "64:ff9b:1::/48",
         "100::/64", "2001:1::1/128", "2001:1::2/128", "2001:1::3/128", "2001:2::/48", "2001:3::/32",
         "2001:4:112::/48", "2001:10::/28", "2001:20::/28", "2001:30::/28", "2001::/32", "2001::/23",
         "2001:db8::/32", "2002::/16", "3fff::/20", "5f00::/16", "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8"]
TABLE_NETS = [IPv6Network(n) for n in TABLE]
GLOBAL_UNICAST = IPv6Network("2000::/3")


class Prefixes:
    """Networks by prefix length: membership is one shift and one set lookup per length,
    twenty times faster than `addr in net` over a list (2,000,000 addresses in the budget)."""

    def __init__(self, nets: list[IPv6Network | str], names: list[str] | None = None) -> None:
        self.by_length: dict[int, dict[int, str]] = {}
        for net, name in zip(map(IPv6Network, nets), names or [str(n) for n in nets]):
            self.by_length.setdefault(128 - net.prefixlen, {}).setdefault(int(net.network_address) >> (
                128 - net.prefixlen), name)
        self.shifts = sorted(self.by_length.items())  # longest prefix first: the most specific names

    def find(self, value: int) -> str | None:
        for shift, prefixes in self.shifts:
            name = prefixes.get(value >> shift)
            if name is not None:
                return name
        return None


TABLE_PREFIXES = Prefixes(TABLE)


def isatap_int(value: int) -> int | None:
    """RFC 5214 6.1: interface id 0000:5efe or 0200:5efe, then an IPv4 address (as a number)."""
    return value & 0xFFFFFFFF if (value & (2 ** 64 - 1)) >> 32 in (0x5EFE, 0x02005EFE) else None


def isatap_v4(value: int) -> IPv4Address | None:
    v4 = isatap_int(value)
    return None if v4 is None else IPv4Address(v4)


# Where the lab refuses what the module calls global, and why: every disagreement is one of
# these (name, the networks or a rule, why). Looked up only where the two disagree.
EXCEPTIONS: list[tuple[str, list[str] | Callable[[int], bool], str]] = [
    ("ff00::/8", ["ff00::/8"], "multicast: Debian's 3.11.2 calls it is_global (is_global is only "
     "'not is_private', and multicast is not in its private list); never a unicast destination"),
    ("fec0::/10", ["fec0::/10"], "site-local, deprecated (RFC 3879): the module calls it is_global; "
     "old sites still route it internally"),
    ("::ffff:0:0/96", ["::ffff:0:0/96"], "IPv4-mapped: the module judges the IPv4 inside (public ones are "
     "global); the lab refuses the whole block: an AAAA record has no business holding one, and Linux dials the "
     "IPv4 inside (gaps/v4mapped_reaches_ipv4)"),
    ("::ffff:0:0:0/96", ["::ffff:0:0:0/96"], "IPv4-translated (RFC 2765): outside 2000::/3; the module "
     "calls it reserved, not private"),
    ("::/96", ["::/96"], "IPv4-compatible, deprecated (RFC 4291 2.5.5.1): outside 2000::/3"),
    ("64:ff9b::/96", ["64:ff9b::/96"], "NAT64 well-known prefix: globally reachable per IANA; the lab "
     "refuses it: the translator dials the IPv4 inside, behind a gateway the lab cannot see"),
    ("64:ff9b:1::/48", ["64:ff9b:1::/48"], "NAT64 local use: pyenv's 3.11.7 (without the CVE-2024-4032 "
     "fix) calls it global; Debian's 3.11.2 (fix backported) agrees with the lab"),
    ("2002::/16", ["2002::/16"], "6to4: pyenv's 3.11.7 calls it global (same CVE); Debian's agrees"),
    ("2001::/23 exceptions", ["2001:1::1/128", "2001:1::2/128", "2001:3::/32", "2001:4:112::/48", "2001:20::/28",
                              "2001:30::/28"],
     "globally reachable per IANA (the module agrees since the CVE fix): anycast and tunnelling services a client "
     "has no business dialling (as AMT and AS112 for IPv4)"),
    ("3fff::/20", ["3fff::/20"], "documentation (RFC 9637, 2024): newer than the module"),
    ("outside 2000::/3", lambda value: value >> 125 != 1, "the lab's rule: public only inside global unicast "
     "(RFC 4291 2.4); the module calls unassigned space (4000::/3, 5f00::/16 segment routing...) global"),
    ("ISATAP", lambda value: (v4 := isatap_v4(value)) is not None and oracle4(v4), "an ISATAP interface id "
     "(RFC 5214) in a global prefix carrying a special IPv4: the tunnel's router dials that IPv4"),
]
EXCEPTION_NETS = Prefixes([n for _, nets, _ in EXCEPTIONS if isinstance(nets, list) for n in nets],
                          [name for name, nets, _ in EXCEPTIONS if isinstance(nets, list) for _ in nets])
EXCEPTION_RULES = [(name, rule) for name, rule, _ in EXCEPTIONS if not isinstance(rule, list)]


class Module:
    """The module's verdicts the oracle asks: IPv6 is_global and the IPv4 oracle (ISATAP's embedded
    address). Asked of the module itself (the edges, the embeddings, the answers), or by the module's
    pieces (judge_oracle.Piecewise: the 2,000,000 random addresses)."""

    def __init__(self, by_pieces: bool = False) -> None:
        self.global6: Callable[[int], bool] = lambda v: IPv6Address(v).is_global
        self.special4: Callable[[int], bool] = lambda v: oracle4(IPv4Address(v))
        if by_pieces:   # is_global of a mapped address is its IPv4 address's: those networks' edges too
            mapped = [IPv6Network(f"::ffff:{n.network_address}/{96 + n.prefixlen}") for n in module_networks4()]
            self.global6 = Piecewise(module_networks() + mapped, self.global6, 2 ** 128)
            self.special4 = pieces4()

    def note(self) -> str:
        return "; ".join(f"{what}: {f.note()}" for what, f in (("IPv6 is_global", self.global6),
                                                                 ("IPv4", self.special4)) if isinstance(f, Piecewise))


MODULE = Module()


def lab_rule(value: int, module: Module = MODULE) -> bool:
    """The lab's rule, read from TABLE: public only inside 2000::/3, outside every block, no special ISATAP IPv4."""
    if value >> 125 != 1 or TABLE_PREFIXES.find(value) is not None:
        return True
    v4 = isatap_int(value)
    return v4 is not None and module.special4(v4)


def oracle(value: int, explained: dict[str, int], module: Module = MODULE) -> tuple[bool, str]:
    """The lab's verdict, and an error unless the module agrees or an exception explains why not."""
    special = lab_rule(value, module)
    if special == (not module.global6(value)):
        return special, ""
    if not special:
        return special, "the module calls it not global, the lab's table public"
    name = EXCEPTION_NETS.find(value) or next((name for name, rule in EXCEPTION_RULES if rule(value)), None)
    if name is None:
        return special, "the module calls it global, the lab's table special, and no exception says why"
    explained[name] += 1
    return special, ""


def embeddings(v4s: list[int]) -> list[int]:
    """Every way the lab extracts an IPv4 address, around each of `v4s`."""
    out = []
    for v4 in v4s:
        out += [0xFFFF << 32 | v4, 0xFFFF << 48 | v4, v4, 0x64FF9B << 96 | v4,  # mapped, translated, compatible, WKP
                0x64FF9B0001 << 80 | (v4 >> 16) << 64 | (v4 & 0xFFFF) << 40,           # NAT64 /48 (RFC 6052 2.2)
                0x2002 << 112 | v4 << 80 | 1,                                          # 6to4
                0x20010000 << 96 | v4 << 64 | 0x8000 << 48 | (v4 ^ 0xFFFFFFFF),         # Teredo: server and client
                0x26000000 << 96 | 0x5EFE << 32 | v4, 0x26000000 << 96 | 0x02005EFE << 32 | v4]  # ISATAP
    return out


def expected_embeds(addr: IPv6Address) -> list[IPv4Address]:
    """The IPv4 addresses the reason must name, read with the module's own accessors where it has them."""
    value = int(addr)
    if addr.ipv4_mapped is not None:
        return [addr.ipv4_mapped]
    if addr.teredo is not None:
        return list(addr.teredo)
    if addr.sixtofour is not None:
        return [addr.sixtofour]
    if value >> 32 == 0xFFFF << 16 or (value >> 32 == 0 and value > 1) or value >> 32 == 0x64FF9B << 64:
        return [IPv4Address(value & 0xFFFFFFFF)]
    if addr in IPv6Network("64:ff9b:1::/48"):
        return [IPv4Address(((value >> 64) & 0xFFFF) << 16 | (value >> 40) & 0xFFFF)]
    v4 = isatap_v4(value)
    return [v4] if v4 is not None and oracle4(v4) and addr in GLOBAL_UNICAST and not any(
        addr in n for n in TABLE_NETS) else []


def reason_error(addr: IPv6Address, reason: str) -> str:
    for v4 in expected_embeds(addr):
        verdict = next((n for n in TABLE4 if v4 in IPv4Network(n)), None) if oracle4(v4) else "public"
        if f" {v4} (" not in reason or (verdict == "public" and f" {v4} (public)" not in reason) or (
                verdict != "public" and not any(f" {v4} ({n} " in reason for n in TABLE4 if v4 in IPv4Network(n))):
            return f"the reason should name {v4} ({verdict}...): {reason}"
    return ""


def text_of(value: int) -> str:
    """The uncompressed form (inet_pton reads it; str() costs four times as much)."""
    h = f"{value:032x}"
    return f"{h[0:4]}:{h[4:8]}:{h[8:12]}:{h[12:16]}:{h[16:20]}:{h[20:24]}:{h[24:28]}:{h[28:32]}"


def compare_addresses(gate: Gate, binary: str, case: str, values: list[int], note: str,
                      explained: dict[str, int], why: bool = False, module: Module = MODULE) -> None:
    texts = [text_of(v) for v in values]
    verdicts = dump(binary, texts, why=why)
    wrong, special = [], 0
    for value, text, line in zip(values, texts, verdicts):
        try:
            expected, error = oracle(value, explained, module)
        except AssertionError as e:   # the module's pieces are not its answers (judge_oracle.Piecewise)
            gate.check(case, False, str(e))
            return
        special += expected
        verdict, _, reason = line.partition("\t")
        if error or (verdict == "refused 0") != expected:
            wrong.append(f"{text}: judge says {line}, oracle says {'special' if expected else 'public'} {error}")
        elif why and expected and (error := reason_error(IPv6Address(value), reason)):
            wrong.append(f"{text}: {error}")
    if len(verdicts) != len(texts):
        wrong.append(f"{len(verdicts)} verdicts for {len(texts)} addresses")
    detail = f"{len(texts):,} addresses ({special:,} special) {note}, {len(wrong)} unexplained disagreements"
    gate.check(case, not wrong, detail if not wrong else detail + "\n    " + "\n    ".join(wrong[:10]))


def module_networks() -> list[IPv6Network]:
    c = _IPv6Constants
    nets = [c._linklocal_network, c._multicast_network, c._sitelocal_network]
    return nets + list(c._private_networks) + list(c._reserved_networks) + list(
        getattr(c, "_private_networks_exceptions", []))


def edges(nets: list[IPv6Network]) -> list[int]:
    found: set[int] = set()
    for net in nets:
        first, last = int(net.network_address), int(net.broadcast_address)
        found.update(v for v in (first - 1, first, first + 1, last - 1, last, last + 1) if 0 <= v < 2 ** 128)
    return sorted(found)


def random_addresses(rng: random.Random, count: int) -> list[int]:
    blocks = TABLE_NETS + module_networks()
    out = []
    for i in range(count):
        kind = i % 4
        if kind == 0:
            out.append(rng.getrandbits(128))
        elif kind == 1:
            out.append(1 << 125 | rng.getrandbits(125))
        elif kind == 2:
            net = blocks[rng.randrange(len(blocks))]
            out.append(int(net.network_address) | rng.getrandbits(128 - net.prefixlen))
        else:
            out.append((1 << 61 | rng.getrandbits(61)) << 64 | rng.choice((0x5EFE, 0x02005EFE)) << 32 |
                       rng.getrandbits(32))
    return out


def main() -> int:
    args = begin(__doc__, __file__, f"judge oracle (IPv6): Python {sys.version.split()[0]},")
    if args is None:
        return 2
    gate = Gate("judge oracle IPv6")
    explained = {name: 0 for name, _, _ in EXCEPTIONS}
    start = time.monotonic()
    table_edges = edges(TABLE_NETS)
    compare_addresses(gate, args.dump, "table edges", table_edges,
                      f"at both edges of the {len(TABLE)} blocks and beside them", explained, why=True)
    module_edges = edges(module_networks())
    compare_addresses(gate, args.dump, "module edges", module_edges,
                      f"at both edges of the module's {len(module_networks())} networks and beside them", explained)
    v4s = edges4([IPv4Network(n) for n in TABLE4]) + [0x08080808, 0x5DB8D822]
    embedded = embeddings(v4s)
    compare_addresses(gate, args.dump, "embedded IPv4", embedded,
                      f"(9 embeddings of {len(v4s)} IPv4 addresses at the IPv4 table's edges), reasons checked",
                      explained, why=True)
    rng = random.Random(args.seed)
    module = Module(by_pieces=True)
    compare_addresses(gate, args.dump, "random", random_addresses(rng, args.random),
                      f"seeded random (seed {args.seed}), the module asked once per piece of its networks",
                      explained, module=module)
    print(f"  random: the module's {module.note()}")
    pool = [str(IPv6Address(v)) for v in table_edges + embedded[::7]] + [
        str(IPv6Address(1 << 125 | rng.getrandbits(125))) for _ in range(2000)] + [
        str(IPv4Address(rng.getrandbits(32))) for _ in range(1000)] + ["10.0.0.1", "127.0.0.1"]

    def special(text: str) -> bool:
        return oracle(int(IPv6Address(text)), explained)[0] if ":" in text else oracle4(IPv4Address(text))

    compare_answers(gate, args.dump, rng, pool, 20_000, special, " of both families")
    for name, _, why in EXCEPTIONS:
        count = explained[name]
        print(f"  exception {name}: {f'{count:,} disagreements' if count else 'none met with this Python'}: {why}")
    print(f"judge oracle (IPv6): {time.monotonic() - start:.1f} s", flush=True)
    return gate.finish()


if __name__ == "__main__":
    sys.exit(main())
