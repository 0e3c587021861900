"""JUnit XML for a CI dashboard: one <testcase> per case a gate printed (not one per label).

When TLSLAB_JUNIT_DIR is set, every Gate writes DIR/NAME.xml as it finishes, NAME being the
CTest test that ran it (TLSLAB_GATE_TEST, set by tlslab_gate()) or else the gate's own name.
run_all.sh sets it to BUILD/junit; `ctest --output-junit` still writes CTest's own file.

    TLSLAB_JUNIT_DIR=/tmp/j /usr/bin/python3 -m client.tests.client_gate ... && ls /tmp/j
"""
from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Optional

_written: set[Path] = set()   # files this process wrote: a second gate in one process gets its own
# What XML 1.0 cannot hold, even escaped: C0 controls but tab, newline and return, lone surrogates,
# U+FFFE/U+FFFF. A client's stderr or a case's detail may carry any of them (a curl row's did): each
# is written as its \xNN / \uNNNN escape, so the file parses and the reader still sees the byte.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_text(text: str) -> str:
    return _NOT_XML.sub(lambda m: repr(m.group(0))[1:-1], text)


def write(gate_name: str, cases: list[tuple[str, str, str, float]], seconds: float,
          repeats: Optional[list[str]] = None) -> Optional[Path]:
    """CASES: (case, PASS|FAIL|SKIP, detail, seconds); REPEATS: what the gate ran again on purpose
    (a <property name="repeat"> each). Returns the file written, None when not asked."""
    folder = os.environ.get("TLSLAB_JUNIT_DIR")
    if not folder:
        return None
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", os.environ.get("TLSLAB_GATE_TEST") or gate_name)
    path = Path(folder) / f"{stem}.xml"
    n = 2
    while path in _written:
        path, n = Path(folder) / f"{stem}-{n}.xml", n + 1
    suite = ET.Element("testsuite", name=gate_name, tests=str(len(cases)),
                       failures=str(sum(v == "FAIL" for _, v, _, _ in cases)),
                       skipped=str(sum(v == "SKIP" for _, v, _, _ in cases)), time=f"{seconds:.3f}")
    if repeats:
        props = ET.SubElement(suite, "properties")
        for what in repeats:
            ET.SubElement(props, "property", name="repeat", value=xml_text(what[:500]))
    for case, verdict, detail, secs in cases:
        case, detail = xml_text(case), xml_text(detail)
        element = ET.SubElement(suite, "testcase", classname=f"tlslab.{stem}", name=case, time=f"{secs:.3f}")
        if verdict == "FAIL":
            ET.SubElement(element, "failure", message=detail.splitlines()[0][:500] if detail else "failed").text = detail
        elif verdict == "SKIP":
            ET.SubElement(element, "skipped", message=detail[:500])
        elif detail:
            ET.SubElement(element, "system-out").text = detail
    Path(folder).mkdir(parents=True, exist_ok=True)
    root = ET.Element("testsuites", name="tlslab")
    root.append(suite)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)
    _written.add(path)
    return path
