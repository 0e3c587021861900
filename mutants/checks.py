"""The checks that kill mutants: each runs one program (tlsnb, or the unit tests) and says
whether it behaved. A check that does not pass, exits by a signal, or runs past its time
limit (the process is killed) has killed the mutant.

    from checks import CHECKS, Lab
    verdict = CHECKS["partial_io"].run(lab, Path("build/client/tlsnb"))
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from harness import PY, HarnessError, Run, Server, run_tlsnb

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "shims" / "tests"))
sys.path.insert(0, str(ROOT / "fuzz"))
from shimlib import IO_TAG, HEAP_TAG, client_args, heap_env, io_env, read_report, tls_server  # noqa: E402
from run_fuzz import options_of  # noqa: E402

PROGRAM = "tlsnb"            # the name the shims act on (TLSLAB_SHIM_PROGRAM)
HOSTNAME_MISMATCH = 62       # X509_V_ERR_HOSTNAME_MISMATCH
SETUP_BIO = 2                # client/outcome.h SetupFailure::bio_new


@dataclass
class Lab:
    """What the checks need: certificates, shims, a scratch folder, the run's seed."""
    certs: str
    work: Path
    io_shim: str
    heap_shim: str
    fail_bio_new: str
    fuzz_corpus: str     # the seed corpora the fuzz folder made (BUILD/fuzz/corpus)
    seed: int


@dataclass
class Verdict:
    passed: bool
    detail: str


@dataclass
class Check:
    name: str
    program: str                      # tlsnb | units | judge_dump | fuzz_dns_name
    what: str                         # one line: what it runs and what must hold
    body: Callable[[Lab, Path], Verdict]

    def run(self, lab: Lab, program: Path) -> Verdict:
        try:
            return self.body(lab, program)
        except subprocess.TimeoutExpired as e:
            return Verdict(False, f"timed out after {e.timeout:.0f} s (process killed)")
        except HarnessError as e:
            return Verdict(False, f"harness: {e}")


def _bounded(argv: list[str], timeout: float) -> subprocess.CompletedProcess:
    """Runs ARGV in its own process group; past TIMEOUT the whole group is killed (TimeoutExpired)."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def _run_client(program: Path, args: list, timeout: float, env: Optional[dict] = None,
                preload: Optional[str] = None) -> Run:
    return run_tlsnb(str(program), args, env=env, timeout=timeout, preload=preload)


def _outcome_verdict(run: Run, expected: dict[str, int], extra: str = "") -> Verdict:
    got = run.outcomes()
    if run.signal:
        return Verdict(False, f"killed by signal {run.signal}; outcomes {got}{extra}")
    if got != expected:
        return Verdict(False, f"expected {expected}, got {got} (rc {run.rc}){extra}")
    return Verdict(True, f"{got}{extra}")


# --- the checks --------------------------------------------------------------------------

def _bulk_posts(lab: Lab, program: Path, shimmed: bool) -> Verdict:
    """16 connections x 3 POSTs of 60,000 bytes; the server checks every byte of every body."""
    report = lab.work / "io_shim.report"
    env = io_env(PROGRAM, report, max_send=700, max_recv=300, eagain_every=3) if shimmed else None
    with tls_server(lab.certs, "leaf-ecdsa", "normal", "--verify-body-seed", str(lab.seed), "--workers", "2") as srv:
        run = _run_client(program, client_args(lab.certs, srv.port, "--count", 16, "--requests", 3, "--body", 60000,
                                               "--seed", lab.seed, "--deadline-ms", 10000),
                          timeout=30, env=env, preload=lab.io_shim if shimmed else None)
    server = srv.report
    verdict = _outcome_verdict(run, {"ok/0": 16})
    if not verdict.passed:
        return verdict
    if server.get("requests") != 48 or server.get("bad_bodies") != 0:
        return Verdict(False, f"server saw requests={server.get('requests')} bad_bodies={server.get('bad_bodies')}")
    if shimmed:
        shim = read_report(report, IO_TAG) or {}
        if not shim.get("eagain"):
            return Verdict(False, f"the I/O shim refused nothing: {shim}")
    return Verdict(True, f"{verdict.detail}, 48 bodies intact")


def partial_io(lab: Lab, program: Path) -> Verdict:
    return _bulk_posts(lab, program, shimmed=True)


def plain_posts(lab: Lab, program: Path) -> Verdict:
    return _bulk_posts(lab, program, shimmed=False)


def silent_peer(lab: Lab, program: Path) -> Verdict:
    """64 connections to a peer that never answers all end at their 1 s deadline, in < 5 s."""
    with tls_server(lab.certs, "leaf-ecdsa", "silent") as srv:
        run = _run_client(program, client_args(lab.certs, srv.port, "--count", 64, "--deadline-ms", 1000), timeout=10)
    verdict = _outcome_verdict(run, {"deadline/2": 64}, f", {run.wall_s:.1f} s")
    if verdict.passed and run.wall_s >= 5:
        return Verdict(False, f"took {run.wall_s:.1f} s (limit 5)")
    return verdict


def _name_check(lab: Lab, program: Path, cert: str, name: str) -> Verdict:
    with tls_server(lab.certs, cert, "normal") as srv:
        run = _run_client(program, ["--cafile", f"{lab.certs}/ca.pem", "--name", name, "--count", 4,
                                    f"127.0.0.1:{srv.port}"], timeout=20)
    return _outcome_verdict(run, {f"handshake/{HOSTNAME_MISMATCH}": 4})


def wrong_host(lab: Lab, program: Path) -> Verdict:
    """A chain that verifies but names other.test, dialled as hooks.test: handshake/62."""
    return _name_check(lab, program, "wronghost", "hooks.test")


def partial_wildcard(lab: Lab, program: Path) -> Verdict:
    """A certificate for f*.hooks.test, dialled as foo.hooks.test: handshake/62 (no partial wildcards)."""
    return _name_check(lab, program, "wild-partial", "foo.hooks.test")


def sni_sent(lab: Lab, program: Path) -> Verdict:
    """4 attempts to hooks.test: all ok, and the server saw SNI hooks.test on each (gaps/no_sni)."""
    with tls_server(lab.certs, "leaf-ecdsa", "normal", "--record-sni") as srv:
        run = _run_client(program, client_args(lab.certs, srv.port, "--count", 4), timeout=20)
    verdict = _outcome_verdict(run, {"ok/0": 4})
    if verdict.passed and srv.report.get("sni") != {"hooks.test": 4}:
        return Verdict(False, f"the server saw SNI {srv.report.get('sni')}, expected {{'hooks.test': 4}}")
    return Verdict(verdict.passed, f"{verdict.detail}, SNI {srv.report.get('sni')}" if verdict.passed else verdict.detail)


def cn_only(lab: Lab, program: Path) -> Verdict:
    """CN hooks.test and no subjectAltName, dialled as hooks.test: handshake/62 (the CN is never a name)."""
    return _name_check(lab, program, "cn-only", "hooks.test")


def sigpipe_reset(lab: Lab, program: Path) -> Verdict:
    """Five rounds of 128 connections at once to a peer that sends FIN then RST, memory BIOs,
    SIGPIPE left at default: each ends handshake/-1 and the process lives. A send reaches the
    reset socket only when the RST beats that connection's ClientHello (a race: the last of 128
    ClientHellos usually loses it, yet on a loaded machine a whole round can win it)."""
    with tls_server(lab.certs, "leaf-ecdsa", "fin-then-reset") as srv:
        for round_ in range(1, 6):
            run = _run_client(program, client_args(lab.certs, srv.port, "--count", 128, "--parallel", 128,
                                                   "--transport", "bio", "--sigpipe", "default"), timeout=20)
            verdict = _outcome_verdict(run, {"handshake/-1": 128}, f" (round {round_} of 5)")
            if not verdict.passed:
                return verdict
    return verdict


def sigpipe_injected(lab: Lab, program: Path) -> Verdict:
    """The I/O shim fails the first send with EPIPE (memory BIOs, SIGPIPE default): handshake/-1, no signal."""
    report = lab.work / "io_shim.report"
    env = io_env(PROGRAM, report, fault="epipe", fault_byte=0)
    with tls_server(lab.certs, "leaf-ecdsa", "normal") as srv:
        run = _run_client(program, client_args(lab.certs, srv.port, "--transport", "bio", "--sigpipe", "default"),
                          timeout=20, env=env, preload=lab.io_shim)
    return _outcome_verdict(run, {"handshake/-1": 1})


def _heap_outstanding(lab: Lab, program: Path, args: list, count: int, expected: str,
                      settings: Optional[dict] = None, preload: str = "") -> tuple[Optional[Verdict], int]:
    report = lab.work / "heap_shim.report"
    env = heap_env(PROGRAM, report)
    env.update(settings or {})
    run = _run_client(program, [*args, "--count", count], timeout=30, env=env,
                      preload=" ".join(p for p in (lab.heap_shim, preload) if p))
    verdict = _outcome_verdict(run, {expected: count})
    heap = read_report(report, HEAP_TAG)
    if heap is None:
        return Verdict(False, "the heap shim wrote no report"), 0
    return (None if verdict.passed else verdict), int(heap["outstanding_blocks"])


def _no_growth(lab: Lab, program: Path, args: list, expected: str, **kw) -> Verdict:
    """Blocks outstanding at exit are the same for 1 attempt and for 17: nothing leaks per attempt."""
    counts = []
    for count in (1, 17):
        bad, blocks = _heap_outstanding(lab, program, args, count, expected, **kw)
        if bad:
            return bad
        counts.append(blocks)
    if counts[0] != counts[1]:
        return Verdict(False, f"heap blocks outstanding at exit: {counts[0]} after 1 attempt, {counts[1]} after 17")
    return Verdict(True, f"{expected} x17, {counts[0]} blocks outstanding at exit after 1 attempt and after 17")


def leak_on_failure(lab: Lab, program: Path) -> Verdict:
    """Failed handshakes (wrong host) under the heap shim: no block left per attempt."""
    with tls_server(lab.certs, "wronghost", "normal") as srv:
        return _no_growth(lab, program, client_args(lab.certs, srv.port), f"handshake/{HOSTNAME_MISMATCH}")


def leak_bio_new(lab: Lab, program: Path) -> Verdict:
    """The second BIO_new of every attempt fails (fail_bio_new.so): setup/2, no block left per attempt."""
    with tls_server(lab.certs, "leaf-ecdsa", "normal") as srv:
        # a deadline of 300 ms: an attempt failed inside admit() is reaped at epoll_wait's timeout
        return _no_growth(lab, program, client_args(lab.certs, srv.port, "--deadline-ms", 300), f"setup/{SETUP_BIO}",
                          settings={"TLSLAB_FAIL_BIO_NEW_EVERY": "2"}, preload=lab.fail_bio_new)


def stale_error(lab: Lab, program: Path) -> Verdict:
    """One process, two peers (mutants/mux.py alternates connections): a healthy one that
    trickles a 4,000-byte response one byte per record, and one whose certificate names
    other.test, dialled 200 ms late so that its failures land while the healthy connections
    sit in SSL_read. Each failed verification queues an error; every healthy connection must
    still end ok (gaps/stale_error_queue)."""
    with tls_server(lab.certs, "leaf-ecdsa", "trickle", "--body-size", "4000", "--workers", "2") as good, \
            tls_server(lab.certs, "wronghost", "normal") as bad, \
            Server([PY, str(HERE / "mux.py"), "--backend", f"127.0.0.1:{good.port}",
                    "--backend", f"127.0.0.1:{bad.port}+200"]) as mux:
        run = _run_client(program, client_args(lab.certs, mux.port, "--count", 64, "--parallel", 64,
                                               "--deadline-ms", 20000), timeout=40)
    return _outcome_verdict(run, {"ok/0": 32, f"handshake/{HOSTNAME_MISMATCH}": 32})


def judge_oracle(lab: Lab, program: Path) -> Verdict:
    """fuzz/judge_oracle.py: the judge against Python's ipaddress on every range edge and
    200,000 seeded addresses: zero disagreements."""
    proc = _bounded([PY, str(ROOT / "fuzz" / "judge_oracle.py"), "--dump", str(program), "--random", "200000",
                     "--seed", str(lab.seed)], timeout=60)
    lines = proc.stdout.strip().splitlines()
    failed = [ln for ln in lines if ln.startswith("FAIL")]
    if proc.returncode != 0:
        return Verdict(False, f"exit {proc.returncode}: {(failed[0] if failed else proc.stderr.strip())[:200]}")
    return Verdict(True, lines[-1] if lines else "passed")


def fuzz_dns_name(lab: Lab, program: Path) -> Verdict:
    """The libFuzzer target against its reference decoder: the seed corpus and fuzz/regressions,
    then 200,000 seeded runs (artifacts stay in the scratch folder)."""
    scratch = lab.work / "fuzz_dns_name"
    shutil.rmtree(scratch, ignore_errors=True)
    (scratch / "new").mkdir(parents=True)
    argv = [str(program), f"-seed={lab.seed}", "-runs=200000", f"-dict={ROOT / 'fuzz' / 'dns.dict'}",
            f"-artifact_prefix={scratch}/", *options_of("fuzz_dns_name"), str(scratch / "new"),
            f"{lab.fuzz_corpus}/fuzz_dns_name", str(ROOT / "fuzz" / "regressions" / "fuzz_dns_name")]
    proc = _bounded(argv, timeout=60)
    if proc.returncode != 0:
        why = [ln for ln in proc.stderr.splitlines() if "property does not hold" in ln or "ERROR:" in ln]
        return Verdict(False, f"exit {proc.returncode}: {why[0].strip() if why else proc.stderr.strip()[-200:]}")
    done = [ln for ln in proc.stderr.splitlines() if ln.startswith("Done ")]
    return Verdict(True, done[-1] if done else "no property broken")


def _units(filter_: str) -> Callable[[Lab, Path], Verdict]:
    def body(lab: Lab, program: Path) -> Verdict:
        proc = _bounded([str(program), f"--gtest_filter={filter_}", "--gtest_brief=1"], timeout=60)
        failed = [ln.strip() for ln in proc.stdout.splitlines() if ln.startswith("[  FAILED  ]") and "." in ln]
        if proc.returncode != 0:
            return Verdict(False, f"exit {proc.returncode}: {'; '.join(failed[:3]) or proc.stderr.strip()[-200:]}")
        passed = [ln for ln in proc.stdout.splitlines() if ln.startswith("[  PASSED  ]")]
        return Verdict(True, passed[-1].strip() if passed else "passed")
    return body


CHECKS: dict[str, Check] = {c.name: c for c in [
    Check("partial_io", "tlsnb", "I/O shim (send <= 700, recv <= 300, every 3rd call EAGAIN): 16 x 3 POSTs of "
          "60,000 bytes all ok, the server verifies every byte", partial_io),
    Check("plain_posts", "tlsnb", "the same 16 x 3 POSTs without the shim (the ordinary run)", plain_posts),
    Check("silent_peer", "tlsnb", "64 connections to a silent peer end deadline/2 at 1 s, in < 5 s (killed at 10 s)",
          silent_peer),
    Check("wrong_host", "tlsnb", "a good chain for other.test dialled as hooks.test: handshake/62", wrong_host),
    Check("partial_wildcard", "tlsnb", "f*.hooks.test dialled as foo.hooks.test: handshake/62", partial_wildcard),
    Check("sni_sent", "tlsnb", "4 attempts to hooks.test: ok, and the server saw SNI hooks.test 4 times", sni_sent),
    Check("cn_only", "tlsnb", "CN hooks.test without any SAN dialled as hooks.test: handshake/62", cn_only),
    Check("sigpipe_reset", "tlsnb", "fin-then-reset peer, 5 rounds of 128 at once, memory BIOs, SIGPIPE default: "
          "handshake/-1 each, no signal",
          sigpipe_reset),
    Check("sigpipe_injected", "tlsnb", "I/O shim: the first send fails EPIPE, memory BIOs, SIGPIPE default: "
          "handshake/-1, no signal", sigpipe_injected),
    Check("leak_on_failure", "tlsnb", "heap shim: 1 and 17 failed handshakes leave the same blocks at exit",
          leak_on_failure),
    Check("leak_bio_new", "tlsnb", "heap shim + fail_bio_new.so: the 2nd BIO_new of each attempt fails; 1 and 17 "
          "attempts leave the same blocks at exit", leak_bio_new),
    Check("stale_error", "tlsnb", "mux.py: 32 healthy trickled responses and 32 late wrong-host handshakes in "
          "one process: 32 ok/0 and 32 handshake/62, none failed for another's error", stale_error),
    Check("judge_oracle", "judge_dump", "fuzz/judge_oracle.py: the judge against ipaddress, every edge and "
          "200,000 seeded addresses", judge_oracle),
    Check("fuzz_dns_name", "fuzz_dns_name", "libFuzzer fuzz_dns_name (reference decoder): seeds, regressions, "
          "200,000 runs", fuzz_dns_name),
    Check("unit_dns_judge", "units", "GoogleTest DnsJudge.* (client/tests/dns_judge_test.cc)", _units("DnsJudge.*")),
    Check("unit_dns_name", "units", "GoogleTest DnsName.* (client/tests/dns_name_test.cc)", _units("DnsName.*")),
]}
