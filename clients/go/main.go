// tlsnb-go: tlslab's client under test for Go's crypto/tls (clients/README.md is the contract).
//
// One goroutine per attempt over Go's netpoller, at most --parallel in flight (a pool of slot
// numbers), HTTP/1.1 by hand over the tls.Conn, one JSON line per attempt and a summary.
package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

const (
	exitOK          = 0
	exitFailed      = 1
	exitUsage       = 2
	exitUnsupported = 89
)

func main() { os.Exit(run(os.Args[1:])) }

func fail(code int, msg string) int {
	fmt.Fprintf(os.Stderr, "tlsnb-go: %s\n", msg)
	return code
}

func run(args []string) int {
	fds := newFdLister()
	inherited := fds.count() // before anything opens a file (os.Open makes Go's epoll instance)
	o, help, err := parseOptions(args)
	if help {
		fmt.Print(usageText)
		return exitOK
	}
	switch e := err.(type) {
	case usageError:
		return fail(exitUsage, e.msg)
	case unsupportedError:
		return fail(exitUnsupported, e.msg)
	}
	cfg, msg := makeConfig(o)
	if cfg == nil {
		return fail(exitUsage, msg)
	}
	if o.sigpipe == "ignore" {
		// SIG_IGN process-wide. "default" leaves Go's runtime handler, which already turns SIGPIPE
		// from a socket write into EPIPE (only fds 1 and 2 can kill a Go program): see README.
		signal.Ignore(syscall.SIGPIPE)
	}

	dial := o.target
	if o.connectIP != "" {
		dial = o.connectIP
	}
	r := &runner{
		o:        o,
		cfg:      cfg,
		addr:     net.JoinHostPort(dial, strconv.Itoa(o.port)),
		request:  buildRequest(o),
		deadline: time.Duration(o.deadlineMs) * time.Millisecond,
		hold:     time.Duration(o.holdMs) * time.Millisecond,
	}
	r.fds, r.inheritedFds = fds, inherited
	rep := newReport(o.json)
	started := time.Now()
	r.runAll(rep)
	s := rep.summary(float64(time.Since(started).Nanoseconds())/1e6, r.peakFds.Load(), r.peakSockets.Load())
	if s.failed > 0 {
		return exitFailed
	}
	return exitOK
}

// runAll: a pool of --parallel slot numbers bounds the goroutines in flight; results come back
// on one channel and are printed by this goroutine only.
func (r *runner) runAll(rep *report) {
	parallel := r.o.parallel
	if parallel > r.o.count {
		parallel = r.o.count
	}
	slots := make(chan int, parallel)
	for i := 0; i < int(parallel); i++ {
		slots <- i
	}
	results := make(chan result, parallel)
	go func() {
		for i := int64(0); i < r.o.count; i++ {
			slot := <-slots
			go func(conn int64, slot int) {
				res := r.attempt(conn, slot)
				slots <- slot
				results <- res
			}(i, slot)
		}
	}()
	for n := int64(0); n < r.o.count; n++ {
		rep.attempt(<-results)
	}
}

// verifyChainOnly: --no-verify-name, crypto/tls's documented way (its InsecureSkipVerify example):
// the chain verified by crypto/x509 as crypto/tls verifies it (the same roots, the peer's other
// certificates as intermediates, the current time, the server-auth usage), DNSName left empty;
// then the pins over the chains found. VerifyConnection runs on resumed handshakes too.
func verifyChainOnly(roots *x509.CertPool, pins [][]byte) func(tls.ConnectionState) error {
	return func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return errors.New("tls: the server sent no certificate")
		}
		intermediates := x509.NewCertPool()
		for _, c := range cs.PeerCertificates[1:] {
			intermediates.AddCert(c)
		}
		chains, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: intermediates})
		if err != nil || len(pins) == 0 {
			return err
		}
		return checkPins(chains, pins)
	}
}

// makeConfig: the tls.Config a Go service would write. nil and a reason when the trust
// configuration is unusable (exit 2, no connection).
func makeConfig(o *options) (*tls.Config, string) {
	cfg := &tls.Config{
		ServerName:         o.name, // SNI (none for an IP literal) and the name verified
		MinVersion:         tls.VersionTLS12,
		MaxVersion:         o.tlsMax,
		InsecureSkipVerify: !o.verify,
	}
	var pool *x509.CertPool
	if o.systemTrust {
		sys, err := x509.SystemCertPool()
		if err != nil {
			return nil, "--system-trust: " + err.Error()
		}
		pool = sys
	}
	if o.cafile != "" {
		pem, err := os.ReadFile(o.cafile)
		if err != nil {
			return nil, "--cafile: " + err.Error()
		}
		if len(pem) == 0 {
			return nil, fmt.Sprintf("--cafile: '%s' is empty", o.cafile)
		}
		if pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Sprintf("--cafile: no PEM certificate in '%s'", o.cafile)
		}
	}
	cfg.RootCAs = pool // nil: the system pool, loaded by crypto/x509 at the first verification
	if o.certFile != "" {
		pair, err := tls.LoadX509KeyPair(o.certFile, o.keyFile) // refuses a key that does not match
		if err != nil {
			return nil, fmt.Sprintf("--cert/--key: '%s', '%s': %s", o.certFile, o.keyFile, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	if !o.verifyName {
		cfg.InsecureSkipVerify = true // crypto/tls's own Verify always carries DNSName: ServerName
		cfg.VerifyConnection = verifyChainOnly(pool, o.pins)
	} else if len(o.pins) > 0 {
		cfg.VerifyPeerCertificate = func(_ [][]byte, chains [][]*x509.Certificate) error {
			return checkPins(chains, o.pins)
		}
	}
	if o.resume {
		// Keyed by ServerName; Get does not remove a ticket, so one ticket is offered by every
		// attempt until a newer one replaces it (not single-use): see README.
		cfg.ClientSessionCache = tls.NewLRUClientSessionCache(int(o.parallel))
	}
	return cfg, ""
}
