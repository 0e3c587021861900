"""The event loop, counted: a row's `loop.KEY` terms (harness/expect.py), never a time.

A busy loop is wake-ups that make no progress; a blocked loop is a blocking call made on the
loop's thread. Both are counts, the same on a fast runner and on a slow or loaded one:

    waits           returns of epoll_wait/epoll_pwait/poll/ppoll/select/pselect (wake-ups)
    idle_waits      wake-ups after which the thread moved no byte before its next wait: a loop
                    woken for what it does not serve (EPOLLOUT with nothing to send, a zero
                    timeout) counts one a turn, thousands a second; a loop that sleeps counts its
                    timers only
    progress        I/O calls that moved bytes (or read an end of file)
    blocking_calls  socket calls (TCP or UDP) without O_NONBLOCK or MSG_DONTWAIT on a thread that waits
    resolver_calls  getaddrinfo/gethostbyname* of a name (not a literal) on a thread that waits
    loop_threads    threads that waited

Two ways to see them, both giving these keys: the I/O shim (shims/io_shim.c, LD_PRELOAD: every
client whose profile says shim_sees_io), and for a client whose I/O the shim cannot see (Go's raw
system calls) strace's record of the same calls, read the same way (blocking_calls and
resolver_calls are then absent: strace does not see a descriptor's flags or a library's resolver,
and a term that reads them fails as a missing key, never holds by default).
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Optional

KEYS = ("waits", "idle_waits", "progress", "blocking_calls", "resolver_calls", "loop_threads")
WAITS = ("epoll_wait", "epoll_pwait", "epoll_pwait2", "poll", "ppoll", "select", "pselect6")
IO = ("read", "write", "readv", "writev", "recvfrom", "sendto", "recvmsg", "sendmsg", "recvmmsg", "sendmmsg",
      "pread64", "pwrite64")
RECEIVES = ("read", "readv", "recvfrom", "recvmsg", "recvmmsg", "pread64")


def from_shim(report: Optional[dict]) -> Optional[dict]:
    """The loop's counts from the I/O shim's report (None: no report)."""
    return None if report is None else {k: report[k] for k in KEYS if k in report}


def strace_wrapper(path: Path) -> list[str]:
    """The command prefix that records every thread's waits and I/O calls to PATH."""
    return ["strace", "-f", "-qq", "-o", str(path), "-e", "signal=none",
            "-e", "trace=" + ",".join(WAITS + IO)]


# `PID name(args) = RET [ERRNO (text)]`, `PID name(args <unfinished ...>`, `PID <... name resumed>...) = RET`
CALL = re.compile(r"^(\d+)\s+(?:<\.\.\. (\w+) resumed>|(\w+)\()")
RESULT = re.compile(r" = (-?\d+)(?: E\w+ \(.*\))?$")


def from_strace(path: Path) -> Optional[dict]:
    """The loop's counts from strace's record (strace_wrapper): per thread, a wait's return is a
    wake-up, idle unless a call of that thread moved a byte (or read an end of file) before its next wait."""
    try:
        lines = path.read_text(errors="replace").splitlines()
    except FileNotFoundError:
        return None
    counts = dict.fromkeys(("waits", "idle_waits", "progress", "loop_threads"), 0)
    woke: dict[str, bool] = {}   # a thread that waits -> its last wake-up has made no progress yet
    for line in lines:
        m = CALL.match(line)
        if not m or line.endswith("<unfinished ...>"):
            continue                          # a call's first half: its result comes with `resumed`
        tid, name = m[1], m[2] or m[3]
        if name in WAITS:
            if tid not in woke:
                counts["loop_threads"] += 1
            counts["idle_waits"] += woke.get(tid, False)
            counts["waits"] += 1
            woke[tid] = True
        elif name in IO and (r := RESULT.search(line)) and (int(r[1]) > 0 or (r[1] == "0" and name in RECEIVES)):
            counts["progress"] += 1
            if tid in woke:
                woke[tid] = False
    return counts
