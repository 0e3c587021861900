"""pkits/tests.tsv: NIST's tests, their settings and verdicts, loaded and checked (file:line on error).

    tests = load(HERE / "tests.tsv", suite)      # {"4.1.1": PkitsTest, ...} in the file's order
    rows()                                       # the table's rows unchecked against a suite (READMEs, results page)
    tests["4.8.1.3"].setting_args()              # the client flags of its settings
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.rows import RowError, load_tsv, unique

TABLE = Path(__file__).resolve().parent / "tests.tsv"
VERDICTS = ("valid", "invalid")
POLICY_ARC = "2.16.840.1.101.3.2.1.48."   # NIST-test-policy-N is this arc's N
# a settings word -> the contract's optional flag that gives it (clients/README.md)
SETTING_FLAGS = {"explicit": "--explicit-policy", "inhibit-mapping": "--inhibit-policy-mapping",
                 "inhibit-any": "--inhibit-any-policy"}


@dataclass
class PkitsTest:
    test: str
    name: str
    ee: str
    settings: str
    verdict: str
    control: str
    where: str = ""

    @property
    def valid(self) -> bool:
        return self.verdict == "valid"

    @property
    def default_settings(self) -> bool:
        return self.settings == "-"

    def setting_args(self) -> list[str]:
        """The client flags of the settings: --policy OID (one each), --explicit-policy, ..."""
        args: list[str] = []
        for word in [] if self.default_settings else self.settings.split():
            if word.startswith("policy="):
                for name in word[len("policy="):].split(","):
                    args += ["--policy", POLICY_ARC + name.rsplit("-", 1)[1]]
            else:
                args.append(SETTING_FLAGS[word])
        return args


def check(t: PkitsTest, ees: set[str]) -> None:
    if t.verdict not in VERDICTS:
        raise RowError(f"{t.where}: {t.test}: verdict {t.verdict!r} (one of {', '.join(VERDICTS)})")
    if t.ee not in ees:
        raise RowError(f"{t.where}: {t.test}: {t.ee} is not a certificate of the suite (certs/{t.ee}.crt)")
    for word in [] if t.default_settings else t.settings.split():
        policies = word[len("policy="):].split(",") if word.startswith("policy=") else []
        if word not in SETTING_FLAGS and not (policies and all(
                p.startswith("NIST-test-policy-") and p.rsplit("-", 1)[1].isdigit() for p in policies)):
            raise RowError(f"{t.where}: {t.test}: settings word {word!r} (policy=NIST-test-policy-N,..., "
                           f"{', '.join(SETTING_FLAGS)})")
    if (t.control == "-") != t.valid:
        raise RowError(f"{t.where}: {t.test}: an invalid test names its control (a Valid test), a valid one none")


def rows(path: Path = TABLE) -> list[PkitsTest]:
    """The rows of PATH as they are written, no suite needed: what the READMEs and the results page count."""
    return load_tsv(path, PkitsTest)


def load(path: Path, ees: set[str]) -> dict[str, PkitsTest]:
    """The rows of PATH, each checked against the suite's end entities EES; controls checked last."""
    written = rows(path)
    unique(written, "test")
    tests = {}
    for t in written:
        check(t, ees)
        tests[t.test] = t
    for t in written:
        if not t.valid and (t.control not in tests or not tests[t.control].valid):
            raise RowError(f"{t.where}: {t.test}: control {t.control!r} is not a valid test of the table")
    return tests
