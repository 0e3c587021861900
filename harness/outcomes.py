"""Outcome names <-> (stage, detail) numbers, read from the OpenSSL headers the client was built with.

An expectation is written `ok` or `STAGE/DETAIL`, DETAIL being a name:
  X509_V_ERR_*          a verification error (x509_vfy.h), e.g. handshake/X509_V_ERR_CERT_HAS_EXPIRED
  SSL_R_*               an OpenSSL SSL-library reason, packed as ERR_peek_error() gives it (sslerr.h)
  OCSP_R_*              an OCSP-library reason, packed the same way (ocsperr.h): a staple that did not verify
  ERR_<lib>_<reason>    any other packed OpenSSL error, by numbers (no name to give it)
  PEER_CLOSED           -1: the peer closed without an alert (DESIGN.md)
  E*                    an errno name (connect, write, read stages)
"""
from __future__ import annotations

import errno
import re
from pathlib import Path

STAGES = {"ok": 0, "connect": 1, "handshake": 2, "write": 3, "read": 4, "setup": 5, "lookup": 6,
          "refused": 7, "deadline": 102}
ERR_LIB_SHIFT = 23   # ERR_PACK in OpenSSL 3: (lib << 23) | reason
ERR_REASON_MASK = (1 << ERR_LIB_SHIFT) - 1
SYSTEM_FLAG = 1 << 31


class UnknownOutcome(ValueError):
    pass


def _defines(path: Path, prefix: str) -> dict[str, int]:
    # a trailing comment is allowed: x509_vfy.h has `#define X509_V_ERR_OCSP_VERIFY_NEEDED 73 /* ... */`
    pattern = re.compile(rf"^#\s*define\s+({prefix}\w*)\s+(\d+)\s*(?:/\*.*\*/)?\s*$", re.M)
    return {m.group(1): int(m.group(2)) for m in pattern.finditer(path.read_text())}


class OutcomeNames:
    def __init__(self, include_dir: Path):
        self.verify = _defines(include_dir / "x509_vfy.h", "X509_V_ERR_")
        lib_ssl = _defines(include_dir / "err.h", "ERR_LIB_SSL")["ERR_LIB_SSL"]
        self.ssl = {name: (lib_ssl << ERR_LIB_SHIFT) | reason
                    for name, reason in _defines(include_dir / "sslerr.h", "SSL_R_").items()}
        lib_ocsp = _defines(include_dir / "err.h", "ERR_LIB_OCSP")["ERR_LIB_OCSP"]
        self.ssl.update({name: (lib_ocsp << ERR_LIB_SHIFT) | reason
                         for name, reason in _defines(include_dir / "ocsperr.h", "OCSP_R_").items()})
        self.errno = {name: code for code, name in errno.errorcode.items()}
        if not self.verify or not self.ssl:
            raise UnknownOutcome(f"no X509_V_ERR_/SSL_R_ definitions under {include_dir}")
        self._by_code = {**{v: k for k, v in self.ssl.items()}}
        self._verify_by_code = {v: k for k, v in self.verify.items()}

    def parse(self, text: str) -> tuple[int, int]:
        """`ok` or `stage/NAME` -> (stage code, detail); UnknownOutcome otherwise."""
        if text == "ok":
            return 0, 0
        stage, sep, detail = text.partition("/")
        if not sep or stage not in STAGES or stage == "ok":
            raise UnknownOutcome(f"unknown outcome {text!r} (stage must be one of {', '.join(STAGES)})")
        for table in (self.verify, self.ssl, self.errno):
            if detail in table:
                return STAGES[stage], table[detail]
        if detail == "PEER_CLOSED":
            return STAGES[stage], -1
        m = re.fullmatch(r"ERR_(\d+)_(\d+)", detail)
        if m:
            return STAGES[stage], (int(m.group(1)) << ERR_LIB_SHIFT) | int(m.group(2))
        raise UnknownOutcome(f"unknown outcome {text!r} (detail {detail!r} is not an X509_V_ERR_, SSL_R_, "
                             "ERR_<lib>_<reason>, PEER_CLOSED or errno name)")

    def name(self, stage: str, detail: int) -> str:
        """The canonical name of an observed (stage name, detail)."""
        if stage == "ok":
            return "ok"
        if detail == -1:
            return f"{stage}/PEER_CLOSED"
        if stage in ("connect", "write", "read") and 0 < detail < 4096 and detail in errno.errorcode:
            return f"{stage}/{errno.errorcode[detail]}"
        if 0 < detail < (1 << ERR_LIB_SHIFT) and detail in self._verify_by_code:
            return f"{stage}/{self._verify_by_code[detail]}"
        if detail in self._by_code:
            return f"{stage}/{self._by_code[detail]}"
        if detail > 0 and not detail & SYSTEM_FLAG:
            return f"{stage}/ERR_{detail >> ERR_LIB_SHIFT}_{detail & ERR_REASON_MASK}"
        return f"{stage}/#{detail}"  # unnameable: parse() refuses it, so --update output must be reviewed
