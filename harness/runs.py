"""One client process: its exit, its JSON attempts and summary, its stderr, bounded in time.

    run = run_client(["build/client/tlsnb"], ["--count", 4, "127.0.0.1:4433"], timeout=30)
    run.outcomes()   # {'ok/0': 4}
"""
from __future__ import annotations

import ctypes
import json
import os
import resource
import selectors
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from typing import Optional


@dataclass
class Run:
    """One client process: its exit, its JSON attempts and summary, and its stderr."""
    argv: list[str]
    rc: int
    signal: int            # the signal that killed it, 0 when it exited
    attempts: list[dict] = field(default_factory=list)
    summary: dict = field(default_factory=dict)
    stderr: str = ""
    wall_s: float = 0.0
    cpu_s: float = 0.0     # the process's CPU, user and system, its waited-for children's included (wait4)
    problem: str = ""      # output that breaks the contract (a line that is not JSON), or a hang

    def outcomes(self) -> dict[str, int]:
        """Counts of 'stage/detail' over the attempts, e.g. {'handshake/10': 64}."""
        counts: dict[str, int] = {}
        for a in self.attempts:
            key = f"{a.get('stage')}/{a.get('detail')}"
            counts[key] = counts.get(key, 0) + 1
        return counts

    def command(self) -> str:
        return " ".join(self.argv)


_libc = ctypes.CDLL(None, use_errno=True)
PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """In a child before exec: SIGKILL when the process that started it dies. A child runs in a
    session of its own (so its whole group can be killed), which a kill of its parent's group does
    not reach: without this, a gate killed for a hang would leave its client spinning."""
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


# util-linux's setpriv sets the death signal and execs the program: a child started through it needs no
# Python code between fork and exec, so subprocess starts it with vfork (1.5 ms from a 50 MB gate,
# where a fork for preexec_fn costs 11: page tables copied, then copy-on-write faults in the gate).
SETPRIV = shutil.which("setpriv")


def dying_with_parent(argv: list[str]) -> tuple[list[str], Optional[object]]:
    """(argv, preexec_fn) that start ARGV so that it dies with this process's starting thread."""
    if SETPRIV:
        return [SETPRIV, "--pdeathsig", "SIGKILL", "--", *argv], None
    return argv, die_with_parent


def limited(max_fds: int) -> None:
    """In the child, before exec: die with the parent, and open at most MAX_FDS descriptors."""
    die_with_parent()
    resource.setrlimit(resource.RLIMIT_NOFILE, (max_fds, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))


@dataclass
class Ended:
    """How a bounded process ended: its status, its output, whether it was killed for a hang,
    and the CPU it used (wait4's rusage: its own and its waited-for children's)."""
    rc: int
    out: str
    err: str
    hung: bool
    cpu_s: float


def read_both(stdout, stderr, deadline: Optional[float]) -> tuple[bytes, bytes, bool]:
    """Two pipes to their ends, or until DEADLINE (monotonic; None: no limit): (out, err, past it)."""
    chunks: dict[int, list[bytes]] = {stdout.fileno(): [], stderr.fileno(): []}
    past = False
    with selectors.DefaultSelector() as sel:
        for f in (stdout, stderr):
            sel.register(f, selectors.EVENT_READ)
        while sel.get_map() and not past:
            left = None if deadline is None else deadline - time.monotonic()
            past = left is not None and left <= 0
            for key, _ in [] if past else sel.select(left):
                data = os.read(key.fd, 65536)
                if data:
                    chunks[key.fd].append(data)
                else:
                    sel.unregister(key.fileobj)
    return b"".join(chunks[stdout.fileno()]), b"".join(chunks[stderr.fileno()]), past


def run_bounded(argv: list[str], timeout: float, env: Optional[dict] = None,
                max_fds: Optional[int] = None, stdin_closed: bool = False) -> Ended:
    """Runs ARGV in a process group of its own. Past TIMEOUT the whole group is killed (nothing
    it started outlives it) and `hung` is true. MAX_FDS: the child's soft RLIMIT_NOFILE (ulimit -n),
    set in the child alone. STDIN_CLOSED: the child starts with descriptor 0 closed (as inetd's or a
    daemon's children may), not inheriting ours. The process is reaped with wait4, so its CPU is
    its own, whatever else this gate runs at the same time."""
    def child() -> None:
        if max_fds is None:
            die_with_parent()
        else:
            limited(max_fds)
        if stdin_closed:
            os.close(0)
    started, preexec = dying_with_parent(argv) if max_fds is None and not stdin_closed else (argv, child)
    proc = subprocess.Popen(started, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                            start_new_session=True, preexec_fn=preexec)
    with proc.stdout, proc.stderr:
        out, err, hung = read_both(proc.stdout, proc.stderr, time.monotonic() + timeout)
        if hung:
            os.killpg(proc.pid, signal.SIGKILL)
            more_out, more_err, _ = read_both(proc.stdout, proc.stderr, None)
            out, err = out + more_out, err + more_err
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
    try:  # children that outlived it (a client's helpers) go with it
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    return Ended(proc.returncode, out.decode(errors="replace"), err.decode(errors="replace"), hung,
                 usage.ru_utime + usage.ru_stime)


def end_group(proc: subprocess.Popen, timeout: float = 10.0) -> None:
    """PROC asked to stop (SIGTERM: a server's fast shutdown, stress-ng reaping its workers), given
    TIMEOUT seconds, then its whole process group killed (SIGKILL) and PROC reaped: nothing left."""
    if proc.poll() is None:
        try:
            proc.terminate()
            proc.wait(timeout=timeout)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def bounded(argv: list[str], timeout: float, env: Optional[dict] = None,
            max_fds: Optional[int] = None, stdin_closed: bool = False) -> tuple[int, str, str, bool]:
    """run_bounded's (returncode, stdout, stderr, hung)."""
    e = run_bounded(argv, timeout, env, max_fds, stdin_closed)
    return e.rc, e.out, e.err, e.hung


def parse_output(run: Run, out: str) -> None:
    """The JSON lines of OUT into RUN; the first line that breaks the contract goes to run.problem."""
    for number, line in enumerate(out.splitlines(), 1):
        if not line.startswith("{"):
            continue
        try:
            obj = json.loads(line)
        except ValueError as e:
            run.problem = run.problem or f"stdout line {number} is not JSON ({e.msg}): {line[:120]!r}"
            continue
        if obj.get("type") == "summary":
            run.summary = obj
        elif not {"stage", "detail"} <= obj.keys():
            run.problem = run.problem or f"stdout line {number} has no stage/detail: {line[:120]!r}"
        else:
            run.attempts.append(obj)


def run_client(command: list[str], args: list, env: Optional[dict] = None, timeout: float = 120.0,
               preload: Optional[str] = None, wrapper: Optional[list[str]] = None,
               max_fds: Optional[int] = None, stdin_closed: bool = False) -> Run:
    """Run `COMMAND --json ARGS` (any client that keeps the lab's contract). A hang is killed at
    TIMEOUT and reported in run.problem; the client's failure is data, never an exception."""
    argv = [*(wrapper or []), *map(str, command), "--json", *map(str, args)]
    full_env = dict(os.environ if env is None else env)
    if preload:
        full_env["LD_PRELOAD"] = preload
    start = time.monotonic()
    e = run_bounded(argv, timeout, full_env, max_fds, stdin_closed)
    run = Run(argv=argv, rc=e.rc if e.rc >= 0 else 0, signal=-e.rc if e.rc < 0 and not e.hung else 0,
              stderr=e.err, wall_s=time.monotonic() - start, cpu_s=e.cpu_s)
    parse_output(run, e.out)
    if e.hung:
        run.problem = f"still running after {timeout:.0f} s (killed)"
    return run


def run_tlsnb(tlsnb: str, args: list, **kw) -> Run:
    """run_client for the reference client."""
    return run_client([tlsnb], args, **kw)
