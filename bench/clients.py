#!/usr/bin/python3
"""The clients under test side by side (a measurement, not a gate: figures are printed, never asserted).

Every built client (clients/*/profile.toml) against two servers, nginx and servers/tls_server.py,
each server pinned to core 0 and each client to core 1 (taskset). Per client and server:

    full        --count 2000 --parallel 64 --requests 1            a full handshake and one GET each
    resumed     the same with --resume (clients whose profile lists --resume)
    keepalive   --count 256 --parallel 64 --requests 16            16 GETs on each connection

CPU per connection is the client's own (its JSON summary's cpu_ms_per_conn: getrusage user+sys of
the whole process divided by --count); peak RSS is the kernel's ru_maxrss of the client process,
read by /usr/bin/time for every client alike; wall is the summary's wall_ms. Each cell is the
median of --reps runs with the minimum and maximum; a run in which any attempt failed is printed
as failed and kept out of the median. The floor is measured in the same invocation: `openssl speed`
(public-key operations a full handshake cannot avoid) and `openssl s_time` (OpenSSL's own
blocking client, one connection at a time) against the same servers.

    /usr/bin/python3 -m bench.clients [--build build] [--certs build/certs/out] [--work build/work/bench]
        [--reps 3] [--clients tlsnb go ...] [--servers nginx tls_server] [--modes full resumed keepalive]

Writes clients.md, clients.png and clients.json into --work. Nothing outlives it: the servers
are stopped in a finally (also on Ctrl-C and SIGTERM), each client run is bounded by --timeout.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from harness import ROOT, SERVERS, PY, HarnessError, Server, bounded, run_client
from harness.clients import CLIENTS, ClientError, Profile, load_profile
from harness.runs import die_with_parent, end_group

SERVER_CORE, CLIENT_CORE = "0", "1"
MODES = ("full", "resumed", "keepalive")
SERVER_NAMES = ("nginx", "tls_server")
BODY = "0123456789abcdef"        # 16 bytes: the size tls_server.py answers by default
NAME = "hooks.test"
STIME = "openssl s_time"         # the row of OpenSSL's own client


# --- one measured run ---------------------------------------------------------------------------

@dataclass
class Sample:
    ok: bool
    cpu_ms_per_conn: float = 0.0      # the client's summary
    time_cpu_ms_per_conn: float = 0.0  # /usr/bin/time user+sys / count (cross-check)
    wall_ms: float = 0.0
    rss_kib: int = 0                   # /usr/bin/time %M (ru_maxrss)
    resumed: int = 0
    count: int = 0
    note: str = ""                     # why it failed
    groups: dict = field(default_factory=dict)  # nginx log: key-exchange group -> connections


@dataclass
class Cell:
    server: str
    client: str
    mode: str
    samples: list[Sample] = field(default_factory=list)
    skipped: str = ""                  # why this cell was not measured

    def good(self) -> list[Sample]:
        return [s for s in self.samples if s.ok]

    def failed(self) -> list[Sample]:
        return [s for s in self.samples if not s.ok]

    def stat(self, attr: str) -> Optional[tuple[float, float, float]]:
        values = [getattr(s, attr) for s in self.good()]
        return (statistics.median(values), min(values), max(values)) if values else None


def read_time_file(path: Path) -> Optional[tuple[float, float, int]]:
    """/usr/bin/time -f '%e %U %S %M' -o PATH: (elapsed s, user+sys s, maxrss KiB); None if absent."""
    try:
        lines = [l for l in path.read_text().splitlines() if re.match(r"^[\d.]+ [\d.]+ [\d.]+ \d+$", l)]
    except OSError:
        return None
    if not lines:
        return None
    e, u, s, m = lines[-1].split()
    return float(e), float(u) + float(s), int(m)


def timed(work: Path, tag: str) -> tuple[list[str], Path]:
    """The wrapper that pins a process to the client core and has /usr/bin/time record it."""
    path = work / "time" / f"{tag}.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    return ["taskset", "-c", CLIENT_CORE, "/usr/bin/time", "-o", str(path), "-f", "%e %U %S %M"], path


class NginxLog:
    """Reads the lines nginx appended to its access log since the last call: per connection (its
    first request) the key-exchange group and whether the session was reused."""

    def __init__(self, path: Path):
        self.path, self.offset = path, 0

    def skip(self) -> None:
        self.offset = self.path.stat().st_size if self.path.exists() else 0

    def since(self) -> tuple[dict, int]:
        groups: dict[str, int] = {}
        reused = 0
        if not self.path.exists():
            return groups, reused
        with self.path.open() as f:
            f.seek(self.offset)
            text = f.read()
            self.offset = f.tell()
        for line in text.splitlines():
            parts = line.split()
            if len(parts) != 5 or parts[3] != "1":     # one line per connection: its first request
                continue
            groups[f"{parts[0]} {parts[1]}"] = groups.get(f"{parts[0]} {parts[1]}", 0) + 1
            reused += parts[2] == "r"
        return groups, reused


def measure(profile: Profile, port: int, mode: str, args, work: Path, tag: str,
            log: Optional[NginxLog]) -> Sample:
    count, requests = (args.keepalive_count, 16) if mode == "keepalive" else (args.count, 1)
    flags = ["--cafile", Path(args.certs) / "ca.pem", "--name", NAME, "--count", count, "--parallel", 64,
             "--requests", requests, "--deadline-ms", 30000, *(["--resume"] if mode == "resumed" else []),
             f"127.0.0.1:{port}"]
    wrapper, tfile = timed(work, tag)
    if log:
        log.skip()
    run = run_client(profile.command, flags, timeout=args.timeout, wrapper=wrapper)
    t = read_time_file(tfile)
    s = run.summary
    sample = Sample(ok=False, count=count, resumed=sum(1 for a in run.attempts if a.get("resumed")))
    if log:
        sample.groups, _ = log.since()
    if t:
        sample.time_cpu_ms_per_conn = t[1] * 1000 / count
        sample.rss_kib = t[2]
    sample.cpu_ms_per_conn = float(s.get("cpu_ms_per_conn", 0.0))
    sample.wall_ms = float(s.get("wall_ms", run.wall_s * 1000))
    ok_attempts = sum(1 for a in run.attempts if a.get("stage") == "ok")
    short = [a for a in run.attempts if a.get("stage") == "ok" and a.get("requests_done", requests) != requests]
    if run.problem:
        sample.note = run.problem
    elif run.signal:
        sample.note = f"killed by signal {run.signal}"
    elif not s:
        sample.note = f"no summary line (exit {run.rc}): {run.stderr.strip()[-200:]}"
    elif run.rc != 0 or ok_attempts != count or s.get("ok") != count:
        sample.note = f"exit {run.rc}, {ok_attempts}/{count} ok, by_outcome {s.get('by_outcome')}"
    elif short:
        sample.note = f"{len(short)} attempts ok with fewer than {requests} requests"
    elif not t:
        sample.note = "no /usr/bin/time record"
    else:
        sample.ok = True
    if not sample.ok:
        sample.note += f"  [{run.command()}]"
    return sample


def startup_ms(profile: Profile, args, work: Path, tag: str) -> Optional[float]:
    """CPU of a process making one refused connection: the client's fixed cost (interpreter,
    runtime, trust store), which every per-connection figure carries once divided by --count."""
    wrapper, _ = timed(work, tag)
    run = run_client(profile.command, ["--cafile", Path(args.certs) / "ca.pem", "--name", NAME, "127.0.0.1:1"],
                     timeout=60, wrapper=wrapper)
    return float(run.summary["cpu_ms"]) if "cpu_ms" in run.summary else None


def s_time(port: int, reuse: bool, args, work: Path, tag: str) -> Sample:
    """OpenSSL's s_time: one connection at a time for --stime-seconds, each a GET (-www /, which
    also makes it read the TLS 1.3 ticket so -reuse resumes), verified against the lab's CA."""
    wrapper, tfile = timed(work, tag)
    argv = [*wrapper, "openssl", "s_time", "-connect", f"127.0.0.1:{port}", "-reuse" if reuse else "-new",
            "-www", "/", "-time", str(args.stime_seconds), "-CAfile", str(Path(args.certs) / "ca.pem"),
            "-verify", "1"]
    rc, out, err, hung = bounded(argv, timeout=args.stime_seconds * 3 + 30)
    t = read_time_file(tfile)
    m = re.search(r"^(\d+) connections in ([\d.]+) real seconds", out, re.M)
    marks = "".join(re.findall(r"^[*r]+$", out, re.M))
    sample = Sample(ok=False)
    if hung or rc != 0 or not m or not t or int(m.group(1)) == 0:
        sample.note = f"s_time exit {rc}{' (hung)' if hung else ''}: {(err or out).strip()[-200:]}  [{' '.join(argv)}]"
        return sample
    n = int(m.group(1))
    sample.ok, sample.count = True, n
    sample.cpu_ms_per_conn = sample.time_cpu_ms_per_conn = t[1] * 1000 / n
    sample.wall_ms = t[0] * 1000       # the whole process; s_time runs for --stime-seconds
    sample.rss_kib = t[2]
    sample.resumed = marks.count("r")  # s_time prints r for a reused session, * for a new one
    return sample


def openssl_speed(work: Path) -> dict:
    """ops/s of X25519 and P-256 ECDH derive and P-256 sign/verify on the client core (per CPU user
    second, speed's default). ecdhp256: the group GnuTLS puts first (seen in nginx's log)."""
    rc, out, err, hung = bounded(["taskset", "-c", CLIENT_CORE, "openssl", "speed", "-seconds", "2", "ecdhx25519",
                                  "ecdsap256", "ecdhp256"], timeout=180)
    (work / "openssl-speed.txt").write_text(out + err)
    x = re.search(r"ecdh \(X25519\)\s+[\d.]+s\s+([\d.]+)", out)
    e = re.search(r"ecdsa \(nistp256\)\s+[\d.]+s\s+[\d.]+s\s+([\d.]+)\s+([\d.]+)", out)
    p = re.search(r"ecdh \(nistp256\)\s+[\d.]+s\s+([\d.]+)", out)
    if not (x and e and p):
        raise HarnessError(f"openssl speed: cannot read its table (exit {rc}): {(out + err)[-300:]}")
    return {"x25519_ops": float(x.group(1)), "p256_ecdh_ops": float(p.group(1)), "p256_sign_ops": float(e.group(1)),
            "p256_verify_ops": float(e.group(2))}


# --- servers -------------------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


NGINX_CONF = """# written by bench/clients.py
worker_processes 1;
master_process off;
daemon off;
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
events {{ worker_connections 4096; }}
http {{
  client_body_temp_path {dir}/tmp-body;
  proxy_temp_path {dir}/tmp-proxy;
  fastcgi_temp_path {dir}/tmp-fastcgi;
  uwsgi_temp_path {dir}/tmp-uwsgi;
  scgi_temp_path {dir}/tmp-scgi;
  # one line per request: version, key-exchange group, r when resumed, the connection's request number
  log_format tls '$ssl_protocol $ssl_curve $ssl_session_reused $connection_requests $status';
  access_log {dir}/access.log tls;
  keepalive_requests 1000000;
  keepalive_timeout 60s;
  server {{
    listen 127.0.0.1:{port} ssl backlog=1024;
    ssl_certificate {certs}/leaf-ecdsa.pem;
    ssl_certificate_key {certs}/leaf-ecdsa.key;
    ssl_protocols TLSv1.2 TLSv1.3;      # nginx 1.22's default stops at TLS 1.2
    ssl_session_tickets on;
    location / {{
      default_type text/plain;
      return 200 "{body}";              # a fixed body: nginx sends its Content-Length
    }}
  }}
}}
"""


class Nginx:
    """nginx as a child: one process (master_process off), daemon off, pinned to the server core."""

    def __init__(self, certs: Path, work: Path):
        self.dir = work / "nginx"
        self.dir.mkdir(parents=True, exist_ok=True)
        self.proc: Optional[subprocess.Popen] = None
        last = ""
        for _ in range(5):                 # the port picked may be taken before nginx binds it
            self.port = free_port()
            conf = self.dir / "nginx.conf"
            conf.write_text(NGINX_CONF.format(dir=self.dir, port=self.port, certs=certs.resolve(), body=BODY))
            for name in ("access.log", "error.log"):
                (self.dir / name).unlink(missing_ok=True)
            self.proc = subprocess.Popen(["taskset", "-c", SERVER_CORE, shutil.which("nginx") or "/usr/sbin/nginx",
                                          "-p", str(self.dir), "-e", str(self.dir / "error.log"), "-c", str(conf)],
                                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                         start_new_session=True, preexec_fn=die_with_parent)
            end = time.monotonic() + 10
            while time.monotonic() < end and self.proc.poll() is None:
                try:
                    socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                    return
                except OSError:
                    time.sleep(0.05)
            self.stop()
            last = (self.dir / "error.log").read_text()[-300:] if (self.dir / "error.log").exists() else ""
        raise HarnessError(f"nginx did not listen: {last.strip()}")

    @property
    def log(self) -> Path:
        return self.dir / "access.log"

    def stop(self) -> None:
        if self.proc is None:
            return
        end_group(self.proc)               # TERM: nginx's fast shutdown
        self.proc = None


def start_server(name: str, certs: Path, work: Path):
    if name == "nginx":
        return Nginx(certs, work)
    return Server(["taskset", "-c", SERVER_CORE, PY, SERVERS / "tls_server.py", "--chain", certs / "leaf-ecdsa.pem",
                   "--key", certs / "leaf-ecdsa.key", "--workers", "1", "--body-size", len(BODY)])


# --- output --------------------------------------------------------------------------------------

GROUPS = {"X25519": "X25519", "prime256v1": "P-256"}   # nginx's $ssl_curve -> the floor's key exchange


def floors(speed: dict) -> dict:
    """ms of public-key work a client cannot avoid, per connection, by mode and key-exchange group
    (README.md): a full handshake is 2 ECDH operations (the key share's generation and the shared
    secret) and 2 ECDSA P-256 verifies (CertificateVerify, and the CA's signature on the leaf); a
    resumed one (psk_dhe_ke) the 2 ECDH operations; a keep-alive connection one full handshake."""
    v = 1000.0 / speed["p256_verify_ops"]
    out = {"verify_ms": v, "x25519_ms": 1000.0 / speed["x25519_ops"],
           "p256_ecdh_ms": 1000.0 / speed["p256_ecdh_ops"]}
    for group, ecdh in (("X25519", out["x25519_ms"]), ("P-256", out["p256_ecdh_ms"])):
        out[group] = {"full": 2 * ecdh + 2 * v, "resumed": 2 * ecdh, "keepalive": 2 * ecdh + 2 * v}
    out.update(out["X25519"])         # the default: what every OpenSSL and Go client negotiates here
    return out


def client_groups(cells: dict) -> dict[str, str]:
    """Each client's key-exchange group, as nginx logged it (the most frequent); X25519 when unseen.
    tls_server.py is OpenSSL too and takes the client's first key share as nginx does."""
    seen: dict[str, dict[str, int]] = {}
    for c in cells.values():
        for s in c.samples:
            for g, n in s.groups.items():
                name = GROUPS.get(g.split()[-1], g.split()[-1])
                seen.setdefault(c.client, {}).setdefault(name, 0)
                seen[c.client][name] += n
    return {client: max(g, key=g.get) for client, g in seen.items()}


def cell_floor(cell: Cell, floor: dict, group: str = "X25519") -> float:
    """The floor of a cell for the client's group: for a resumed run, the mix of its resumed and full
    handshakes (the first connections of a run have no session to offer yet)."""
    f = floor.get(group, floor["X25519"])
    if cell.mode != "resumed" or not cell.good():
        return f[cell.mode]
    share = statistics.median([s.resumed / s.count for s in cell.good()])
    return share * f["resumed"] + (1 - share) * f["full"]


def fmt_stat(st: Optional[tuple], f: str = "{:.3f}") -> str:
    if st is None:
        return "-"
    return f"{f.format(st[0])} ({f.format(st[1])}-{f.format(st[2])})"


def cell_row(cell: Cell, floor: dict, group: str = "X25519") -> list[str]:
    n, good = len(cell.samples), len(cell.good())
    if cell.skipped:
        return [cell.server, cell.client, cell.mode, cell.skipped, "", "", "", "", "", ""]
    if n == 0:
        return [cell.server, cell.client, cell.mode, "not measured (see above)", "", "", "", "", "", ""]
    if good == 0:
        return [cell.server, cell.client, cell.mode, f"FAILED ({n} of {n} runs)", "", "", "", "", "", ""]
    cpu = cell.stat("cpu_ms_per_conn")
    ratio = f"{cpu[0] / cell_floor(cell, floor, group):.1f}x" + ("" if group == "X25519" else f" ({group})")
    rss = cell.stat("rss_kib")
    runs = f"{good}/{n}" + (f" ({n - good} FAILED)" if good < n else "")
    resumed = statistics.median([s.resumed for s in cell.good()])
    counts = {s.count for s in cell.good()}
    if len(counts) == 1:
        res = f"{resumed:.0f}/{counts.pop()}" if cell.mode == "resumed" or resumed else "-"
    elif cell.mode != "resumed" and not resumed:
        res = "-"
    else:                        # s_time: as many connections as fit in its time
        res = f"{100 * statistics.median([s.resumed / s.count for s in cell.good()]):.1f}%"
    if cell.mode == "resumed" and resumed == 0:
        res += " NOT RESUMED"
    wall = fmt_stat(cell.stat("wall_ms"), "{:.0f}")
    if cell.client == STIME:     # one connection at a time for a fixed time: its rate, not a duration
        rates = [s.count / (s.wall_ms / 1000) for s in cell.good()]
        wall = f"{statistics.median(rates):.0f} conn/s, serial"
    return [cell.server, cell.client, cell.mode, fmt_stat(cpu), ratio, fmt_stat(cell.stat("time_cpu_ms_per_conn")),
            wall, f"{rss[0] / 1024:.1f}", res, runs]


HEADER = ["server", "client", "mode", "CPU ms/conn median (min-max)", "x floor", "time(1) CPU ms/conn",
          "wall ms", "peak RSS MiB", "resumed", "runs ok"]


def markdown_table(rows: list[list[str]], header: list[str]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def plot(cells: dict, clients: list[str], servers: list[str], floor: dict, path: Path,
         footnote: str = "", groups: Optional[dict] = None) -> Optional[str]:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.lines import Line2D
        from matplotlib.patches import Patch
    except ImportError as e:
        return f"no plot: {e}"
    colours = {"full": "#4C72B0", "resumed": "#55A868", "keepalive": "#C44E52"}
    labels = {"full": "full handshake + 1 GET", "resumed": "--resume + 1 GET",
              "keepalive": "1 full handshake + 16 GETs (keep-alive)"}
    modes = [m for m in MODES if any(k[2] == m for k in cells)]
    fig, axes = plt.subplots(len(servers), 1, figsize=(max(10, 1.8 * len(clients) + 2), 0.9 + 4.8 * len(servers)),
                             squeeze=False)
    width = 0.8 / max(1, len(modes))
    top = max([c.stat("cpu_ms_per_conn")[2] for c in cells.values() if c.good()] + [floor["full"]])
    for ax, server in zip(axes[:, 0], servers):
        for i, client in enumerate(clients):
            group = (groups or {}).get(client, "X25519")
            if group != "X25519":   # this client's own floor: short lines across its bars
                for key, ls in (("full", "-"), ("resumed", "--")):
                    ax.hlines(floor[group][key], i - 0.45, i + 0.45, colors="#8E44AD", lw=1.6, linestyles=ls)
            for j, mode in enumerate(modes):
                x = i + (j - (len(modes) - 1) / 2) * width
                cell = cells.get((server, client, mode))
                st = cell.stat("cpu_ms_per_conn") if cell else None
                if st is None:
                    why = "n/a" if (cell is None or cell.skipped) else "FAILED"
                    ax.text(x, floor["full"] + top * 0.03, why, ha="center", va="bottom", fontsize=8, color="#444")
                    continue
                ax.bar(x, st[0], width, color=colours[mode],
                       yerr=[[st[0] - st[1]], [st[2] - st[0]]], capsize=2, error_kw={"elinewidth": 0.8})
                note = f"{st[0]:.2f}\n{st[0] / cell_floor(cell, floor, group):.1f}x"
                if len(cell.good()) < len(cell.samples):
                    note += f"\n{len(cell.samples) - len(cell.good())} failed"
                ax.text(x, st[2] + top * 0.01, note, ha="center", va="bottom", fontsize=7, linespacing=0.95)
        ax.axhline(floor["full"], color="black", lw=1.2)
        ax.axhline(floor["resumed"], color="black", lw=1.0, ls="--")
        ax.set_xticks(range(len(clients)))
        ax.set_xticklabels(clients, fontsize=10)
        ax.set_xlim(-0.6, len(clients) - 0.4)
        ax.set_ylabel("client CPU ms per connection (user+sys)")
        ax.set_ylim(0, top * 1.16)
        ax.set_title(f"server: {server} (core {SERVER_CORE}); clients on core {CLIENT_CORE}; "
                     f"bar = median of runs, whisker = min-max, label = ms and ratio to the mode's floor", fontsize=10)
        ax.grid(axis="y", alpha=0.3)
    handles = [Patch(color=colours[m], label=labels[m]) for m in modes] + [
        Line2D([], [], color="black", lw=1.2,
               label=f"floor, full handshake and keep-alive: 2 X25519 + 2 ECDSA P-256 verifies = {floor['full']:.3f} ms"),
        Line2D([], [], color="black", lw=1.0, ls="--",
               label=f"floor, resumed (psk_dhe_ke): 2 X25519 = {floor['resumed']:.3f} ms")]
    p256 = sorted(c for c, g in (groups or {}).items() if g == "P-256" and c in clients)
    if p256:
        handles.append(Line2D([], [], color="#8E44AD", lw=1.6, label=(
            f"floor with a P-256 key exchange ({', '.join(p256)}): full {floor['P-256']['full']:.3f} ms, "
            f"resumed (dashed) {floor['P-256']['resumed']:.3f} ms")))
    fig.legend(handles=handles, loc="upper center", ncol=2, fontsize=9, frameon=False)
    if footnote:
        fig.text(0.01, 0.005, footnote, fontsize=8, color="#444", ha="left", va="bottom")
    fig.tight_layout(rect=(0, 0.02 if footnote else 0, 1, 1 - 0.75 / fig.get_figheight()))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return None


# --- main ----------------------------------------------------------------------------------------

def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default=str(ROOT / "build"), help="the CMake build tree (clients' {build})")
    p.add_argument("--certs", default=None, help="certificate folder (default BUILD/certs/out)")
    p.add_argument("--work", default=None, help="output folder (default BUILD/work/bench)")
    p.add_argument("--reps", type=int, default=3, help="runs per cell (default 3)")
    p.add_argument("--clients", nargs="*", default=[], help="only these clients (default: every profile)")
    p.add_argument("--servers", nargs="*", default=list(SERVER_NAMES), choices=SERVER_NAMES)
    p.add_argument("--modes", nargs="*", default=list(MODES), choices=MODES)
    p.add_argument("--count", type=int, default=2000, help="connections per full/resumed run (default 2000)")
    p.add_argument("--keepalive-count", type=int, default=256,
                   help="connections per keep-alive run, 16 requests each (default 256)")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds per client run before it is killed")
    p.add_argument("--stime-seconds", type=int, default=10, help="openssl s_time -time (default 10; 0: skip)")
    p.add_argument("--render", metavar="JSON", help="measure nothing: print and draw an earlier clients.json")
    a = p.parse_args()
    a.certs = a.certs or str(Path(a.build) / "certs" / "out")
    a.work = a.work or str(Path(a.build) / "work" / "bench")
    if not (Path(a.certs) / "leaf-ecdsa.pem").is_file():
        p.error(f"no certificates at {a.certs} (build the 'certs' target)")
    if a.reps < 1 or a.count < 1 or a.keepalive_count < 1:
        p.error("--reps, --count and --keepalive-count must be at least 1")
    return a


def machine_state() -> str:
    load = Path("/proc/loadavg").read_text().split()[:3]
    return f"load average {' '.join(load)} on {os.cpu_count()} CPUs"


def main() -> int:
    args = parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    if args.render:
        render(json.loads(Path(args.render).read_text()), work)
        return 0
    certs = Path(args.certs)
    build = Path(args.build)
    for tool in ("taskset", "/usr/bin/time", "openssl"):
        if not shutil.which(tool):
            print(f"clients.py: {tool} is not installed", file=sys.stderr)
            return 2
    if "nginx" in args.servers and not shutil.which("nginx") and not Path("/usr/sbin/nginx").exists():
        print("clients.py: nginx is not installed (apt-get install nginx-light): nginx skipped", file=sys.stderr)
        args.servers = [s for s in args.servers if s != "nginx"]

    # SIGTERM (a killed cmake) runs the finally blocks too, as Ctrl-C does
    def on_term(*_):
        raise KeyboardInterrupt()
    signal.signal(signal.SIGTERM, on_term)

    profiles: list[Profile] = []
    broken: list[str] = []
    for path in sorted(CLIENTS.glob("*/profile.toml")):   # a profile that does not load costs only its client
        try:
            profiles.append(load_profile(path, build))
        except ClientError as e:
            broken.append(f"{e}: skipped")
    profiles.sort(key=lambda p: (not p.reference, p.name))
    if args.clients:
        unknown = set(args.clients) - {p.name for p in profiles}
        if unknown:
            print(f"clients.py: unknown client(s) {sorted(unknown)}; known: {[p.name for p in profiles]}",
                  file=sys.stderr)
            return 2
        profiles = [p for p in profiles if p.name in args.clients]
    usable: list[Profile] = []
    skipped: list[str] = list(broken)
    skipped_names: list[str] = [line.split(":")[0].removeprefix("client ").strip() for line in broken]
    for line in broken:
        print(line, flush=True)
    for p in profiles:
        try:
            p.check_installed()
            usable.append(p)
        except ClientError as e:
            line = f"{e}: skipped"
            skipped_names.append(p.name)
            print(line, flush=True)
            skipped.append(line)

    state_before = machine_state()
    print(f"# clients side by side: {state_before}; {platform.node()} {platform.release()}", flush=True)
    speed = openssl_speed(work)
    floor = floors(speed)
    print(f"openssl speed on core {CLIENT_CORE}: X25519 {speed['x25519_ops']:.0f} ops/s ({floor['x25519_ms']:.4f} ms), "
          f"ECDSA P-256 verify {speed['p256_verify_ops']:.0f}/s ({floor['verify_ms']:.4f} ms)", flush=True)
    print(f"  P-256 ECDH {speed['p256_ecdh_ops']:.0f} ops/s ({floor['p256_ecdh_ms']:.4f} ms)")
    print(f"floor per connection: full {floor['full']:.3f} ms (2 X25519 + 2 P-256 verifies), "
          f"resumed {floor['resumed']:.3f} ms (2 X25519); with a P-256 key exchange {floor['P-256']['full']:.3f} "
          f"and {floor['P-256']['resumed']:.3f} ms", flush=True)

    cells: dict[tuple, Cell] = {}
    startups: dict[str, list[float]] = {}
    for server_name in args.servers:
        server = None
        try:
            server = start_server(server_name, certs, work)
            port = server.port
            log = NginxLog(server.log) if server_name == "nginx" else None
            print(f"\n## {server_name} on 127.0.0.1:{port}, core {SERVER_CORE}", flush=True)
            for p in usable:
                for mode in args.modes:
                    cell = cells.setdefault((server_name, p.name, mode), Cell(server_name, p.name, mode))
                    if mode == "resumed" and not p.has("--resume"):
                        cell.skipped = "n/a (profile has no --resume)"
            for rep in range(args.reps):      # reps outermost: a change in the machine's load spreads over all
                for p in usable:
                    if server_name == args.servers[0]:
                        v = startup_ms(p, args, work, f"startup-{p.name}-{rep}")
                        if v is not None:
                            startups.setdefault(p.name, []).append(v)
                    for mode in args.modes:
                        cell = cells[(server_name, p.name, mode)]
                        if cell.skipped:
                            continue
                        s = measure(p, port, mode, args, work, f"{server_name}-{p.name}-{mode}-{rep}", log)
                        cell.samples.append(s)
                        print(f"  rep {rep + 1}/{args.reps} {p.name:8} {mode:9} "
                              + (f"cpu {s.cpu_ms_per_conn:.3f} ms/conn, time(1) {s.time_cpu_ms_per_conn:.3f}, "
                                 f"wall {s.wall_ms:.0f} ms, rss {s.rss_kib} KiB, resumed {s.resumed}"
                                 f"{', ' + str(s.groups) if s.groups else ''}"
                                 if s.ok else f"FAILED: {s.note}"), flush=True)
                if args.stime_seconds > 0:     # OpenSSL's own client, in the same rep
                    for mode, reuse in (("full", False), ("resumed", True)):
                        if mode not in args.modes:
                            continue
                        cell = cells.setdefault((server_name, STIME, mode), Cell(server_name, STIME, mode))
                        if log:
                            log.skip()
                        s = s_time(port, reuse, args, work, f"{server_name}-s_time-{mode}-{rep}")
                        if log:
                            s.groups, _ = log.since()
                        cell.samples.append(s)
                        print(f"  rep {rep + 1}/{args.reps} s_time {'-reuse' if reuse else '-new':9} " +
                              (f"{s.count} connections, {s.count / (s.wall_ms / 1000):.0f}/s, "
                               f"cpu {s.cpu_ms_per_conn:.3f} ms/conn, rss {s.rss_kib} KiB, resumed {s.resumed}"
                               if s.ok else f"FAILED: {s.note}"), flush=True)
            if args.stime_seconds > 0 and "keepalive" in args.modes:
                cells[(server_name, STIME, "keepalive")] = Cell(server_name, STIME, "keepalive",
                                                                skipped="n/a (s_time: one GET per connection)")
        except HarnessError as e:
            print(f"clients.py: server {server_name}: {e}", file=sys.stderr)
        finally:
            if server is not None:
                server.stop()

    speed_after = openssl_speed(work)       # the floor again: the load may have changed
    for k in speed:
        speed[k] = max(speed[k], speed_after[k])   # the faster of the two: a floor is a lower bound
    floor = floors(speed)
    state_after = machine_state()

    data = {"speed": speed, "floor": floor, "state_before": state_before, "state_after": state_after,
            "machine": f"{platform.node()}, Linux {platform.release()}, {os.cpu_count()} CPUs",
            "args": {k: getattr(args, k) for k in ("count", "keepalive_count", "reps", "stime_seconds", "timeout")},
            "servers": args.servers, "modes": args.modes,
            "clients": [p.name for p in usable] + ([STIME] if args.stime_seconds > 0 else []),
            "skipped": skipped, "skipped_names": skipped_names, "startup_ms": startups,
            "cells": [{"server": c.server, "client": c.client, "mode": c.mode, "skipped": c.skipped,
                       "samples": [s.__dict__ for s in c.samples]} for c in cells.values()]}
    (work / "clients.json").write_text(json.dumps(data, indent=1))
    render(data, work)
    print(f"wrote {work / 'clients.json'} (--render it to redraw)")
    return 0


def render(data: dict, work: Path) -> None:
    """The table (stdout), clients.md and clients.png from the figures of one invocation."""
    cells = {(c["server"], c["client"], c["mode"]): Cell(c["server"], c["client"], c["mode"],
                                                         [Sample(**s) for s in c["samples"]], c["skipped"])
             for c in data["cells"]}
    floor, speed, a = data["floor"], data["speed"], data["args"]
    servers, modes, clients = data["servers"], data["modes"], data["clients"]
    groups_of = client_groups(cells)
    rows = [cell_row(cells[(s, c, m)], floor, groups_of.get(c, "X25519"))
            for s in servers for c in clients for m in modes if (s, c, m) in cells]
    table = markdown_table(rows, HEADER)
    startup_rows = [[c, fmt_stat((statistics.median(v), min(v), max(v)), "{:.1f}")]
                    for c, v in data["startup_ms"].items()]
    failures = [f"- {c.server} {c.client} {c.mode}: {s.note}" for c in cells.values() for s in c.failed()]
    groups: dict[str, dict] = {}
    for c in cells.values():
        for s in c.samples:
            for g, n in s.groups.items():
                groups.setdefault(c.client, {}).setdefault(g, 0)
                groups[c.client][g] += n
    floor_line = (f"floor (openssl speed on core {CLIENT_CORE}, the faster of a run before and one after, per CPU "
                  f"user second): X25519 {speed['x25519_ops']:.0f} ops/s = {floor['x25519_ms']:.4f} ms, ECDSA P-256 "
                  f"verify {speed['p256_verify_ops']:.0f}/s = {floor['verify_ms']:.4f} ms (sign "
                  f"{speed['p256_sign_ops']:.0f}/s). Full handshake: 2 X25519 + 2 verifies = {floor['full']:.3f} ms; "
                  f"resumed: 2 X25519 = {floor['resumed']:.3f} ms (x floor of a resumed run is against the mix of "
                  f"its resumed and full handshakes); keep-alive: one full handshake per connection = "
                  f"{floor['full']:.3f} ms. With a P-256 key exchange (P-256 ECDH {speed['p256_ecdh_ops']:.0f} ops/s = "
                  f"{floor['p256_ecdh_ms']:.4f} ms): full {floor['P-256']['full']:.3f} ms, resumed "
                  f"{floor['P-256']['resumed']:.3f} ms; a client's group is the one nginx logged for it "
                  f"({', '.join(f'{c} {g}' for c, g in groups_of.items()) or 'nginx not run: X25519 assumed'})")
    print("\n" + table)
    print("\n" + floor_line)
    print("\nstartup CPU ms (one refused connection; in every figure once, divided by the count):")
    print(markdown_table(startup_rows, ["client", "cpu_ms median (min-max)"]))
    if groups:
        print("\nnginx's log, connections by protocol and key-exchange group:")
        for c, g in groups.items():
            print(f"  {c}: {g}")
    if failures:
        print("\nfailed runs (not in any median):\n" + "\n".join(failures))
    for line in data["skipped"]:
        print(line)
    print(f"\nmachine: {data['machine']}; before: {data['state_before']}; after: {data['state_after']}")

    png = work / "clients.png"
    footnote = (f"{data['state_before']} (before), {data['state_after'].split(' on ')[0]} (after). " +
                (f"Not measured: {', '.join(data['skipped_names'])} (not built)." if data["skipped_names"] else ""))
    problem = plot(cells, clients, servers, floor, png, footnote, groups_of)
    md = work / "clients.md"
    md.write_text("\n".join([
        "# Clients side by side (bench/clients.py)", "",
        f"Machine: {data['machine']}; before: {data['state_before']}; after: {data['state_after']}. "
        f"Servers on core {SERVER_CORE}, clients on core {CLIENT_CORE}.",
        f"Runs: full and resumed --count {a['count']} --parallel 64 --requests 1; keep-alive --count "
        f"{a['keepalive_count']} --parallel 64 --requests 16; {a['reps']} runs per cell; --deadline-ms 30000.", "",
        floor_line + ".", "",
        table, "",
        "CPU is the client's summary cpu_ms_per_conn; `time(1)` is /usr/bin/time's user+sys over the count "
        "(the same process, measured from outside); peak RSS is /usr/bin/time's %M (ru_maxrss). "
        f"`{STIME}` runs one connection at a time for {a['stime_seconds']} s, -www / (one GET), -CAfile, "
        "its CPU and RSS from /usr/bin/time.", "",
        "## Startup CPU (one refused connection)", "", markdown_table(startup_rows, ["client", "cpu_ms"]), "",
        "## nginx's log: connections by protocol and key-exchange group", "",
        *[f"- {c}: {g}" for c, g in groups.items()], "",
        "## Failed runs (not in any median)", "", *(failures or ["none"]), "",
        "## Skipped", "", *(data["skipped"] or ["none"]), "",
    ]))
    print(f"\nwrote {md}, {png if not problem else problem}")


if __name__ == "__main__":
    try:
        raise SystemExit(main())
    except KeyboardInterrupt:            # the servers were stopped by the finally blocks on the way out
        print("\nclients.py: interrupted", file=sys.stderr)
        raise SystemExit(130)
