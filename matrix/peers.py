"""The two server implementations a row runs against: the lab's tls_server.py and `openssl s_server`.

Both serve the row's chain and key with the row's versions and ciphers; the same
expectation must hold against each (s_server is a second, independent TLS stack
configuration: its own chain handling, its own defaults).
"""
from __future__ import annotations

import atexit
import re
import shutil
import tempfile
import threading
from pathlib import Path

from harness import OpensslServer, Server
from harness.peers import seclevel_env

OPENSSL_VERSION = {"1.0": "TLSv1", "1.1": "TLSv1.1", "1.2": "TLSv1.2", "1.3": "TLSv1.3"}
PEM_BLOCK = re.compile(rb"-----BEGIN CERTIFICATE-----.*?-----END CERTIFICATE-----\n?", re.S)


_scratch_lock = threading.Lock()
_scratch: dict[Path, Path] = {}


def scratch(work: Path) -> Path:
    """This process's folder for the files the servers read (split chains, seclevel configurations),
    under WORK and removed when the process ends, however it ends short of SIGKILL (the gate's
    SIGTERM handler turns CTest's timeout into an exit): a gate leaves no file of its own behind."""
    with _scratch_lock:
        if work not in _scratch:
            work.mkdir(parents=True, exist_ok=True)
            _scratch[work] = Path(tempfile.mkdtemp(prefix="servers.", dir=work))
            atexit.register(shutil.rmtree, _scratch[work], True)
        return _scratch[work]


def server_env(row, work: Path) -> dict | None:
    """OPENSSL_CONF with the row's security level: applied when the server's SSL_CTX is made,
    before it loads the chain (a 1024-bit key or a SHA-1 signature is refused at load time)."""
    level = row.get("server_seclevel")
    if level is None:
        return None
    # one file per thread in this process's folder: a file being read is never rewritten
    return seclevel_env(scratch(work) / f"{row.name}.seclevel{level}.{threading.get_ident()}.cnf", level)


def start_lab_server(row, certs: Path, work: Path) -> Server:
    args = ["--chain", certs / row.get("chain"), "--key", certs / row.get("key")]
    for flag, key in (("--min-version", "server_min"), ("--max-version", "server_max"), ("--ciphers", "ciphers")):
        if row.get(key):
            args += [flag, row.get(key)]
    if row.get("client_ca"):
        args += ["--client-ca", certs / row.get("client_ca")] + (["--client-optional"] if row.get("client_optional") else [])
    return Server.script("tls_server.py", *args, env=server_env(row, work))


def split_chain(chain: Path, work: Path, row_name: str) -> tuple[Path, Path | None]:
    """s_server takes the leaf (-cert) and the rest (-cert_chain) apart; keep the rest's order."""
    blocks = PEM_BLOCK.findall(chain.read_bytes())
    tag = threading.get_ident()  # one file per thread in this process's folder: never one being read
    leaf = scratch(work) / f"{row_name}.s_server.leaf.{tag}.pem"
    leaf.write_bytes(blocks[0])
    if len(blocks) == 1:
        return leaf, None
    rest = scratch(work) / f"{row_name}.s_server.chain.{tag}.pem"
    rest.write_bytes(b"".join(blocks[1:]))
    return leaf, rest


def start_openssl_server(row, certs: Path, work: Path) -> Server:
    leaf, rest = split_chain(certs / row.get("chain"), work, row.name)
    argv = ["openssl", "s_server", "-accept", "127.0.0.1:0", "-www", "-cert", str(leaf),
            "-key", str(certs / row.get("key"))]
    if rest is not None:
        argv += ["-cert_chain", str(rest)]
    if row.get("server_min"):
        argv += ["-min_protocol", OPENSSL_VERSION[row.get("server_min")]]
    if row.get("server_max"):
        argv += ["-max_protocol", OPENSSL_VERSION[row.get("server_max")]]
    if row.get("ciphers"):
        argv += ["-cipher", row.get("ciphers")]
    if row.get("staple"):
        argv += ["-status_file", str(certs / row.get("staple"))]
    if row.get("client_ca"):  # -verify asks, -Verify requires; the CA file's names go in the request;
        # without -verify_return_error s_server logs a bad client certificate and goes on
        argv += ["-verify" if row.get("client_optional") else "-Verify", "1", "-verify_return_error",
                 "-CAfile", str(certs / row.get("client_ca"))]
    # No system store: s_server would otherwise be free to complete a chain we left short on purpose.
    argv += ["-no-CAfile", "-no-CApath", "-no-CAstore"]
    return OpensslServer(argv, env=server_env(row, work))
