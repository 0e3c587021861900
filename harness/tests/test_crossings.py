"""harness/crossings.py held: a crossing is sampled only while its inputs are as at its last green whole run.

    /usr/bin/python3 -m harness.tests.test_crossings

Each case builds a small tree of its own (a client room, a row file, client/), records a green whole
run there and changes one file: a change to the room, to the gate's rows or (for the reference) to
client/ makes the crossing whole again (for a C++ adapter, clients/contract and client/'s tlsnb_base, which it
links); a change anywhere else, or to another gate's rows, does not.
"""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from .. import crossings, gate as gate_module
from ..gate import Gate


def tree(top: Path) -> Path:
    for rel, text in {"clients/go/profile.toml": "name = 'go'\n", "clients/go/hostile.toml": "# record\n",
                      "clients/tlsnb/profile.toml": "name = 'tlsnb'\n", "hostile/hostile.toml": "case\n",
                      "hostile/peer.py": "", "hostile/tls13.py": "", "hostile/tls12.py": "",
                      "pkits/tests.tsv": "test\n", "matrix/rows.toml": "", "certs/pki.toml": "",
                      "client/loop.cc": "int x;\n", "servers/other.py": "", "harness/.keep": "",
                      "faults/faults.toml": "case\n", "servers/tls_server.py": "", "shims/io_shim.c": "",
                      "proxy/relay_loop.cc": "", "clients/shared/adapter.py": "",
                      "clients/uv/profile.toml": 'command = ["/usr/bin/python3", "{root}/clients/shared/adapter.py"]\n',
                      "clients/cc/profile.toml": "name = 'cc'\n", "clients/cc/CMakeLists.txt": "tlslab_adapter(cc)\n",
                      "clients/contract/attempt_base.cc": "", "client/CMakeLists.txt":
                      "set(TLSNB_BASE_SOURCES\n  outcome.cc)\n", "client/outcome.cc": "", "client/outcome.h": "",
                      }.items():
        (top / rel).parent.mkdir(parents=True, exist_ok=True)
        (top / rel).write_text(text)
    return top


def after(change: str, gate: str, client: str) -> bool:
    """Whether the crossing is whole after a green whole run and CHANGE (a path whose content changes)."""
    with tempfile.TemporaryDirectory() as folder:
        root = tree(Path(folder))
        crossings.record_green(gate, client, "a figure", root)
        if crossings.whole_reason(gate, client, root) is not None:
            raise AssertionError("a crossing just recorded green is whole")
        if change:
            target = root / change
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(target.read_text() + "# changed\n" if target.exists() else "new\n")
        return crossings.whole_reason(gate, client, root) is not None


CASES = [  # (case, the path changed, gate, client, whole after it)
    ("nothing-changed",          "",                          "hostile", "go",    False),
    ("its-record",               "clients/go/hostile.toml",   "hostile", "go",    True),
    ("a-new-file-in-its-room",   "clients/go/adapter.go",     "hostile", "go",    True),
    ("its-rows",                 "hostile/hostile.toml",      "hostile", "go",    True),
    ("its-peer",                 "hostile/peer.py",           "hostile", "go",    True),
    ("another-gates-rows",       "pkits/tests.tsv",           "hostile", "go",    False),
    ("another-room",             "clients/tlsnb/profile.toml", "hostile", "go",   False),
    ("another-gates-record",     "clients/go/client.toml",    "hostile", "go",    False),
    ("its-readme",               "clients/go/README.md",      "hostile", "go",    False),
    ("its-profile",              "clients/go/profile.toml",   "pkits",   "go",    True),
    ("client-for-a-client",      "client/loop.cc",            "pkits",   "go",    False),
    ("client-for-the-reference", "client/loop.cc",            "pkits",   "tlsnb", True),
    ("a-bytecode-cache",         "clients/go/__pycache__/x.pyc", "hostile", "go", False),
    ("somewhere-else",           "servers/other.py",          "hostile", "go",    False),
    ("the-fault-rows",           "faults/faults.toml",        "faults",  "go",    True),
    ("the-fault-peer",           "servers/tls_server.py",     "faults",  "go",    True),
    ("the-fault-injector",       "shims/io_shim.c",           "faults",  "go",    True),
    ("the-loop-counter",         "shims/io_shim.c",           "hostile", "go",    True),
    ("the-wire-cutter",          "proxy/relay_loop.cc",       "faults",  "go",    True),
    ("another-gates-peer",       "hostile/peer.py",           "faults",  "go",    False),
    ("its-fault-record",         "clients/go/faults.toml",    "faults",  "go",    True),
    ("its-hostile-record",       "clients/go/hostile.toml",   "faults",  "go",    False),
    ("an-adapter-outside-its-room", "clients/shared/adapter.py", "hostile", "uv",   True),   # uvloop's, in asyncio's room
    ("another-rooms-adapter",    "clients/shared/adapter.py", "hostile", "go",    False),
    ("the-contract-for-a-cpp-adapter", "clients/contract/attempt_base.cc", "faults", "cc", True),   # it links it
    ("tlsnb-base-for-a-cpp-adapter", "client/outcome.h",       "matrix",  "cc",    True),   # through the contract
    ("the-rest-of-client-for-it", "client/loop.cc",           "matrix",  "cc",    False),
    ("the-contract-for-another", "clients/contract/attempt_base.cc", "faults", "go", False),  # no tlslab_adapter
]


def main() -> int:
    gate = Gate("harness_crossings")
    # `./run_all.sh --full` sets TLSLAB_FULL=1 for the whole run (every crossing whole, as asked): these
    # cases judge the digest, so they run without it (full-asked below sets it on purpose)
    os.environ.pop("TLSLAB_FULL", None)
    only = sys.argv[1:]
    for name, change, g, client, whole in CASES:
        if only and name not in only:
            continue
        try:
            got = after(change, g, client)
        except Exception as e:   # a case that crashes is a failure, not a stack trace
            gate.check(name, False, f"{type(e).__name__}: {e}")
            continue
        gate.check(name, got == whole, f"{g}:{client} after a change to {change or 'nothing'}: "
                                       f"{'whole' if got else 'sampled'}, expected {'whole' if whole else 'sampled'}")
    with tempfile.TemporaryDirectory() as folder:   # never recorded: whole, and it says why
        root = tree(Path(folder))
        why = crossings.whole_reason("matrix", "go", root) or ""
        gate.check("never-recorded", "no green whole run" in why, why)
        os.environ["TLSLAB_FULL"] = "1"
        crossings.record_green("matrix", "go", "a figure", root)
        gate.check("full-asked", crossings.whole_reason("matrix", "go", root) == "asked (--full)", "TLSLAB_FULL=1")
        del os.environ["TLSLAB_FULL"]
    draw(gate)
    return gate.finish()


def draw(gate: Gate) -> None:
    """Twelve clients under test: a tree draws DRAWN_PER_TREE of them, the same twice, never the
    reference; the others are skipped with a reason unless their inputs changed; twelve trees (one file
    changed each time) draw every client at least once."""
    os.environ.pop("TLSLAB_DRAW", None)
    with tempfile.TemporaryDirectory() as folder:
        root = tree(Path(folder))
        for i in range(9):
            (root / f"clients/c{i}/profile.toml").parent.mkdir(parents=True)
            (root / f"clients/c{i}/profile.toml").write_text(f"name = 'c{i}'\n")
        names = crossings.clients_under_test(root)
        first, again = crossings.drawn(root), crossings.drawn(root)
        gate.check("draw/size", len(names) == 12 and len(first) == crossings.DRAWN_PER_TREE,
                   f"{len(first)} of {len(names)} drawn")
        gate.check("draw/same-tree-same-draw", first == again, f"{first} then {again}")
        skipped = [c for c in names if crossings.not_drawn(c, root)]
        gate.check("draw/the-rest-skipped", sorted(skipped + first) == names and crossings.not_drawn("tlsnb", root) is None,
                   f"skipped {skipped}")
        left = skipped[0]
        crossings.record_green("hostile", left, "a figure", root)
        gate.check("draw/skipped-while-unchanged", not crossings.runs_in_tree("hostile", left, root), left)
        (root / "clients" / left / "hostile.toml").write_text("# changed\n")
        gate.check("draw/whole-once-changed", crossings.runs_in_tree("hostile", left, root), left)
        seen = set(first)
        for i in range(12):
            (root / "servers" / "other.py").write_text(f"# {i}\n")
            gate_module.tree_seed.cache_clear()
            seen |= set(crossings.drawn(root))
        gate.check("draw/every-client-comes-up", seen == set(names), f"never drawn: {sorted(set(names) - seen)}")
        os.environ["TLSLAB_DRAW"] = "all"
        gate.check("draw/all-asked", crossings.drawn(root) == names, "TLSLAB_DRAW=all")
        del os.environ["TLSLAB_DRAW"]


if __name__ == "__main__":
    sys.exit(main())
