package main

// One attempt = one goroutine: dial (context deadline), tls.Client, Handshake, optional hold,
// K requests written and read by hand, Close (close_notify). Every blocking call parks the
// goroutine on Go's netpoller; the attempt's deadline is the socket's deadline.

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

type result struct {
	conn         int64
	slot         int
	out          outcome
	addr         string
	ms           float64
	resumed      bool
	version      string
	cipher       string
	httpStatus   int
	requestsDone int64
}

type runner struct {
	o        *options
	cfg      *tls.Config
	addr     string
	request  []byte
	deadline time.Duration
	hold     time.Duration
	dialer   net.Dialer

	openSockets, peakSockets, peakFds atomic.Int64
	fds                               *fdLister
	inheritedFds                      int64 // open before the first dial: not ours
}

// watchedConn sits between crypto/tls and the socket. It records whether the socket itself
// reported end-of-stream (crypto/tls returns io.EOF both for close_notify and for a FIN at a
// record boundary), and clamps every deadline to the attempt's: tls.Conn.Close sets its own
// 5 s write deadline for the close_notify, which would otherwise outlive --deadline-ms.
type watchedConn struct {
	net.Conn
	deadline time.Time
	rawEOF   atomic.Bool
}

func (c *watchedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if errors.Is(err, io.EOF) {
		c.rawEOF.Store(true)
	}
	return n, err
}

func (c *watchedConn) clamp(t time.Time) time.Time {
	if t.IsZero() || t.After(c.deadline) {
		return c.deadline
	}
	return t
}

func (c *watchedConn) SetDeadline(t time.Time) error      { return c.Conn.SetDeadline(c.clamp(t)) }
func (c *watchedConn) SetReadDeadline(t time.Time) error  { return c.Conn.SetReadDeadline(c.clamp(t)) }
func (c *watchedConn) SetWriteDeadline(t time.Time) error { return c.Conn.SetWriteDeadline(c.clamp(t)) }

var versionNames = map[uint16]string{tls.VersionTLS12: "TLSv1.2", tls.VersionTLS13: "TLSv1.3",
	tls.VersionTLS11: "TLSv1.1", tls.VersionTLS10: "TLSv1"}

func (r *runner) attempt(conn int64, slot int) (res result) {
	start := time.Now()
	dl := start.Add(r.deadline)
	res = result{conn: conn, slot: slot, addr: r.addr}
	defer func() { res.ms = float64(time.Since(start).Nanoseconds()) / 1e6 }()

	ctx, cancel := context.WithDeadline(context.Background(), dl)
	defer cancel()
	raw, err := r.dialer.DialContext(ctx, "tcp4", r.addr)
	if err != nil {
		res.out = connectOutcome(err)
		return
	}
	r.socketOpened()
	defer r.openSockets.Add(-1)
	wc := &watchedConn{Conn: raw, deadline: dl}
	defer wc.Close() // after a failure: the socket only, no close_notify (as tlsnb)
	_ = wc.SetDeadline(dl)

	tc := tls.Client(wc, r.cfg)
	if err := tc.Handshake(); err != nil {
		res.out = handshakeOutcome(err, r.o.name)
		return
	}
	st := tc.ConnectionState()
	res.resumed = st.DidResume
	res.version = versionNames[st.Version]
	res.cipher = tls.CipherSuiteName(st.CipherSuite)

	if r.hold > 0 {
		if o, failed := r.holdOpen(tc, wc, dl); failed {
			res.out = o
			return
		}
	}
	buf := make([]byte, 16384)
	for res.requestsDone < r.o.requests {
		if _, err := tc.Write(r.request); err != nil {
			res.out = writeOutcome(err)
			return
		}
		resp := newResponse()
		for !resp.done() {
			n, err := tc.Read(buf)
			if n > 0 {
				resp.feed(buf[:n])
			}
			if resp.done() {
				break
			}
			if err != nil {
				res.out = readOutcome(stageRead, err, wc.rawEOF.Load())
				return
			}
		}
		switch resp.state {
		case stChunked:
			res.out = outcome{stageRead, httpChunked, resp.why, ""}
			return
		case stMalformed:
			res.out = outcome{stageRead, httpMalformed, resp.why, ""}
			return
		}
		res.httpStatus = resp.status
		res.requestsDone++
	}
	// close_notify, best effort (tls.Conn.Close sends it; the peer's is not awaited).
	res.out = outcome{stageOK, 0, "ok", ""}
	if err := tc.Close(); err != nil {
		res.out.note = "close: " + err.Error()
	}
	return
}

// holdOpen keeps the connection open for --hold-ms, reading (and dropping) what arrives, such as
// TLS 1.3 session tickets, which crypto/tls only processes inside Read.
func (r *runner) holdOpen(tc *tls.Conn, wc *watchedConn, dl time.Time) (outcome, bool) {
	end := time.Now().Add(r.hold)
	_ = tc.SetReadDeadline(end)
	buf := make([]byte, 4096)
	for {
		_, err := tc.Read(buf)
		if err == nil {
			continue
		}
		if isTimeout(err) && end.Before(dl) {
			break // the hold is over; a timeout is not fatal to a tls.Conn read
		}
		return readOutcome(stageRead, err, wc.rawEOF.Load()), true
	}
	_ = tc.SetReadDeadline(dl)
	return outcome{}, false
}

// socketOpened counts sockets open at once and samples the process's descriptors.
func (r *runner) socketOpened() {
	n := r.openSockets.Add(1)
	raiseTo(&r.peakSockets, n)
	raiseTo(&r.peakFds, r.fds.count()-r.inheritedFds)
}

func raiseTo(peak *atomic.Int64, v int64) {
	for {
		old := peak.Load()
		if v <= old || peak.CompareAndSwap(old, v) {
			return
		}
	}
}

// fdLister lists /proc/self/fd through one descriptor opened at start (a new one per sample
// would fail exactly when descriptors run out). It counts the entries less stdin/stdout/stderr and
// itself; less those inherited (counted before the first dial), what is left is the process's own:
// the sockets, Go's epoll descriptor and its netpoll wake-up pipe (two), made at the first dial.
// syscall, not os.Open: os.Open registers a file with the netpoller and so would make Go's epoll
// descriptor and pipe before the baseline is taken.
type fdLister struct {
	mu  sync.Mutex
	fd  int
	buf []byte
}

func newFdLister() *fdLister {
	fd, err := syscall.Open("/proc/self/fd", syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		fd = -1
	}
	return &fdLister{fd: fd, buf: make([]byte, 32768)}
}

func (l *fdLister) count() int64 {
	if l.fd < 0 {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := syscall.Seek(l.fd, 0, 0); err != nil {
		return 0
	}
	self := strconv.Itoa(l.fd)
	var n int64
	for {
		got, err := syscall.ReadDirent(l.fd, l.buf)
		if err != nil || got <= 0 {
			break
		}
		_, _, names := syscall.ParseDirent(l.buf[:got], -1, nil)
		for _, name := range names {
			if name != "0" && name != "1" && name != "2" && name != self {
				n++
			}
		}
	}
	return n
}
