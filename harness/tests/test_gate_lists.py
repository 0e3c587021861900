"""One list of gates: CTest's labels, and every copy of them held to it (label unit).

CTest's labels (`ctest --show-only`) are the list: harness/lab_gate.py runs them, the CI workflow
takes its label and client matrices from lab_gate.py, and this test fails when a copy disagrees:
README.md's label table, clients/cross.py's crossed gates, and every command of every job of the
workflows in .github/workflows/ (parsed as YAML: each `./run_all.sh` and `python3 -m harness.lab_gate`
flag one the script takes, each --label a label, each --tests a pattern some test matches, each
script a file of the tree, the operator shards 1..N with TLSLAB_SHARD K/N).

    /usr/bin/python3 -m harness.tests.test_gate_lists --build-dir build    # from the repository root
"""
from __future__ import annotations

import argparse
import re
import shlex
import sys
from pathlib import Path

import yaml

from harness.gate import Gate
from harness.lab_gate import ROOT, clients_under_test, ctest_tests, labels_of, parser as lab_gate_parser

MATRIX_REF = re.compile(r"\$\{\{\s*matrix\.(\w+)\s*\}\}")
EXPRESSION = re.compile(r"\$\{\{[^}]*\}\}")


def readme_table(text: str) -> list[tuple[str, str]]:
    """README.md's table headed `| label | folder | what it proves |`: (label, folder cell) a row, to
    the table's end."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| label | folder |"))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = line.split("|")
        rows.append((cells[1].strip(), cells[2].strip()))
    return rows


def readme_labels(text: str) -> list[str]:
    return [label for label, _ in readme_table(text)]


def cross_gates() -> list[str]:
    """clients/cross.py's GATES keys, read from its source (importing it would run a gate's imports)."""
    text = (ROOT / "clients" / "cross.py").read_text()
    block = text[text.index("GATES = {"):text.index("\n}", text.index("GATES = {"))]
    return re.findall(r'^\s+"([a-z]+)": \(', block, re.M)


def module_file(module: str) -> Path:
    """The file `python3 -m MODULE` runs from the repository root."""
    return ROOT.joinpath(*module.split(".")).with_suffix(".py")


def gate_folder_problems(labels: list[str], tests) -> list[str]:
    """A gate's label names its folder: LABEL/ with a README.md, named first in README's table, and every
    Python command of the label's tests a module of the tree (`-m LABEL.x` for the label's own gate).
    unit (the components' units, beside each) and full (the uncut form of every gate) are no folders."""
    folders = dict(readme_table((ROOT / "README.md").read_text()))
    problems = []
    for label in labels:
        if label in ("unit", "full"):
            continue
        if not (ROOT / label / "README.md").is_file():
            problems.append(f"{label}: no folder {label}/ with a README.md")
        if not folders.get(label, "").startswith(f"{label}/"):
            problems.append(f"{label}: README's table names {folders.get(label)!r}, not {label}/ first")
        modules = [t.command[t.command.index("-m") + 1] for t in tests
                   if label in t.labels and "-m" in t.command[:2]]
        if modules and not any(m.split(".")[0] == label for m in modules):
            problems.append(f"{label}: no test of the label runs a module of {label}/ ({sorted(set(modules))})")
    for t in tests:
        if "-m" in t.command[:2] and not module_file(t.command[t.command.index("-m") + 1]).is_file():
            problems.append(f"{t.name}: -m {t.command[t.command.index('-m') + 1]}: no such module")
        if t.command[:1] and t.command[0].endswith("python3") and any(a.endswith(".py") for a in t.command[1:2]):
            problems.append(f"{t.name}: runs {t.command[1]} by its path, not as a module from the root")
    return problems


def run_all_flags() -> set[str]:
    """The flags run_all.sh's argument loop takes: the patterns of its `case` arms."""
    text = (ROOT / "run_all.sh").read_text()
    loop = text[text.index('while [ $# -gt 0 ]'):text.index("done", text.index('while [ $# -gt 0 ]'))]
    return {flag for arm in re.findall(r"^\s+([-|a-z]+)\)", loop, re.M) for flag in arm.split("|")}


def lab_gate_flags() -> set[str]:
    return {flag for action in lab_gate_parser()._actions for flag in action.option_strings}


def expand(command: str, matrix: dict[str, list]) -> list[str]:
    """COMMAND once for each value of the matrix variables it names (other ${{ }} become a word)."""
    names = sorted(set(MATRIX_REF.findall(command)))
    if not names:
        return [EXPRESSION.sub("X", command)]
    out = []
    for name in names:
        for value in matrix.get(name, []):
            out.append(EXPRESSION.sub("X", MATRIX_REF.sub(lambda m: str(value) if m[1] == name else "X", command)))
    return out


def check_command(words: list[str], labels: list[str], tests: list[str], known: dict[str, set[str]]) -> list[str]:
    """What is wrong with one lab command of a job: an unknown flag, label or script; a --tests that matches no test."""
    problems = []
    if words[:1] == ["./run_all.sh"]:
        flags, args = known["run_all.sh"], words[1:]
    elif words[:3] == ["/usr/bin/python3", "-m", "harness.lab_gate"]:
        flags, args = known["lab_gate"], words[3:]
    elif words and words[0] in ("/usr/bin/python3", "python3") and len(words) > 2 and words[1] == "-m":
        return [] if module_file(words[2]).is_file() else [f"-m {words[2]}: no such module of the tree"]
    elif words and words[0] in ("/usr/bin/python3", "python3") and len(words) > 1 and words[1].endswith(".py"):
        return [] if (ROOT / words[1]).is_file() else [f"{words[1]}: no such script"]
    else:
        return []
    for i, word in enumerate(args):
        if word.startswith("--") and word not in flags:
            problems.append(f"{words[0]}: no flag {word}")
        nxt = args[i + 1] if i + 1 < len(args) else ""
        if word == "--label" and nxt not in labels:
            problems.append(f"--label {nxt}: not a CTest label ({' '.join(labels)})")
        if word in ("--tests", "--exclude") and not any(re.search(nxt, t) for t in tests):
            problems.append(f"{word} {nxt!r} matches no CTest test")
    return problems


def job_commands(job: dict) -> list[str]:
    """Every shell line of JOB's run steps."""
    return [line.strip() for step in job.get("steps", []) if isinstance(step.get("run"), str)
            for line in step["run"].splitlines() if line.strip()]


def check_workflow(gate: Gate, path: Path, labels: list[str], tests: list[str], known: dict[str, set[str]]) -> None:
    doc = yaml.safe_load(path.read_text())
    jobs = doc.get("jobs", {})
    gate.check(f"{path.name}/parses", isinstance(jobs, dict) and bool(jobs), f"{len(jobs)} jobs")
    problems = []
    for name, job in jobs.items():
        matrix = {k: v for k, v in (job.get("strategy", {}).get("matrix", {}) or {}).items() if isinstance(v, list)}
        matrix.setdefault("label", labels)
        matrix.setdefault("client", clients_under_test())
        for line in job_commands(job):
            for command in expand(line, matrix):
                for part in re.split(r"&&|\|\||;|\$\(|\)", command):
                    try:
                        words = shlex.split(part)
                    except ValueError:
                        continue
                    problems += [f"job {name}: {p}" for p in check_command(words, labels, tests, known)]
    gate.check(f"{path.name}/commands", not problems, "; ".join(problems[:8]) or
               "every lab command's flags, labels, test patterns and scripts exist")


def check_tlslab_jobs(gate: Gate, path: Path) -> None:
    """The tlslab workflow takes its matrices from lab_gate.py, and its operator shards cover 1..N."""
    jobs = yaml.safe_load(path.read_text())["jobs"]
    build = "\n".join(job_commands(jobs["build"]))
    gate.check("tlslab.yml/labels-from-ctest",
               jobs["label"]["strategy"]["matrix"]["label"] == "${{ fromJSON(needs.build.outputs.labels) }}"
               and "--list-labels --json" in build, "the label matrix is lab_gate.py --list-labels")
    gate.check("tlslab.yml/clients-from-the-rooms",
               jobs["full-client"]["strategy"]["matrix"]["client"] == "${{ fromJSON(needs.build.outputs.clients) }}"
               and "--list-clients --json" in build, "the client matrix is lab_gate.py --list-clients")
    shards = jobs["full-operators"]["strategy"]["matrix"]["shard"]
    env = next(s.get("env", {}) for s in jobs["full-operators"]["steps"] if "env" in s)
    n = len(shards)
    gate.check("tlslab.yml/operator-shards", shards == list(range(1, n + 1))
               and env.get("TLSLAB_SHARD") == "${{ matrix.shard }}/" + str(n), f"{n} shards, TLSLAB_SHARD K/{n}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build-dir", type=Path, required=True, help="a configured tree (its CTest tests)")
    ns = p.parse_args()
    gate = Gate("gate_lists")
    tests = ctest_tests(ns.build_dir.resolve())
    labels = labels_of(tests)
    names = [t.name for t in tests]
    readme = readme_labels((ROOT / "README.md").read_text())
    gate.expect("readme/labels", sorted(labels), sorted(readme), "README.md's label table against CTest's labels")
    problems = gate_folder_problems(labels, tests)
    gate.check("labels/name-their-folders", not problems, "; ".join(problems[:8]) or
               "every gate label but unit and full is a folder with a README, first in README's table, its gate a module of it")
    unknown = [g for g in cross_gates() if g not in labels]
    gate.check("cross.py/gates", not unknown, f"not CTest labels: {unknown}" if unknown else
               f"{len(cross_gates())} crossed gates, each a label")
    per_client = {c: [n for n in names if n.endswith(f"_{c}")] for c in clients_under_test()}
    gate.check("clients/each-crossed", all(per_client.values()),
               f"tests named GATE_CLIENT a client: {({c: len(v) for c, v in per_client.items()})}")
    known = {"run_all.sh": run_all_flags(), "lab_gate": lab_gate_flags()}
    gate.check("run_all.sh/passes-lab-gate-flags", known["run_all.sh"] - {"--setup-only", "--client", "-h", "--help"}
               <= known["lab_gate"], f"run_all.sh {sorted(known['run_all.sh'])}")
    workflows = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
    for path in workflows:
        check_workflow(gate, path, labels, names, known)
    check_tlslab_jobs(gate, ROOT / ".github" / "workflows" / "tlslab.yml")
    for path in sorted((ROOT / ".clusterfuzzlite").glob("*.yaml")):
        gate.check(f"{path.name}/parses", isinstance(yaml.safe_load(path.read_text()), dict), "YAML")
    return gate.finish()


if __name__ == "__main__":
    sys.exit(main())
