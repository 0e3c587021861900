"""PKITS over the wire: NIST's path validation suite served by `openssl s_server`, every client judged by NIST's verdicts.

For each test of pkits/tests.tsv the lab builds the end entity's path to the trust anchor out of the
suite's certificates (pkits/paths.py), serves the end entity with its key and that chain, and asks
every client to verify it: the anchor its only CA (--cafile), the CRLs of the issuers on the path its
revocation data (--crl, with --crl-all: the flags it has; a client without --crl is asked without),
the test's settings (--policy, --explicit-policy, ...: a setting a client cannot be given is a SKIP),
no host name (--no-verify-name: the suite's end entities carry none). An attempt that ends ok is an
accept, one that ends in the handshake a refusal: NIST's valid and invalid. Each client is held to
NIST's verdict except where clients/NAME/pkits.toml records a difference (harness/record.py), with
its kind (bug, policy, limit) and why; tlsnb's own in clients/tlsnb/pkits.toml.

    cd ROOT && /usr/bin/python3 -m pkits.pkits_gate --tlsnb build/client/tlsnb             # every test, every client
    /usr/bin/python3 -m pkits.pkits_gate --tlsnb build/client/tlsnb --sample 8 --seed 7   # 8 tests and their controls
    /usr/bin/python3 -m pkits.pkits_gate --tlsnb build/client/tlsnb --client go 4.4.3 4.1.1
    /usr/bin/python3 -m pkits.pkits_gate --tlsnb build/client/tlsnb --update   # rewrite got; kind and why kept
"""
from __future__ import annotations

import argparse
import json
import os
import random
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from harness import Gate, HarnessError, OpensslServer, bad_input, choose_seed, crossings, rerun_line, run_client
from harness.args import default_work
from harness.clients import UNSUPPORTED_EXIT, ClientError, Profile, all_clients, find_client, gate_client
from harness.outcomes import OutcomeNames, UnknownOutcome
from harness.peers import seclevel_env
from harness.record import Record, recorded_kinds
from harness.rows import RowError, expand_globs

from .paths import Files, PathError, Served, serve, write_files
from .suite import SUITE, Suite, SuiteError, now, pem
from .table import PkitsTest, load
from .verdicts import NOT_TAKEN, SKIP, UNUSABLE, Tally, check_got, verdict_of

HERE = Path(__file__).resolve().parent
DEADLINE_MS = 10000


@dataclass
class Observation:
    test: PkitsTest
    client: Profile
    outcome: str = ""       # ok | STAGE/NAME | skip (exit 89) | exit 2 (the test's files refused as unusable)
    text: str = ""          # the client's detail_text, or its line on exit 89
    problem: str = ""       # why there is no outcome (no server, no JSON, a hang)
    not_asked: str = ""     # why the lab did not ask the client (a setting it lacks, disabled, unservable)


@dataclass
class Prepared:
    """An end entity made ready to serve: its path and CRLs, its files, or why no server can serve it."""
    served: Served
    files: Optional[Files]
    unservable: str = ""


def server_argv(served: Served, files: Files) -> list[str]:
    argv = ["openssl", "s_server", "-accept", "127.0.0.1:0", "-www", "-cert", str(files.leaf), "-key", str(files.key),
            "-no-CAfile", "-no-CApath", "-no-CAstore"]
    if files.chain:
        argv += ["-cert_chain", str(files.chain)]
    if served.ee.key_type == "dsa":  # DSA signs no TLS 1.3 handshake, and only DHE-DSS suites in 1.2
        argv += ["-max_protocol", "TLSv1.2", "-cipher", "ALL:@SECLEVEL=0"]
    return argv


def client_args(t: PkitsTest, client: Profile, anchor: Path, files: Files, port: int) -> list[str]:
    args = ["--no-verify-name", "--cafile", str(anchor), "--requests", "0", "--deadline-ms", str(DEADLINE_MS)]
    if files.crls and client.has("--crl"):
        args += ["--crl", str(files.crls)] + (["--crl-all"] if client.has("--crl-all") else [])
    return args + t.setting_args() + [f"127.0.0.1:{port}"]


def client_record(client: Profile, cases: Optional[set[str]]) -> Record:
    """CLIENT's clients/NAME/pkits.toml (harness/record.py; tlsnb's too), every got one the gate can
    judge, every case among CASES (None: any; harness/tests/test_records.py checks them itself)."""
    return Record(client.room / "pkits.toml", f"pkits ({client.name})", check_got=check_got, cases=cases)


def not_asked(t: PkitsTest, client: Profile, args: list[str]) -> str:
    """Why CLIENT is not asked T with ARGS: its profile disables the test or lacks a flag of them."""
    if reason := client.disabled_reason("pkits", t.test):
        return f"disabled in {client.path}: {reason}"
    lacking = client.lacks(" ".join(args))
    if lacking == "--no-verify-name":
        return f"{client.name} has no {lacking}: it cannot verify a chain but not its end entity's name (the suite's carry none)"
    return f"{client.name} has no {lacking}: it cannot be given the settings {t.settings}" if lacking else ""


class Pkits:
    """One run: the tests, the clients, their records, the tally."""

    def __init__(self, args, suite: Suite, tests: dict[str, PkitsTest], selected: list[PkitsTest],
                 clients: list[Profile], names: OutcomeNames, whole: Optional[set[str]] = None,
                 sample: Optional[set[str]] = None):
        self.args, self.suite, self.tests, self.selected, self.clients, self.names = \
            args, suite, tests, selected, clients, names
        # with --sample: the clients asked every test (the others, the sample's only); None: every client every test
        self.whole, self.sample = whole, sample
        self.failed: set[str] = set()      # clients with a FAIL this run
        self.gate, self.lock = Gate("pkits"), threading.Lock()
        self.work = Path(args.work)
        self.records = {c.name: client_record(c, set(tests)) for c in clients}
        # with --sample: the tests a sampled client is asked beside the sample, one of every kind its record holds
        self.kinds: dict[str, set[str]] = {}
        if whole is not None:
            for c in clients:
                if c.name in whole:
                    continue
                print(f"pkits {c.name}:", flush=True)
                added = recorded_kinds(self.records[c.name], args.seed, lambda test: test in sample)
                self.kinds[c.name] = set(added) | {tests[a].control for a in added if not tests[a].valid}
        self.prepared: dict[str, Prepared] = {}
        self.observations: list[Observation] = []

    def prepare(self, ee: str) -> Prepared:
        served = serve(self.suite, ee)
        if served.ee.key_type == "dsa" and not served.ee.key_loads:
            return Prepared(served, None, f"{ee}'s DSA key inherits its parameters from its issuer: openssl "
                                          f"s_server cannot load the certificate (X509_PUBKEY_get0: decode error)")
        return Prepared(served, write_files(self.suite, served, self.work / "files" / ee))

    def ask(self, t: PkitsTest, client: Profile, files: Files, port: int) -> Observation:
        args = client_args(t, client, self.work / "anchor.pem", files, port)
        obs = Observation(t, client, not_asked=not_asked(t, client, args))
        if obs.not_asked:
            return obs
        run = run_client(client.command, args, timeout=self.args.run_timeout)
        if run.rc in (UNSUPPORTED_EXIT, 2) and not run.attempts and not run.problem:
            obs.outcome = SKIP if run.rc == UNSUPPORTED_EXIT else UNUSABLE
            obs.text = (run.stderr.strip().splitlines() or [f"exit {run.rc}"])[-1]
        elif run.problem or run.signal or len(run.attempts) != 1:
            obs.problem = (f"{client.name}: {run.problem or ''} rc={run.rc} signal={run.signal} "
                           f"attempts={len(run.attempts)} stderr={run.stderr.strip()[-200:]}")
        else:
            a = run.attempts[0]
            try:
                obs.outcome, obs.text = self.names.name(a["stage"], int(a["detail"])), a.get("detail_text", "")
            except (KeyError, TypeError, ValueError):
                obs.problem = f"{client.name}: attempt line without a stage and an integer detail: {a}"
                return obs
            if run.rc != (0 if obs.outcome == "ok" else 1):   # the contract's exit: 0 every attempt ok, 1 any not
                obs.problem = f"{client.name}: exit {run.rc} disagrees with outcome {obs.outcome}"
        return obs

    def asked(self, t: PkitsTest) -> list[Profile]:
        """The clients this run asks T: every one, or with --sample the whole crossings' and, for a test
        of the sample, the rest."""
        if self.whole is None:
            return self.clients
        return [c for c in self.clients if c.name in self.whole or t.test in self.sample
                or t.test in self.kinds.get(c.name, ())]

    def run_test(self, t: PkitsTest) -> list[Observation]:
        unit = self.prepared[t.ee]
        served, files = unit.served, unit.files
        clients = self.asked(t)
        if unit.unservable:
            return [Observation(t, c, not_asked=unit.unservable) for c in clients]
        env = seclevel_env(files.leaf.parent / f"seclevel0.{threading.get_ident()}.cnf", 0) \
            if served.ee.key_type == "dsa" else None
        try:
            peer = OpensslServer(server_argv(served, files), env=env, hold_stdin=True)
        except HarnessError as e:
            return [Observation(t, c, problem=f"openssl s_server did not start: {e}") for c in clients]
        try:
            return [self.ask(t, c, files, peer.port) for c in clients]
        finally:
            peer.stop()

    def judge(self, obs: Observation) -> None:
        failed = self.gate.failed
        self.judge_one(obs)
        if self.gate.failed != failed:
            self.failed.add(obs.client.name)

    def judge_one(self, obs: Observation) -> None:
        t, client = obs.test, obs.client
        case = f"{t.test} {client.name}"
        rerun = rerun_line(__file__, "--tlsnb", self.args.tlsnb, "--client", client.name, t.test)
        diff = self.records[client.name].get(t.test)
        nist = "accept" if t.valid else "refuse"
        if obs.not_asked:
            self.gate.skip(case, obs.not_asked)
        elif obs.problem:
            self.gate.check(case, False, f"{obs.problem}  (rerun: {rerun})")
        elif diff is not None and not diff.explained:
            self.gate.check(case, False, f"{diff.where or diff.case}: the difference ({obs.outcome}) is recorded "
                                         f"without its kind or why: write them")
        elif diff is not None and verdict_of(diff.got) == nist:
            self.gate.check(case, False, f"{diff.where}: recorded as a difference, but {diff.got} is NIST's "
                                         f"verdict ({t.verdict}): remove it (--update)")
        elif obs.outcome in NOT_TAKEN:
            if diff is not None and diff.got == obs.outcome:
                self.gate.skip(case, f"{obs.outcome}: {obs.text} ({diff.kind}: {diff.why})")
            elif diff is None:
                self.gate.check(case, False, f"{obs.outcome} ({obs.text}): not taken, and no difference is recorded "
                                             f"for {t.test} in {client.name}'s pkits.toml (--update writes it)  "
                                             f"(rerun: {rerun})")
            else:
                self.gate.check(case, False, f"{obs.outcome} ({obs.text}): not taken, where {diff.where or diff.case} "
                                             f"records got = {diff.got!r} (the client changed, or the record is stale: "
                                             f"--update)  (rerun: {rerun})")
        else:
            self.compare(obs, case, diff, nist, rerun)

    def compare(self, obs: Observation, case: str, diff, nist: str, rerun: str) -> None:
        got = verdict_of(obs.outcome)
        want = verdict_of(diff.got) if diff is not None else nist
        if got is None:
            self.gate.check(case, False, f"{obs.outcome} [{obs.text}]: neither an accept nor a refusal in the "
                                         f"handshake  (rerun: {rerun})")
        elif got == want:
            note = f"; recorded {diff.kind}" if diff is not None else ""
            self.gate.check(case, True, f"NIST {obs.test.verdict}, {got}: {obs.outcome}{note}")
        else:
            source = f"as recorded ({diff.kind}) at {diff.where}" if diff is not None else "NIST's verdict"
            self.gate.check(case, False, f"NIST {obs.test.verdict}; expected {want} ({source}), got {got}: "
                                         f"{obs.outcome} [{obs.text}]  (rerun: {rerun})")

    def run(self) -> int:
        start = time.monotonic()
        ees = sorted({t.ee for t in self.selected})
        with ThreadPoolExecutor(max_workers=self.args.jobs) as pool:
            self.prepared = dict(zip(ees, pool.map(self.prepare, ees)))
            check_time(self.selected, self.prepared)
            for found in pool.map(self.run_test, self.selected):
                with self.lock:
                    self.observations += found
                    for obs in found:
                        self.judge(obs)
        print(f"pkits: {len(self.selected)} tests x {len(self.clients)} clients in {time.monotonic() - start:.1f} s",
              flush=True)
        tally = Tally(self.observations, self.records, self.tests)
        tally.print()
        self.write_results(tally)
        if self.args.update:
            self.update()
        rc = self.gate.finish()
        for client in self.clients:   # a whole crossing held: the digest of its inputs, for the next default gate
            room = crossings.room_of(client.name)
            if room and client.name not in self.failed and not self.args.update and \
                    (self.whole is None and not self.args.tests or self.whole and client.name in self.whole):
                mine = [o for o in self.observations if o.client is client]
                crossings.record_green("pkits", room, f"{len(mine)} tests, {sum(not o.not_asked for o in mine)} asked")
        return rc

    def write_results(self, tally: Tally) -> None:
        """The run's cells for the results page (clients/results_page.py): work/results.json."""
        (self.work / "results.json").write_text(json.dumps(
            {"tests": [{"test": t.test, "name": t.name, "verdict": t.verdict, "settings": t.settings,
                        "control": t.control} for t in self.selected],
             "clients": [c.name for c in self.clients], "cells": tally.cells()}, indent=1))

    def update(self) -> None:
        order = list(self.tests)
        for client in self.clients:
            mine = [o for o in self.observations if o.client is client and not o.not_asked]
            if any(o.problem for o in mine):
                print(f"update: {client.name}: cases that could not run: nothing recorded")
                continue
            nist = {o.test.test: "accept" if o.test.valid else "refuse" for o in mine}
            self.records[client.name].write(order, {o.test.test: None if verdict_of(o.outcome) == nist[o.test.test]
                                                    else o.outcome for o in mine})


def check_time(selected: list[PkitsTest], prepared: dict[str, Prepared]) -> None:
    """The clock inside the suite's validity: every certificate a Valid test serves is valid now (the
    suite's run until 2030-12-31); past it every Valid test would fail as expired, so the gate stops."""
    moment = now()
    for t in selected:
        for cert in ([] if not t.valid else prepared[t.ee].served.path + prepared[t.ee].served.extras):
            if not cert.not_before <= moment <= cert.not_after:
                bad_input("pkits_gate", f"{t.test} is valid only while {cert.stem} is ({cert.not_before:%Y-%m-%d} to "
                                        f"{cert.not_after:%Y-%m-%d}); the clock says {moment:%Y-%m-%d}: run the gate "
                                        f"under faketime (apt's faketime) inside the suite's validity")


def whole_crossings(args, clients: list[Profile]) -> Optional[set[str]]:
    """With --sample: the clients asked every test, each with its reason printed (the reference always:
    the whole suite costs it about as much as one client's sample; a client under test where its inputs
    changed since its last green whole run, harness/crossings.py); None without --sample."""
    if not args.sample or args.tests:
        return None
    whole = set()
    for c in clients:
        room = crossings.room_of(c.name)
        why = "the reference: cheap enough to ask every test" if c.reference else \
            crossings.whole_reason("pkits", room) if room else None
        print(f"pkits {c.name}: " + (f"whole: {why}" if why else "sampled: its inputs are as at its last green whole run"),
              flush=True)
        if why:
            whole.add(c.name)
    return whole


def choose(tests: dict[str, PkitsTest], args, clients: list[Profile],
           whole: Optional[set[str]] = None) -> tuple[list[PkitsTest], set[str]]:
    """The tests asked, or a seeded sample of --sample among those some client can be given the
    settings of (a variant nobody can be asked is SKIPs only), or all; an invalid test brings its control.
    WHOLE: clients asked every test (every test is then selected). Returns the selected tests and the
    sample's (every selected one without --sample)."""
    args.tests, empty = expand_globs(args.tests, list(tests))
    if empty:
        bad_input("pkits_gate", f"{empty[0]}: the pattern matches no test of pkits/tests.tsv (--list)")
    unknown = [a for a in args.tests if a not in tests]
    if unknown:
        bad_input("pkits_gate", f"{unknown[0]}: not a test of pkits/tests.tsv (--list)")
    picked = set(args.tests) if args.tests else set(tests)
    if args.sample and not args.tests:
        askable = sorted(t.test for t in tests.values()
                         if any(not c.lacks(" ".join(t.setting_args())) for c in clients))
        seed = choose_seed(args.seed)
        picked = set(random.Random(seed).sample(askable, min(args.sample, len(askable))))
    picked |= {tests[p].control for p in picked if not tests[p].valid}
    sample = [t for t in tests.values() if t.test in picked]
    selected = list(tests.values()) if whole else sample   # a crossing run whole needs every test
    if args.sample and not args.tests:
        print(f"sample: {len(sample)} tests ({args.sample} drawn among the {len(askable)} some client can be asked, "
              f"and their controls): {' '.join(t.test for t in sample)}\n"
              f"sample: rerun it: {rerun_line(__file__, '--tlsnb', args.tlsnb, '--sample', args.sample, '--seed', seed)}",
              flush=True)
    return selected, {t.test for t in sample}


def list_tests(tests) -> int:
    for t in tests:
        print(f"{t.test}\t{t.verdict}\t{t.settings}\t{t.name}")
    return 0


def clients_of(args) -> list[Profile]:
    """The reference (the gate's --tlsnb) and the clients asked, or every client with a profile."""
    build = args.build_dir or Path(args.tlsnb).resolve().parent.parent
    reference = gate_client(None, args.tlsnb, build)
    names = args.client or [p.name for p in all_clients(build) if not p.reference]
    found = [reference] if not args.client or "tlsnb" in names else []
    for name in names:
        if name != "tlsnb":
            client = find_client(name, build)
            client.check_installed()
            found.append(client)
    return found


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n".join(__doc__.split("\n")[1:]))
    p.add_argument("tests", nargs="*", help="run only these tests (4.1.1 4.8.1.3 ...; default: all, or --sample)")
    p.add_argument("--tlsnb", required=True, help="the reference client's binary")
    p.add_argument("--client", action="append", help="a client (a room of clients/, tlsnb, or a profile.toml); "
                                                     "repeatable; default: every client")
    p.add_argument("--build-dir", type=Path, help="the build tree a profile's {build} means (default: --tlsnb's)")
    p.add_argument("--work", default=default_work(), help="scratch folder: the served files, results.json")
    p.add_argument("--sample", type=int, default=0, help="N tests at random (seeded) and their controls")
    p.add_argument("--seed", type=int,
                   help="the sample's seed (default: derived from the tree, printed; give one to explore)")
    p.add_argument("--update", action="store_true", help="rewrite each client's recorded got from observation")
    p.add_argument("--jobs", type=int, default=2 * (os.cpu_count() or 1), help="tests in flight")
    p.add_argument("--run-timeout", type=float, default=30, help="seconds one client run may take (then killed)")
    p.add_argument("--suite", type=Path, default=SUITE, help=f"PKITS_data/ (default: Debian's, {SUITE})")
    p.add_argument("--openssl-include", type=Path, default=Path("/usr/include/openssl"),
                   help="the OpenSSL headers tlsnb was built with (outcome names)")
    p.add_argument("--list", action="store_true",
                   help="print every test, run nothing (what --only can name: mutants/ resolves its gate rows by it)")
    p.add_argument("--list-sample", action="store_true",
                   help="with --sample N: print the sample this tree draws and its controls, run nothing")
    p.add_argument("--only", nargs="*", default=[], metavar="TEST",
                   help="run only these tests, as the positional TESTS (the flag every gate of the lab takes: "
                        "mutants/ runs a gate row with it)")
    p.add_argument("--certs", help="not used (the suite is PKITS'): taken so that clients/cross.py passes every "
                                   "gate the same flags")
    args = p.parse_args(argv)
    args.tests += args.only
    return args


def main() -> int:
    args = parse_args()
    try:
        suite = Suite(args.suite)
        tests = load(HERE / "tests.tsv", {c.stem for c in suite.certs.values()})
        if args.list:
            return list_tests(tests.values())
        names = OutcomeNames(args.openssl_include)
        if not os.access(args.tlsnb, os.X_OK):
            raise ClientError(f"tlsnb not executable at {args.tlsnb!r}")
        clients = clients_of(args)
        whole = whole_crossings(args, clients)
        selected, sample = choose(tests, args, clients, whole)
        if args.list_sample:   # the sample this tree draws (and its controls)
            return list_tests([t for t in selected if t.test in sample])
        Path(args.work).mkdir(parents=True, exist_ok=True)
        (Path(args.work) / "anchor.pem").write_text(pem(suite.anchor.der, "CERTIFICATE"))
        gate = Pkits(args, suite, tests, selected, clients, names, whole, sample)
    except (SuiteError, RowError, UnknownOutcome, ClientError, PathError, OSError) as e:
        bad_input("pkits_gate", e)
    return gate.run()


if __name__ == "__main__":
    sys.exit(main())
