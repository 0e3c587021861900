#!/usr/bin/python3
"""Writes the seed corpus of every DNS fuzz target, built with dnslib (no hand-typed bytes).

    make_corpus.py --out DIR      # DIR/<target>/<case> for each target

Responses: answers of every shape the parser meets (A, CNAME chains, other types, RCODEs,
TC, compressed and long names, many records), plus each of them cut short. The name target
gets each response behind the offset of a name in it; the stream target gets responses
framed for TCP, behind chunk sizes.
"""
from __future__ import annotations

import argparse
import ipaddress
import random
import shutil
import struct
import sys
from pathlib import Path

from dnslib import AAAA, CNAME, DNSHeader, DNSQuestion, DNSRecord, MX, QTYPE, RCODE, RR, SOA, TXT, A

SEED = 20240501  # the corpus is the same on every build
TARGETS_OF_RESPONSES = ("fuzz_dns_response", "fuzz_dns_cares")


def response(qname: str = "www.example.com", qtype: int = QTYPE.A, rcode: int = RCODE.NOERROR,
             tc: bool = False, qid: int = 0x1234) -> DNSRecord:
    header = DNSHeader(id=qid, qr=1, rd=1, ra=1, tc=int(tc), rcode=rcode)
    return DNSRecord(header, q=DNSQuestion(qname, qtype))


def with_answers(record: DNSRecord, *rrs: RR) -> DNSRecord:
    for rr in rrs:
        record.add_answer(rr)
    return record


def a(name: str, addr: str, ttl: int = 60) -> RR:
    return RR(name, QTYPE.A, rdata=A(addr), ttl=ttl)


def cname(name: str, target: str, ttl: int = 60) -> RR:
    return RR(name, QTYPE.CNAME, rdata=CNAME(target), ttl=ttl)


def long_name() -> str:
    return ".".join(["a" * 63, "b" * 63, "c" * 63, "d" * 61])  # 255 octets on the wire


def responses() -> dict[str, bytes]:
    www = "www.example.com"
    cases: dict[str, DNSRecord] = {
        "a_one": with_answers(response(), a(www, "93.184.216.34")),
        "a_three": with_answers(response(), a(www, "93.184.216.34"), a(www, "1.1.1.1", 5), a(www, "8.8.8.8")),
        "a_private_public": with_answers(response(), a(www, "10.0.0.1"), a(www, "93.184.216.34")),
        "a_public_private": with_answers(response(), a(www, "93.184.216.34"), a(www, "10.0.0.1")),
        "a_loopback": with_answers(response(), a(www, "127.0.0.1")),
        "a_metadata": with_answers(response(), a(www, "169.254.169.254")),
        "cname_chain": with_answers(response(), cname(www, "cdn.example.net"), cname("cdn.example.net", "edge.example.org"),
                                    a("edge.example.org", "93.184.216.34")),
        "cname_loop": with_answers(response(), cname(www, "a.example"), cname("a.example", www), a(www, "1.2.3.4")),
        "cname_only": with_answers(response(), cname(www, "cdn.example.net")),
        "cname_other_owner": with_answers(response(), cname("other.example", "x.example"), a(www, "1.2.3.4")),
        "other_name": with_answers(response(), a("evil.example", "6.6.6.6")),
        "aaaa_only": with_answers(response(), RR(www, QTYPE.AAAA, rdata=AAAA("2001:db8::1"), ttl=60)),
        "mx_txt": with_answers(response(), RR(www, QTYPE.MX, rdata=MX("mail.example.com")), RR(www, QTYPE.TXT, rdata=TXT("hello")),
                               a(www, "93.184.216.34")),
        "no_answer": response(),
        "nxdomain": response(rcode=RCODE.NXDOMAIN),
        "servfail": response(rcode=RCODE.SERVFAIL),
        "refused": response(rcode=RCODE.REFUSED),
        "truncated": with_answers(response(tc=True), a(www, "93.184.216.34")),
        "mixed_case": with_answers(response("WwW.ExAmPlE.cOm"), a("www.EXAMPLE.com", "93.184.216.34")),
        "long_name": with_answers(response(long_name()), a(long_name(), "93.184.216.34")),
        "many_records": with_answers(response(), *[a(www, f"93.184.{i // 256}.{i % 256}") for i in range(120)]),
    }
    authority = response()
    authority.add_answer(a(www, "93.184.216.34"))
    authority.add_auth(RR("example.com", QTYPE.SOA, rdata=SOA("ns.example.com", "admin.example.com", (1, 2, 3, 4, 5))))
    authority.add_ar(a("ns.example.com", "192.0.2.53"))
    cases["authority_additional"] = authority
    packed = {name: record.pack() for name, record in cases.items()}
    rng = random.Random(SEED)
    for name in ("a_one", "cname_chain", "mx_txt"):  # each cut at a few places
        whole = packed[name]
        for cut in sorted(rng.sample(range(1, len(whole)), 4)):
            packed[f"{name}_cut{cut}"] = whole[:cut]
    return packed


def judge_answers() -> dict[str, bytes]:
    """Answers for the judge's target: a tag octet (1: IPv6, 0: IPv4) before each address."""
    def six(text: str) -> bytes:
        return b"\x01" + ipaddress.IPv6Address(text).packed

    def four(text: str) -> bytes:
        return b"\x00" + ipaddress.IPv4Address(text).packed

    spellings = ["::ffff:127.0.0.1", "::127.0.0.1", "::ffff:0:a00:1", "64:ff9b::a9fe:a9fe", "64:ff9b:1:a9fe:a9:fe00::",
                 "2002:7f00:1::", "2001:0:4136:e378:8000:63bf:3fff:fdd2", "2600::5efe:a9fe:a9fe",
                 "2600::200:5efe:808:808", "::", "::1", "fe80::1", "fc00::1", "ff02::1", "fec0::1", "2001:db8::1",
                 "3fff::1", "5f00::1", "100::1", "2001:1::1", "2001:3::1", "2001:20::1", "2606:4700::1111"]
    answers = {f"six_{i}": six(text) for i, text in enumerate(spellings)}
    answers["mixed_public"] = four("93.184.216.34") + six("2606:4700::1111") + four("1.1.1.1")
    answers["mixed_mapped"] = four("93.184.216.34") + six("::ffff:10.0.0.1") + six("2606:4700::1111")
    answers["cut"] = six("2606:4700::1111")[:9]
    return answers


def name_offsets(message: bytes) -> list[int]:
    """The question's name, and every place a compression pointer sits (names that end in one)."""
    offsets = [12]
    for at in range(12, len(message) - 1):
        if message[at] & 0xC0 == 0xC0 and ((message[at] & 0x3F) << 8 | message[at + 1]) < at:
            offsets.append(at)
    return offsets


def write(folder: Path, name: str, data: bytes) -> None:
    (folder / name).write_bytes(data)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, type=Path, help="corpus folder (emptied first)")
    out = parser.parse_args().out
    if out.exists():
        shutil.rmtree(out)
    msgs = responses()
    counts: dict[str, int] = {}

    for target in TARGETS_OF_RESPONSES:
        folder = out / target
        folder.mkdir(parents=True)
        for name, data in msgs.items():
            write(folder, name, data)
        counts[target] = len(msgs)

    folder = out / "fuzz_dns_name"
    folder.mkdir(parents=True)
    for name, data in msgs.items():
        for offset in name_offsets(data)[:6]:
            write(folder, f"{name}_at{offset}", struct.pack(">H", offset) + data)
    counts["fuzz_dns_name"] = len(list(folder.iterdir()))

    folder = out / "fuzz_dns_stream"
    folder.mkdir(parents=True)
    framed = {name: struct.pack(">H", len(data)) + data for name, data in msgs.items() if data}
    chunkings = {"whole": b"\x00", "bytes": bytes([16]) + b"\x01" * 16, "odd": b"\x05\x01\x07\x00\x02\x2a"}
    for chunk_name, prefix in chunkings.items():
        write(folder, f"a_one_{chunk_name}", prefix + framed["a_one"])
        write(folder, f"three_{chunk_name}", prefix + framed["a_one"] + framed["cname_chain"] + framed["nxdomain"])
        write(folder, f"zero_length_{chunk_name}", prefix + framed["a_one"] + struct.pack(">H", 0) + framed["a_one"])
        write(folder, f"cut_{chunk_name}", prefix + framed["many_records"][:300])
    counts["fuzz_dns_stream"] = len(list(folder.iterdir()))

    folder = out / "fuzz_dns_judge6"
    folder.mkdir(parents=True)
    for name, data in judge_answers().items():
        write(folder, name, data)
    counts["fuzz_dns_judge6"] = len(list(folder.iterdir()))

    print("corpus: " + ", ".join(f"{t} {n}" for t, n in counts.items()) + f" (seed {SEED}) in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
