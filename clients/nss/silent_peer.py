"""hostile/peer.py made silent: the same scenario, but no close_notify is ever sent and each connection
is held open (its socket not closed) for --hold seconds after the scenario ends. A reproducer of
README.md's lost-error bug: NSS refuses a record, sends its fatal alert, and then reports
PR_WOULD_BLOCK_ERROR, so a client whose peer goes quiet waits for its own deadline.

    /usr/bin/python3 clients/nss/silent_peer.py --hold 6 --chain build/certs/out/leaf-ecdsa.pem \\
        --key build/certs/out/leaf-ecdsa.key --scenario wrong-record-version     # READY <port>
"""
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "hostile"))
import peer  # noqa: E402  (hostile/peer.py, imported as its own folder imports it)


def silenced(hold: float) -> None:
    """Conn without its close_notify, each connection kept open HOLD seconds after it is served."""
    post, serve = peer.Conn.post, peer.Conn.serve

    def quiet_post(self, content_type, data, what, **kw):
        if what != "alert:close_notify":
            post(self, content_type, data, what, **kw)

    def held_serve(self):
        serve(self)
        time.sleep(hold)

    peer.Conn.post, peer.Conn.serve = quiet_post, held_serve


if __name__ == "__main__":
    args = sys.argv[1:]
    hold = 6.0
    if args[:1] == ["--hold"]:
        hold, args = float(args[1]), args[2:]
    silenced(hold)
    sys.argv = [sys.argv[0], *args]
    sys.exit(peer.main())
