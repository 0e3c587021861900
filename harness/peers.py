"""Test peers started as children: each prints `READY <port>` when it listens and one
`REPORT {json}` line when it stops (SIGTERM).

    with tls_server(certs, "leaf-ecdsa", "silent") as server: ... server.port ... server.report

openssl s_server is the one peer that says `ACCEPT 127.0.0.1:PORT` instead (OpensslServer).
"""
from __future__ import annotations

import json
import os
import re
import select
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import Optional

from .layout import ROOT, SERVERS
from .runs import die_with_parent, dying_with_parent, read_both

PY = "/usr/bin/python3"  # Debian's: the pyenv python3 first on PATH cannot see apt's trustme/dnslib


class HarnessError(Exception):
    """A set-up failure (a peer that never said READY): the case fails, loudly."""


class ForkedPeer:
    """A peer the zygote forked (harness/zygote.py): what Server uses of a Popen, by its pidfd.
    Its exit status stays with the zygote, its parent: `returncode` is 0 once it has ended."""

    def __init__(self, argv: list[str], pid: int, pidfd: int, stdout: int, stderr: int):
        self.args, self.pid, self._pidfd = argv, pid, pidfd
        self.stdin = None
        self.stdout = open(stdout, "r", errors="replace")
        self.stderr = open(stderr, "r", errors="replace")
        self.returncode: Optional[int] = None

    def poll(self) -> Optional[int]:
        if self.returncode is None and select.select([self._pidfd], [], [], 0)[0]:
            self.returncode = 0
            os.close(self._pidfd)
        return self.returncode

    def wait(self, timeout: Optional[float] = None) -> int:
        if self.returncode is None and not select.select([self._pidfd], [], [], timeout)[0]:
            raise subprocess.TimeoutExpired(self.args, timeout)
        return self.poll()

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            signal.pidfd_send_signal(self._pidfd, sig)

    def communicate(self, timeout: Optional[float] = None) -> tuple[str, str]:
        """Both pipes to their ends, then the exit; TimeoutExpired past TIMEOUT, as Popen's."""
        if self.stdout.closed:  # read to their ends already
            return "", ""
        end = None if timeout is None else time.monotonic() + timeout
        out_bytes, err_bytes, past = read_both(self.stdout, self.stderr, end)
        if past:
            raise subprocess.TimeoutExpired(self.args, timeout)
        self.wait(None if end is None else max(0.0, end - time.monotonic()))
        out, err = out_bytes.decode(errors="replace"), err_bytes.decode(errors="replace")
        self.stdout.close()
        self.stderr.close()
        return out, err


class Zygote:
    """The gate's one warm interpreter for its Python peers (harness/zygote.py), started at its
    first use by a thread that lives as long as the gate: the zygote dies with the thread that
    started it (PR_SET_PDEATHSIG), so not with a worker thread of a pool. TLSLAB_ZYGOTE=0: none."""

    _lock = threading.Lock()
    _sock: Optional[socket.socket] = None

    # What a process reads once as it starts (OpenSSL its configuration: a row's seclevel; the loader
    # its preloads; Python its own): a peer whose environment sets one differently starts cold.
    AT_START = ("OPENSSL", "LD_", "PYTHON", "SSL_")

    @classmethod
    def serves(cls, argv: list[str], env: Optional[dict]) -> bool:
        if os.environ.get("TLSLAB_ZYGOTE", "1") == "0" or argv[0] != PY or not argv[1].endswith(".py"):
            return False
        changed = {k for k in set(env or {}) | set(os.environ) if (env or os.environ).get(k) != os.environ.get(k)}
        return not any(k.startswith(cls.AT_START) for k in changed)

    @classmethod
    def _start(cls) -> socket.socket:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        started = threading.Event()

        def keeper() -> None:
            subprocess.Popen([PY, str(Path(__file__).with_name("zygote.py")), str(theirs.fileno())],
                             pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             preexec_fn=die_with_parent)
            theirs.close()
            started.set()
            threading.Event().wait()   # the zygote's parent thread: it must outlive every peer
        threading.Thread(target=keeper, name="zygote", daemon=True).start()
        started.wait()
        return ours

    @classmethod
    def spawn(cls, argv: list[str], env: Optional[dict]) -> ForkedPeer:
        """ARGV = [PY, SCRIPT, ARGS...] forked warm, with pipes for its stdout and stderr."""
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        null = os.open(os.devnull, os.O_RDONLY)
        request = {"argv": argv[1:], "env": dict(os.environ if env is None else env), "cwd": os.getcwd()}
        try:
            with cls._lock:
                if cls._sock is None:
                    cls._sock = cls._start()
                socket.send_fds(cls._sock, [json.dumps(request).encode()], [null, out_w, err_w])
                msg, fds, _, _ = socket.recv_fds(cls._sock, 4096, 1)
        finally:
            for fd in (null, out_w, err_w):
                os.close(fd)
        if not msg or not fds:
            os.close(out_r)
            os.close(err_r)
            raise HarnessError(f"{' '.join(argv)}: the zygote did not fork it (harness/zygote.py)")
        return ForkedPeer(argv, json.loads(msg)["pid"], fds[0], out_r, err_r)


class Server:
    """A test peer started as a child: waits for `READY <port>`, stops with SIGTERM.

    After stop(), `report` holds the JSON of the peer's last `REPORT {...}` line
    (every lab peer prints one when it exits), or {} when it printed none.
    """

    # The line that says a peer listens, and the group holding its port.
    ready_pattern = re.compile(rb"^READY (\d+)$", re.M)

    def __init__(self, argv: list[str], ready_timeout: float = 15.0, env: Optional[dict] = None,
                 hold_stdin: bool = False):
        self.argv = [str(a) for a in argv]
        # hold_stdin: a pipe nobody writes, for a peer that ends when its input does (s_server)
        if not hold_stdin and Zygote.serves(self.argv, env):
            self.proc = Zygote.spawn(self.argv, env)
        else:
            started, preexec = dying_with_parent(self.argv)
            self.proc = subprocess.Popen(started, stdin=subprocess.PIPE if hold_stdin else None,
                                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                                         start_new_session=True, preexec_fn=preexec)
        self._early = b""  # stdout read while waiting for the ready line
        self.report: dict = {}
        self.stderr = self.stdout = ""
        self.port = self._await_ready(ready_timeout)

    @classmethod
    def script(cls, name: str, *args, **kw) -> "Server":
        """Start servers/<name> with Debian's python3."""
        return cls([PY, str(SERVERS / name), *map(str, args)], **kw)

    def _await_ready(self, timeout: float) -> int:
        # Raw reads of the pipe: a peer may write more than one line at once, and select()
        # on a buffered text pipe would not wake for a line already in Python's buffer.
        end = time.monotonic() + timeout
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while time.monotonic() < end:
            ready, _, _ = select.select([fd], [], [], max(0.0, end - time.monotonic()))
            chunk = os.read(fd, 4096) if ready else b""
            if not chunk:
                break
            self._early += chunk
            m = self.ready_pattern.search(self._early)
            if m:
                return int(m.group(1))
        self._kill()
        err = self.proc.stderr.read() if self.proc.stderr else ""
        raise HarnessError(f"{' '.join(self.argv)}: no ready line within {timeout}s; stderr: {err.strip()[-500:]}")

    def _kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()

    def stop(self, timeout: float = 10.0) -> dict:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                out, self.stderr = self.proc.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                self._kill()
                out, self.stderr = "", "(killed: did not stop on SIGTERM)"
        else:
            out, self.stderr = self.proc.communicate()
        out = self._early.decode(errors="replace") + (out or "")
        self.stdout = out
        for line in reversed(out.splitlines()):
            if line.startswith("REPORT "):
                self.report = json.loads(line[len("REPORT "):])
                break
        try:  # workers or helpers a peer started must not outlive it
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        return self.report

    def __enter__(self) -> "Server":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def tls_server(certs, cert: str, behaviour: str = "normal", *args, **kw) -> Server:
    """servers/tls_server.py serving CERT (leaf-ecdsa, expired, ...) from the certificate folder."""
    return Server.script("tls_server.py", "--chain", f"{certs}/{cert}.pem", "--key", f"{certs}/{cert}.key",
                         "--behaviour", behaviour, *args, **kw)


def bulk_server(certs, cert: str, *args, **kw) -> Server:
    """servers/bulk_server.py serving CERT: tls_server.py's `normal` at two thirds of its CPU or less, for rows that
    make thousands of connections (it refuses every other behaviour)."""
    return Server.script("bulk_server.py", "--chain", f"{certs}/{cert}.pem", "--key", f"{certs}/{cert}.key",
                         *args, **kw)


class OpensslServer(Server):
    """`openssl s_server -accept 127.0.0.1:0` prints `ACCEPT 127.0.0.1:PORT` (3.0), not `READY <port>`."""

    ready_pattern = re.compile(rb"^ACCEPT \S+:(\d+)$", re.M)

    def stop(self, timeout: float = 10.0) -> dict:
        """s_server prints no REPORT; with -early_data its log says, per connection, whether early
        data came: counted as report["early_data"] = {"none": N, "received": N}."""
        super().stop(timeout)
        lines = self.stdout.splitlines()
        self.report = {"early_data": {"none": sum(line == "No early data received" for line in lines),
                                      "received": sum(line.startswith("Early data received") for line in lines)}}
        return self.report


def s_server(certs, cert: str, *args, **kw) -> Server:
    """`openssl s_server` serving CERT.pem's first certificate with CERT.key, plus ARGS (`-www` to answer
    HTTP; a staple: -status_file FILE; early data: -early_data, which -www excludes), no system store.
    Its stdin is a pipe held open (it ends when its input does)."""
    return OpensslServer(["openssl", "s_server", "-accept", "127.0.0.1:0", "-cert", f"{certs}/{cert}.pem",
                          "-key", f"{certs}/{cert}.key", "-no-CAfile", "-no-CApath", "-no-CAstore", *args],
                         hold_stdin=True, **kw)


# An OpenSSL configuration whose only setting is the default security level of every SSL_CTX made
# under it: a server reads it before it loads its chain (a 1024-bit key, a SHA-1 signature, a DSA
# key are refused at load time under Debian's level 2, before any @SECLEVEL of a cipher string).
SECLEVEL_CONF = """\
# written by the lab (harness/peers.py): the default security level of one server
openssl_conf = lab_init
[lab_init]
ssl_conf = lab_ssl
[lab_ssl]
system_default = lab_level
[lab_level]
CipherString = DEFAULT:@SECLEVEL={level}
"""


def seclevel_env(conf: Path, level: int) -> dict:
    """The environment of a server at security LEVEL: CONF written, OPENSSL_CONF naming it."""
    conf.write_text(SECLEVEL_CONF.format(level=level))
    return {**os.environ, "OPENSSL_CONF": str(conf)}


def hostile_peer(certs, cert: str, scenario: str = "normal", *args, **kw) -> Server:
    """hostile/peer.py (a TLS 1.3 server that breaks the protocol as SCENARIO says) serving CERT."""
    return Server([PY, str(ROOT / "hostile" / "peer.py"), "--chain", f"{certs}/{cert}.pem", "--key", f"{certs}/{cert}.key",
                   "--ca", f"{certs}/ca.pem", "--scenario", scenario, *args], **kw)


def dns_stub(*zones: str, **kw) -> Server:
    """servers/dns_stub.py answering each NAME=SPEC zone; a word --bind=ADDR is passed as it is."""
    return Server.script("dns_stub.py", *[a for z in zones for a in ((z,) if z.startswith("--") else ("--zone", z))],
                         **kw)


def mux(*backends: str, **kw) -> Server:
    """servers/mux.py handing connections to each HOST:PORT[+MS] backend in turn (a word that
    starts with -- is one of its flags: --count-tickets)."""
    return Server.script("mux.py", *[a for b in backends for a in ((b,) if b.startswith("--") else ("--backend", b))],
                         **kw)
