"""Fast mutant builds: one mutated source recompiled, the rest of a program relinked.

The normal build's compile_commands.json says how every object was made. A mutant copies
one client source to a scratch folder, applies its edit, compiles that copy with the very
flags of the object it replaces, and links it with the build's other objects into a temp
program. Two programs can be made this way:

    tlsnb   main.o + every object of client/'s Release libraries, linked with OpenSSL
    units   every tlsnb_units test object + every object of their _san twins (ASan+UBSan),
            linked with GoogleTest and OpenSSL

A program's object folders are its own and its libraries' (mutants/CMakeLists.txt follows its links).

    from build import Builder, BuildError
"""
from __future__ import annotations

import json
import shlex
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

COMPILE_TIMEOUT_S = 180


class BuildError(Exception):
    """A mutant that does not compile or link: reported as a failure, never as a kill."""


@dataclass(frozen=True)
class Program:
    """How one program is linked: the object folders it takes, its link flags and libraries."""
    name: str
    object_dirs: tuple[str, ...]   # relative to the build tree: the program's own, then its libraries'
    link_flags: tuple[str, ...]
    libraries: tuple[str, ...]


@dataclass
class Compiled:
    """One entry of compile_commands.json: the argv, its folder, and the object it writes."""
    argv: list[str]
    directory: Path
    source: Path
    output: Path


class Builder:
    def __init__(self, build_dir: Path, programs: dict[str, Program]):
        self.build_dir = build_dir.resolve()
        self.programs = programs
        path = self.build_dir / "compile_commands.json"
        try:
            entries = json.loads(path.read_text())
        except (OSError, ValueError) as e:
            raise BuildError(f"{path}: {e} (configure with CMAKE_EXPORT_COMPILE_COMMANDS=ON and build)")
        self.entries = [self._entry(e) for e in entries]

    def _entry(self, e: dict) -> Compiled:
        argv = shlex.split(e["command"]) if "command" in e else list(e["arguments"])
        directory = Path(e["directory"])
        output = Path(argv[argv.index("-o") + 1])
        return Compiled(argv, directory, Path(e["file"]).resolve(), (directory / output).resolve())

    def _in_dir(self, entry: Compiled, rel_dir: str) -> bool:
        return (self.build_dir / rel_dir).resolve() in entry.output.parents

    def objects(self, program: str) -> list[Compiled]:
        """The program's objects, in compile_commands order; every one must exist."""
        prog = self.programs[program]
        if not prog.object_dirs:
            raise BuildError(f"{program}: no object folders given (--objects {program}=DIR,...)")
        found = [e for d in prog.object_dirs for e in self.entries if self._in_dir(e, d)]
        if not found:
            raise BuildError(f"{program}: no objects under {', '.join(prog.object_dirs)} in compile_commands.json")
        missing = [str(e.output) for e in found if not e.output.is_file()]
        if missing:
            raise BuildError(f"{program}: object not built: {missing[0]} (build the tree first)")
        # A mutant is built from today's source and the build's other objects: they must agree.
        stale = [e for e in found if e.source.stat().st_mtime > e.output.stat().st_mtime]
        if stale:
            raise BuildError(f"{program}: {stale[0].source} is newer than its object (build the tree first)")
        return found

    def entry_for(self, program: str, source: Path) -> Compiled:
        """The object of SOURCE in the program: in one of its object folders (client/main.cc in tlsnb.dir,
        every other client source in its library's)."""
        dirs = self.programs[program].object_dirs
        for d in dirs:
            for e in self.entries:
                if e.source == source.resolve() and self._in_dir(e, d):
                    return e
        raise BuildError(f"{program}: {source} is not compiled into {' or '.join(dirs)}")

    def compile_copy(self, entry: Compiled, mutated_source: Path, out_obj: Path) -> None:
        """Compiles MUTATED_SOURCE with ENTRY's flags. Its #include "x.h" finds what the original finds
        beside it through -iquote of the original's folder: no library need carry client/ as -I for it."""
        argv = list(entry.argv)
        argv[argv.index("-o") + 1] = str(out_obj)
        idx = [i for i, a in enumerate(argv) if Path(entry.directory, a).resolve() == entry.source]
        if len(idx) != 1:
            raise BuildError(f"{entry.source}: cannot find the source argument in its compile command")
        argv[idx[0]] = str(mutated_source)
        argv[1:1] = ["-iquote", str(entry.source.parent)]
        self._run(argv, entry.directory, f"compile {mutated_source.name}")

    def link(self, program: str, replace: dict[Path, Path], out: Path) -> None:
        """Links PROGRAM from the build's objects, each object in REPLACE swapped for its new one."""
        prog = self.programs[program]
        objects = [str(replace.get(e.output, e.output)) for e in self.objects(program)]
        cxx = self.objects(program)[0].argv[0]
        argv = [cxx, *prog.link_flags, *objects, "-o", str(out), *prog.libraries]
        self._run(argv, self.build_dir, f"link {program}")

    def make(self, program: str, source: Path, text: str, scratch: Path) -> tuple[Path, float]:
        """PROGRAM with SOURCE's text replaced by TEXT, built in SCRATCH: (path, seconds)."""
        start = time.monotonic()
        scratch.mkdir(parents=True, exist_ok=True)
        entry = self.entry_for(program, source)
        out_dir = scratch / program   # one folder a program: two programs of one mutant may be built at once
        out_dir.mkdir(exist_ok=True)
        copy = out_dir / source.name
        copy.write_text(text)
        obj = out_dir / f"{source.name}.o"
        self.compile_copy(entry, copy, obj)
        out = out_dir / program  # the same file name: the shims act on the program named tlsnb
        self.link(program, {entry.output: obj}, out)
        return out, time.monotonic() - start

    def _run(self, argv: list[str], cwd: Path, what: str) -> None:
        try:
            proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=COMPILE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise BuildError(f"{what}: no result within {COMPILE_TIMEOUT_S} s")
        if proc.returncode != 0:
            tail = " | ".join(proc.stderr.strip().splitlines()[-4:])
            raise BuildError(f"{what} failed ({proc.returncode}): {tail}")
