"""tlslab's lab library: what every gate script shares (README.md in this folder).

    from harness import Gate, Server, run_tlsnb, gate_args
"""
from .args import gate_args
from .gate import Gate, choose_seed, rerun_line, verdict
from .peers import PY, ROOT, SERVERS, HarnessError, OpensslServer, Server, bulk_server, dns_stub, mux, s_server, tls_server
from .rows import RowError, bad_input, load_toml, load_tsv
from .runs import Run, bounded, run_client, run_tlsnb

__all__ = ["gate_args", "Gate", "choose_seed", "rerun_line", "verdict", "PY", "ROOT", "SERVERS", "HarnessError",
           "OpensslServer", "Server", "bulk_server", "dns_stub", "mux", "s_server", "tls_server", "RowError", "bad_input", "load_toml", "load_tsv", "Run",
           "bounded", "run_client", "run_tlsnb"]
