"""A warm interpreter that starts the lab's Python peers by fork, so that a gate pays for Python,
asyncio, ssl, dnslib and cryptography once, not once a row (a cold tls_server.py costs about 110 ms
of CPU before its first line; a fork from here about 10).

The gate's side is harness/peers.py (`Zygote`): it starts this file once per gate process, then
sends it, over a SOCK_SEQPACKET socket (its descriptor is the one argument), one request a peer: the script, its
arguments, its environment and folder, and the peer's stdin, stdout and stderr descriptors
(SCM_RIGHTS). The peer is forked with those as 0, 1, 2, in a session of its own, killed when this
process dies (which dies with the gate), and run as `python3 SCRIPT ARGS` would run it: the script's
module is imported here once (its body, its imports) and each child calls its `main()` (every peer
of the lab has one; a script without runs whole in the child); the answer
is its pid and a pidfd, by which the gate waits for it and signals it without a pid-reuse race.
Children are reaped before each fork and at the end, never before the gate could open their pidfd.

    TLSLAB_ZYGOTE=0   every peer is started cold again (harness/peers.py), to tell a difference apart
"""
import ctypes
import gc
import importlib.util
import inspect
import json
import os
import runpy
import signal
import socket
import sys
import traceback

# What the peers import, loaded once: the children find them in sys.modules.
import argparse  # noqa: F401
import asyncio  # noqa: F401
import asyncio.sslproto  # noqa: F401
import dataclasses  # noqa: F401
import hashlib  # noqa: F401
import hmac  # noqa: F401
import http  # noqa: F401
import logging  # noqa: F401
import ssl  # noqa: F401
import struct  # noqa: F401
import threading  # noqa: F401

for optional in ("dnslib", "cryptography.hazmat.primitives.asymmetric.ec",
                 "cryptography.hazmat.primitives.asymmetric.x25519", "cryptography.hazmat.primitives.asymmetric.rsa",
                 "cryptography.hazmat.primitives.ciphers.aead", "cryptography.hazmat.primitives.serialization"):
    try:
        __import__(optional)
    except ImportError:  # a peer that needs it imports it itself, and says so
        pass

# What the first use costs in every fresh process, paid here once: OpenSSL's algorithm fetches of a
# first SSL_CTX (9 ms a child otherwise), asyncio's first loop and its selector.
ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
asyncio.new_event_loop().close()

PR_SET_PDEATHSIG = 1
_libc = ctypes.CDLL(None, use_errno=True)


_warm: dict[str, object] = {}   # script path -> its module, imported here once


def warm(script: str):
    """SCRIPT's module, imported into this process at its first request (its folder first on sys.path,
    as `python3 SCRIPT` has it), so that every child starts past its body; None: run it whole."""
    if script not in _warm:
        folder = os.path.dirname(os.path.abspath(script))
        if folder not in sys.path:
            sys.path.insert(0, folder)
        name = "peer_" + os.path.basename(script).removesuffix(".py").replace("-", "_")
        spec = importlib.util.spec_from_file_location(name, script)
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except BaseException:  # noqa: BLE001 - the child runs it whole and shows the error as a cold start would
            module = None
        _warm[script] = module if takes_nothing(getattr(module, "main", None)) else None
        gc.freeze()
    return _warm[script]


def takes_nothing(main) -> bool:
    """A main() that runs from sys.argv alone (the peers'; a script whose main wants arguments runs whole)."""
    try:
        inspect.signature(main).bind()
        return True
    except (TypeError, ValueError):
        return False


def exit_code(e: SystemExit) -> int:
    if e.code is None:
        return 0
    if isinstance(e.code, int):
        return e.code
    print(e.code, file=sys.stderr)
    return 1


def child(request: dict, fds: list[int], sock: socket.socket) -> None:
    """In the forked child: become `python3 SCRIPT ARGS` on the descriptors given; never returns."""
    code = 1
    try:
        sock.close()
        os.setsid()
        _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() == 1:  # the zygote died before prctl took
            os._exit(1)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGCHLD, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL if sig != signal.SIGINT else signal.default_int_handler)
        os.environ.clear()
        os.environ.update(request["env"])
        os.chdir(request["cwd"])
        script = request["argv"][0]
        sys.argv = list(request["argv"])
        module = _warm.get(script)
        try:
            if module is not None:
                code = module.main() or 0
            else:
                sys.path[0] = os.path.dirname(os.path.abspath(script))
                runpy.run_path(script, run_name="__main__")
                code = 0
        except SystemExit as e:
            code = exit_code(e)
        except BaseException:  # noqa: BLE001 - a peer's traceback goes to its stderr, as a cold start's would
            traceback.print_exc()
            code = 1
        import atexit
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


def reap() -> None:
    """Children that ended: their pidfds, already with the gate, still say so."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def serve(sock: socket.socket) -> None:
    while True:
        msg, fds, _, _ = socket.recv_fds(sock, 1 << 20, 3)
        if not msg:  # the gate is gone
            return
        reap()
        request = json.loads(msg)
        warm(request["argv"][0])
        pid = os.fork()
        if pid == 0:
            child(request, fds, sock)
        pidfd = os.pidfd_open(pid)
        for fd in fds:
            os.close(fd)
        socket.send_fds(sock, [json.dumps({"pid": pid}).encode()], [pidfd])
        os.close(pidfd)


def main() -> int:
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    gc.freeze()  # the warm modules leave the collector's view: a child's collections touch none of their pages
    sock = socket.socket(fileno=int(sys.argv[1]))
    try:
        serve(sock)
    finally:
        reap()
    return 0


if __name__ == "__main__":
    sys.exit(main())
