#!/usr/bin/python3
"""Every recorded mutant still applies (label unit, well under a second, no build needed).

Loads mutants/mutants.toml with the runner's own loader: each row well formed, each `find`
occurring exactly once in its source and not inside a comment (nor a docstring, in harness/),
each harness/ mutant compiling. An edit that moves code under a mutant turns this red at once,
not minutes later in the mutants gate.

    /usr/bin/python3 -m mutants.check_rows [--rows FILE]
"""
import argparse
import sys
from pathlib import Path

from harness import Gate, RowError
from mutants.rows import load

HERE = Path(__file__).resolve().parent


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=Path, default=HERE / "mutants.toml")
    ns = p.parse_args()
    gate = Gate("mutants_rows")
    try:
        mutants = load(ns.rows, HERE.parent)
        judges = sum(m.in_harness for m in mutants)
        gate.check("rows-apply", True, f"{len(mutants)} mutants: {len(mutants) - judges} of client/, "
                                       f"{judges} of harness/; each `find` once in code")
    except RowError as e:
        gate.check("rows-apply", False, str(e))
    return gate.finish()


if __name__ == "__main__":
    sys.exit(main())
