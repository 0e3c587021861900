#!/usr/bin/python3
"""Clients the lab cannot use, or that break the contract (label clients): one line naming the
client and the problem, a hang killed and counted, nothing left running.

Each case writes a profile into a scratch folder and runs the matrix gate on it, one row, the
lab's server only: an unknown client, a profile without `command`, a client that is not
installed, a heap_env entry without its value and reason, a client that prints what is not JSON,
one that hangs (killed at --cell-timeout), one that exits 89 where nothing records a skip; and the
control, the reference through its own profile, which passes.

    /usr/bin/python3 -m clients.tests.test_bad_clients --tlsnb build/client/tlsnb --certs build/certs/out
"""
import subprocess
import sys
import time
from pathlib import Path

from harness import ROOT, Gate, gate_args

ROW = "names-wrong-host"
HANG = "sleep 4242"   # the hanging client's child; none may outlive the gate
CASES = ("unknown", "missing-command", "not-installed", "heap-env-unexplained", "garbage", "hangs", "exit89")


def profile(folder: Path, name: str, body: str) -> Path:
    room = folder / name
    room.mkdir(parents=True, exist_ok=True)
    (room / "profile.toml").write_text(f'name = "{name}"\nlibrary = "a test double"\n{body}')
    return room / "profile.toml"


def matrix(ns, client: str, *extra: str) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-m", "matrix.run_matrix", "--tlsnb", ns.tlsnb, "--certs", ns.certs,
            "--work", ns.work, "--client", client, "--no-interop", "--cell-timeout", "2", *extra, ROW]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=ROOT)


def main() -> int:
    ns = gate_args(__doc__.splitlines()[0])
    if ns.list:
        print("\n".join([*CASES, "nothing-left-running", "control"]))
        return 0
    scratch = Path(ns.work) / "bad-clients"
    shell = 'flags = []\nshim_sees_io = true\ncommand = ["/bin/sh", "-c", "{script}", "client"]\n'
    cases = {
        "unknown": ("no-such-client", None),
        "missing-command": (profile(scratch, "nocommand", 'flags = []\nshim_sees_io = true\n'), None),
        "not-installed": (profile(scratch, "absent", 'flags = []\nshim_sees_io = true\n'
                                  'command = ["/nonexistent/client"]\nrequires = ["/nonexistent/client"]\n'), None),
        "heap-env-unexplained": (profile(scratch, "bareenv", shell.format(script="exit 1") +
                                         '[heap_env]\nPYTHONMALLOC = "malloc"\n'), None),
        "garbage": (profile(scratch, "garbage", shell.format(script="echo {not json; exit 1")), None),
        "hangs": (profile(scratch, "hangs", shell.format(script=f"{HANG}")), None),
        "exit89": (profile(scratch, "cannot", shell.format(script="echo cannot do it >&2; exit 89")), None),
    }
    assert tuple(cases) == CASES
    gate = Gate("bad_clients")
    expect = {  # case -> (exit, words the output must hold)
        "unknown": (2, "'no-such-client': unknown"),
        "missing-command": (2, "client nocommand: "),
        "not-installed": (2, "client absent: not installed: /nonexistent/client"),
        "heap-env-unexplained": (2, "heap_env 'PYTHONMALLOC' must be NAME = { value"),
        "garbage": (1, "garbage: stdout line 1 is not JSON"),
        "hangs": (1, "hangs: still running after 2 s (killed)"),
        "exit89": (1, "expected handshake/X509_V_ERR_HOSTNAME_MISMATCH, got skip (cannot do it)"),
    }
    for case, (client, _) in cases.items():
        if ns.only and case not in ns.only:
            continue
        start = time.monotonic()
        r = matrix(ns, str(client))
        want_rc, words = expect[case]
        text = r.stdout + r.stderr
        one_line = want_rc != 2 or len(r.stderr.strip().splitlines()) == 1
        gate.check(case, r.returncode == want_rc and words in text and one_line,
                   f"exit {r.returncode} (expected {want_rc}), {time.monotonic() - start:.1f} s: "
                   f"{(r.stderr.strip() or r.stdout.strip())[-300:]!r}")
    left = subprocess.run(["pgrep", "-f", HANG], capture_output=True, text=True).stdout.split()
    gate.check("nothing-left-running", not left, f"still running: {left}")
    if not ns.only or "control" in ns.only:
        r = matrix(ns, "tlsnb", "--build-dir", str(Path(ns.tlsnb).resolve().parent.parent))
        gate.check("control", r.returncode == 0, (r.stdout.strip().splitlines() or [""])[-1])
    return gate.finish()


if __name__ == "__main__":
    sys.exit(main())
