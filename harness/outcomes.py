"""Outcome names <-> (stage, detail) numbers: the one table, read from the headers that define them.

An outcome is written `ok` or `STAGE/DETAIL`, DETAIL a name (harness/README.md "Outcome names"):
  connect, handshake, write, read (the library's stages):
    X509_V_ERR_*          a verification error (OpenSSL's x509_vfy.h), e.g. handshake/X509_V_ERR_CERT_HAS_EXPIRED
    SSL_R_*               an OpenSSL SSL-library reason, packed as ERR_peek_error() gives it (sslerr.h)
    OCSP_R_*, ASN1_R_*    an OCSP- or ASN.1-library reason, packed the same way (ocsperr.h, asn1err.h)
    ERR_<lib>_<reason>    any other packed OpenSSL error, by numbers; ERR_128_<code> (ERR_LIB_USER) is an
                          adapter's library code with no OpenSSL counterpart (clients/contract/openssl_codes.h)
    E*                    an errno name (connect, write and read name their errno so)
    PEER_CLOSED           -1: the peer closed without an alert / close_notify (client/outcome.h)
    UNMAPPED              -100: an adapter's library error with no OpenSSL counterpart (clients/README.md)
    read only: HTTP_CHUNKED -2, HTTP_MALFORMED -3, EARLY_CLOSE_NOTIFY 0 (client/outcome.h's details)
  setup/NAME              client/outcome.h's SetupFailure, upper case: setup/SSL_NEW, setup/CONTEXT
  lookup/NAME             client/dns_error.h's dns::Error, upper case: lookup/NXDOMAIN, lookup/TIMEOUT
  deadline/STAGE          the stage that was running, its name in upper case: deadline/HANDSHAKE
  refused/A.B.C.D         the refused IPv4 address (packed in host order); refused/IPV6 an IPv6 one (-6)

`default()` is the table of the OpenSSL headers tlsnb is built with (OPENSSL_INCLUDE, CTest's
--openssl-include) and this tree's client/ headers, built once.
"""
from __future__ import annotations

import errno
import functools
import re
from pathlib import Path
from typing import Optional

from .layout import ROOT

STAGES = {"ok": 0, "connect": 1, "handshake": 2, "write": 3, "read": 4, "setup": 5, "lookup": 6,
          "refused": 7, "deadline": 102}
LIBRARY_STAGES = ("connect", "handshake", "write", "read")   # their detail: errno, X509_V_ERR_*, packed errors
ERRNO_STAGES = ("connect", "write", "read")
ERR_LIB_SHIFT = 23   # ERR_PACK in OpenSSL 3: (lib << 23) | reason
ERR_REASON_MASK = (1 << ERR_LIB_SHIFT) - 1
SYSTEM_FLAG = 1 << 31
OPENSSL_INCLUDE = Path("/usr/include/openssl")   # the scripts' --openssl-include default, CTest's too
# client/outcome.h's details::NAME: the name it is written by, and the stages where it means that
LAB_DETAILS = {"peer_closed": ("PEER_CLOSED", LIBRARY_STAGES), "http_chunked": ("HTTP_CHUNKED", ("read",)),
               "http_malformed": ("HTTP_MALFORMED", ("read",)),
               "early_close_notify": ("EARLY_CLOSE_NOTIFY", ("read",)), "refused_ipv6": ("IPV6", ("refused",))}
UNMAPPED = -100      # clients/README.md "Outcomes": an adapter's library error with no OpenSSL counterpart
# (the libraries' reason headers that name a packed error, beside sslerr.h)
REASONS = (("ERR_LIB_OCSP", "ocsperr.h", "OCSP_R_"), ("ERR_LIB_ASN1", "asn1err.h", "ASN1_R_"))
DOTTED = re.compile(r"(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})")


class UnknownOutcome(ValueError):
    pass


def _defines(path: Path, prefix: str) -> dict[str, int]:
    # a trailing comment is allowed: x509_vfy.h has `#define X509_V_ERR_OCSP_VERIFY_NEEDED 73 /* ... */`
    pattern = re.compile(rf"^#\s*define\s+({prefix}\w*)\s+(\d+)\s*(?:/\*.*\*/)?\s*$", re.M)
    return {m.group(1): int(m.group(2)) for m in pattern.finditer(path.read_text())}


def _block(path: Path, opener: str, entry: str) -> dict[str, int]:
    """The `name = value` entries (ENTRY: a regex of two groups) of the block that opens with OPENER."""
    text = path.read_text()
    start = text.find(opener)
    if start < 0:
        raise UnknownOutcome(f"{path}: no {opener!r} (the lab's outcome details are read from it)")
    body = text[start + len(opener):text.find("}", start + len(opener))]
    found = {m.group(1): int(m.group(2)) for m in re.finditer(entry, body)}
    if not found:
        raise UnknownOutcome(f"{path}: {opener!r} holds no entries")
    return found


ENUM_ENTRY = r"(?m)^\s*(\w+)\s*=\s*(-?\d+)\s*,"


class OutcomeNames:
    def __init__(self, include_dir: Path = OPENSSL_INCLUDE, lab: Path = ROOT):
        self.verify = _defines(include_dir / "x509_vfy.h", "X509_V_ERR_")
        err = include_dir / "err.h"
        lib_ssl = _defines(err, "ERR_LIB_SSL")["ERR_LIB_SSL"]
        self.ssl = {name: (lib_ssl << ERR_LIB_SHIFT) | reason
                    for name, reason in _defines(include_dir / "sslerr.h", "SSL_R_").items()}
        for lib, header, prefix in REASONS:
            code = _defines(err, lib)[lib]
            self.ssl.update({name: (code << ERR_LIB_SHIFT) | reason
                             for name, reason in _defines(include_dir / header, prefix).items()})
        self.errno = {name: code for code, name in errno.errorcode.items()}
        if not self.verify or not self.ssl:
            raise UnknownOutcome(f"no X509_V_ERR_/SSL_R_ definitions under {include_dir}")
        self._by_code = {**{v: k for k, v in self.ssl.items()}}
        self._verify_by_code = {v: k for k, v in self.verify.items()}
        self.own = self._lab_names(lab, _defines(err, "ERR_LIB_USER")["ERR_LIB_USER"])
        self._own_by_code = {stage: {v: k for k, v in names.items()} for stage, names in self.own.items()}

    @staticmethod
    def _lab_names(lab: Path, err_lib_user: int) -> dict[str, dict[str, int]]:
        """stage -> {name: detail}: the lab's own details, from client/outcome.h and client/dns_error.h."""
        outcome_h, dns_h = lab / "client" / "outcome.h", lab / "client" / "dns_error.h"
        stages = _block(outcome_h, "enum class Stage : int {", ENUM_ENTRY)
        if stages != STAGES:
            raise UnknownOutcome(f"{outcome_h}: enum Stage is {stages}, harness/outcomes.py's STAGES {STAGES}")
        contract = lab / "clients" / "contract" / "openssl_codes.h"
        user = re.search(r"constexpr long err_lib_user = (\d+);", contract.read_text())
        if not user or int(user[1]) != err_lib_user:   # the ERR_128_<code> names hold only while they agree
            raise UnknownOutcome(f"{contract}: err_lib_user is {user and user[1]}, OpenSSL's ERR_LIB_USER "
                                 f"{err_lib_user}")
        own: dict[str, dict[str, int]] = {s: {} for s in STAGES}
        details = _block(outcome_h, "namespace details {", r"constexpr long (\w+) = (-?\d+);")
        if set(details) != set(LAB_DETAILS):
            raise UnknownOutcome(f"{outcome_h}: details {sorted(details)}, harness/outcomes.py names "
                                 f"{sorted(LAB_DETAILS)}: name every one there")
        for constant, (name, where) in LAB_DETAILS.items():
            for stage in where:
                own[stage][name] = details[constant]
        for stage in LIBRARY_STAGES:
            own[stage]["UNMAPPED"] = UNMAPPED
        setup = _block(outcome_h, "enum class SetupFailure : long {", ENUM_ENTRY)
        own["setup"] = {k.upper(): v for k, v in setup.items()}
        dns = _block(dns_h, "enum Error : int {", ENUM_ENTRY)
        own["lookup"] = {k.upper(): v for k, v in dns.items() if v != 0}
        own["deadline"] = {k.upper(): v for k, v in STAGES.items() if k not in ("ok", "deadline")}
        return own

    def parse(self, text: str) -> tuple[int, int]:
        """`ok` or `stage/NAME` -> (stage code, detail); UnknownOutcome otherwise."""
        if text == "ok":
            return 0, 0
        stage, sep, detail = text.partition("/")
        if not sep or stage not in STAGES or stage == "ok":
            raise UnknownOutcome(f"unknown outcome {text!r} (stage must be one of {', '.join(STAGES)})")
        if detail in self.own[stage]:
            return STAGES[stage], self.own[stage][detail]
        if stage == "refused" and (m := DOTTED.fullmatch(detail)) and all(int(o) < 256 for o in m.groups()):
            return STAGES[stage], functools.reduce(lambda a, o: a << 8 | int(o), m.groups(), 0)
        if stage in LIBRARY_STAGES:
            for table in (self.verify, self.ssl, self.errno):
                if detail in table:
                    return STAGES[stage], table[detail]
            m = re.fullmatch(r"ERR_(\d+)_(\d+)", detail)
            if m:
                return STAGES[stage], (int(m.group(1)) << ERR_LIB_SHIFT) | int(m.group(2))
        raise UnknownOutcome(f"unknown outcome {text!r} (detail {detail!r} is not {self.kinds(stage)})")

    def kinds(self, stage: str) -> str:
        """What a detail of STAGE may be named, in words (for a refusal)."""
        own = ", ".join(sorted(self.own[stage]))
        if stage in LIBRARY_STAGES:
            return f"an X509_V_ERR_, SSL_R_, OCSP_R_, ASN1_R_, ERR_<lib>_<reason> or errno name, nor {own}"
        return f"an IPv4 address or {own}" if stage == "refused" else f"one of {own}"

    def name(self, stage: str, detail: int) -> str:
        """The canonical name of an observed (stage name, detail); STAGE/#DETAIL when it has none."""
        if stage == "ok":
            return "ok"
        if (own := self._own_by_code.get(stage, {}).get(detail)) is not None:
            return f"{stage}/{own}"
        if stage == "refused" and 0 <= detail < 1 << 32:
            return f"{stage}/" + ".".join(str(detail >> s & 255) for s in (24, 16, 8, 0))
        if stage not in LIBRARY_STAGES:
            return f"{stage}/#{detail}"
        if stage in ERRNO_STAGES and 0 < detail < 4096 and detail in errno.errorcode:
            return f"{stage}/{errno.errorcode[detail]}"
        if 0 < detail < (1 << ERR_LIB_SHIFT) and detail in self._verify_by_code:
            return f"{stage}/{self._verify_by_code[detail]}"
        if detail in self._by_code:
            return f"{stage}/{self._by_code[detail]}"
        if detail > 0 and not detail & SYSTEM_FLAG:
            return f"{stage}/ERR_{detail >> ERR_LIB_SHIFT}_{detail & ERR_REASON_MASK}"
        return f"{stage}/#{detail}"  # unnameable: parse() refuses it, so --update output must be reviewed

    def named(self, stage: str, detail: int) -> Optional[str]:
        """The name of (STAGE, DETAIL), or None where it has none (the number is then what is written)."""
        text = self.name(stage, detail)
        return None if "/#" in text else text


@functools.cache
def default() -> OutcomeNames:
    """The table of the OpenSSL headers tlsnb is built with (OPENSSL_INCLUDE) and this tree's headers."""
    return OutcomeNames()
