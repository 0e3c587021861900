"""dns/: names end to end (label dns). A regular package, not a namespace one: a `dns` package
installed for Python (dnspython) would otherwise be imported in its place by `python3 -m dns.dns_gate`."""
