"""CTest's tests, the one list of gates: every test of a configured build with its command, labels,
cores, environment and timeout, as `ctest --show-only=json-v1` gives them (lab_gate.py runs them by
label, mutants/ runs a row of them against a mutant, the lists' unit holds every copy to them)."""
from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_TIMEOUT = 1500.0   # CTest's own default for a test without TIMEOUT


class CTestError(Exception):
    """One line: why the tests of a build could not be listed."""


@dataclass
class Test:
    name: str
    labels: list[str]
    processors: int = 1
    command: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    timeout: float = DEFAULT_TIMEOUT
    cwd: str = ""


def ctest_tests(build: Path) -> list[Test]:
    """Every CTest test of BUILD. CTestError when the tree is not configured or has no test."""
    try:
        out = subprocess.run(["ctest", "--test-dir", str(build), "--show-only=json-v1"], capture_output=True,
                             text=True, check=True, timeout=120).stdout
    except (OSError, subprocess.SubprocessError) as e:
        raise CTestError(f"ctest cannot list the tests of {build} ({e}): build it first (./run_all.sh --setup-only)")
    tests = []
    for t in json.loads(out).get("tests", []):
        props = {p["name"]: p["value"] for p in t.get("properties", [])}
        tests.append(Test(t["name"], list(props.get("LABELS", [])), int(props.get("PROCESSORS", 1)),
                          list(t.get("command", [])), dict(item.split("=", 1) for item in props.get("ENVIRONMENT", [])),
                          float(props.get("TIMEOUT", DEFAULT_TIMEOUT)), props.get("WORKING_DIRECTORY", "")))
    if not tests:
        raise CTestError(f"{build} has no CTest tests: configure and build it first (./run_all.sh --setup-only)")
    return tests
