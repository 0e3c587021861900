"""The pkits gate: NIST's PKITS path validation suite over the wire, every client judged by NIST's verdicts."""
