package main

// Go's errors -> the lab's (stage, detail). detail_text is always err.Error() verbatim; where the
// mapping loses or adds information the adapter says why in the attempt's "note" (and profile.toml's
// [error_map] lists every rule).

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"os"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const (
	stageOK        = 0
	stageConnect   = 1
	stageHandshake = 2
	stageWrite     = 3
	stageRead      = 4
	stageSetup     = 5
	stageDeadline  = 102
)

var stageNames = map[int]string{0: "ok", 1: "connect", 2: "handshake", 3: "write", 4: "read", 5: "setup", 102: "deadline"}

// Details of the lab's own (clients/README.md) and this adapter's.
const (
	peerClosed     = -1
	httpChunked    = -2
	httpMalformed  = -3
	earlyNotify    = 0
	unmappedGoErr  = -100 // a Go error with no OpenSSL counterpart: detail_text says what
	setupSocket    = 3    // tlsnb's SetupFailure::socket
	errLibSSL      = 20
	errLibShift    = 23
	sslAlertOffset = 1000 // SSL_AD_REASON_OFFSET: SSL_R_*_ALERT_* = 1000 + the alert number
)

func packSSL(reason int64) int64 { return errLibSSL<<errLibShift | reason }

// OpenSSL reasons (sslerr.h) used below.
const (
	sslRWrongVersionNumber  = 267
	sslRUnsupportedProtocol = 258
	sslRUnexpectedMessage   = 244
	sslRBadRecordMac        = 281
	sslRRecordTooLong       = 198 // SSL_R_PACKET_LENGTH_TOO_LONG
)

// X509_V_ERR_* (x509_vfy.h, OpenSSL 3.0).
const (
	x509Unspecified             = 1
	x509SignatureFailure        = 7
	x509NotYetValid             = 9
	x509Expired                 = 10
	x509DepthZeroSelf           = 18
	x509SelfSignedInChain       = 19
	x509UnableLocalIssuer       = 20
	x509PathLength              = 25
	x509InvalidPurpose          = 26
	x509SubjectIssuer           = 29
	x509UnhandledCritical       = 34
	x509PermittedViolation      = 47
	x509ExcludedViolation       = 48
	x509UnsupportedNCType       = 51
	x509HostnameMismatch        = 62
	x509IPMismatch              = 64
	x509ApplicationVerification = 50
	x509CAMDTooWeak             = 68
	x509InvalidCA               = 79
	x509ECExplicitParams        = 94
)

type outcome struct {
	stage  int
	detail int64
	text   string // the library's error, verbatim
	note   string // the adapter's reading of it, where that is not obvious
}

func (o outcome) key() string { return stageNames[o.stage] + "/" + strconv.FormatInt(o.detail, 10) }

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

func errnoOf(err error) (syscall.Errno, bool) {
	var en syscall.Errno
	if errors.As(err, &en) {
		return en, true
	}
	return 0, false
}

// tlsAlert reads the alert number out of crypto/tls's unexported `alert` type (a uint8), found in
// a *net.OpError whose Op is "remote error" (received) or "local error" (sent by Go).
func tlsAlert(err error) (op string, alert int64, ok bool) {
	var oe *net.OpError
	if !errors.As(err, &oe) || (oe.Op != "remote error" && oe.Op != "local error") || oe.Err == nil {
		return "", 0, false
	}
	v := reflect.ValueOf(oe.Err)
	if v.Kind() != reflect.Uint8 || v.Type().PkgPath() != "crypto/tls" {
		return "", 0, false
	}
	return oe.Op, int64(v.Uint()), true
}

// A local alert (Go found the fault) -> the OpenSSL reason OpenSSL's client gives the same fault.
var localAlertReason = map[int64]int64{
	10: sslRUnexpectedMessage, // unexpected_message
	20: sslRBadRecordMac,      // bad_record_mac
	22: sslRRecordTooLong,     // record_overflow
	70: sslRUnsupportedProtocol,
}

// TLS-level errors shared by the handshake and the read stage; ok false when err is not one.
func tlsOutcome(stage int, err error) (outcome, bool) {
	text := err.Error()
	if op, alert, ok := tlsAlert(err); ok {
		if op == "remote error" {
			return outcome{stage, packSSL(sslAlertOffset + alert), text, ""}, true
		}
		if reason, ok := localAlertReason[alert]; ok {
			return outcome{stage, packSSL(reason), text, "Go sent this alert itself"}, true
		}
		return outcome{stage, unmappedGoErr, text, "Go sent this alert itself; no OpenSSL reason fits"}, true
	}
	var rh tls.RecordHeaderError
	if errors.As(err, &rh) {
		return outcome{stage, packSSL(sslRWrongVersionNumber), text, "tls.RecordHeaderError"}, true
	}
	if strings.HasPrefix(text, "tls: server selected unsupported protocol version") {
		return outcome{stage, packSSL(sslRUnsupportedProtocol), text, ""}, true
	}
	return outcome{}, false
}

func handshakeOutcome(err error, serverName string) outcome {
	text := err.Error()
	if isTimeout(err) {
		return outcome{stageDeadline, stageHandshake, text, "deadline during handshake"}
	}
	if o, ok := verifyOutcome(err, serverName); ok {
		return o
	}
	if o, ok := tlsOutcome(stageHandshake, err); ok {
		return o
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return outcome{stageHandshake, peerClosed, text, "peer closed the connection without an alert"}
	}
	if en, ok := errnoOf(err); ok {
		return outcome{stageHandshake, peerClosed, text, "peer closed the connection without an alert (" + en.Error() + ")"}
	}
	return outcome{stageHandshake, unmappedGoErr, text, "no OpenSSL counterpart"}
}

// pinMismatch: no certificate of any verified chain carries a --pin-sha256 pin.
type pinMismatch struct{}

func (pinMismatch) Error() string {
	return "no certificate of the verified chain matches a --pin-sha256 pin"
}

// checkPins: the SHA-256 of each verified certificate's SubjectPublicKeyInfo against the pins.
func checkPins(chains [][]*x509.Certificate, pins [][]byte) error {
	for _, chain := range chains {
		for _, cert := range chain {
			sum := sha256.Sum256(cert.RawSubjectPublicKeyInfo)
			for _, pin := range pins {
				if bytes.Equal(sum[:], pin) {
					return nil
				}
			}
		}
	}
	return pinMismatch{}
}

// verifyOutcome maps crypto/x509's verification errors (Go 1.19 returns them unwrapped).
func verifyOutcome(err error, serverName string) (outcome, bool) {
	text := err.Error()
	if errors.As(err, &pinMismatch{}) {
		return outcome{stageHandshake, x509ApplicationVerification, text, "the adapter's VerifyPeerCertificate: no pin matched"}, true
	}
	var hostErr x509.HostnameError
	var invalid x509.CertificateInvalidError
	var unknown x509.UnknownAuthorityError
	var sysRoots x509.SystemRootsError
	var insecure x509.InsecureAlgorithmError
	var constraint x509.ConstraintViolationError
	switch {
	case errors.As(err, &hostErr):
		if net.ParseIP(strings.Trim(hostErr.Host, "[]")) != nil {
			return outcome{stageHandshake, x509IPMismatch, text, ""}, true
		}
		return outcome{stageHandshake, x509HostnameMismatch, text, ""}, true
	case errors.As(err, &invalid):
		return invalidOutcome(invalid, text), true
	case errors.As(err, &unknown):
		return unknownAuthorityOutcome(unknown, text, serverName), true
	case errors.As(err, &sysRoots):
		return outcome{stageHandshake, x509UnableLocalIssuer, text, "x509.SystemRootsError: no system roots"}, true
	case errors.As(err, &insecure):
		return outcome{stageHandshake, x509CAMDTooWeak, text, ""}, true
	case errors.As(err, &constraint):
		return outcome{stageHandshake, x509InvalidCA, text, ""}, true
	}
	if _, ok := err.(x509.UnhandledCriticalExtension); ok {
		return outcome{stageHandshake, x509UnhandledCritical, text, ""}, true
	}
	if strings.HasPrefix(text, "tls: failed to parse certificate from server:") {
		if strings.Contains(text, "invalid ECDSA parameters") || strings.Contains(text, "unsupported elliptic curve") {
			return outcome{stageHandshake, x509ECExplicitParams, text,
				"crypto/x509 parses only named curves: explicit EC parameters fail the parse"}, true
		}
		return outcome{stageHandshake, unmappedGoErr, text, "crypto/x509 could not parse the certificate"}, true
	}
	return outcome{}, false
}

// The x509.CertificateInvalidError reasons that map one to one, with a note where Go's name is not
// OpenSSL's; Expired and the name constraints are read closer in invalidOutcome.
var invalidReasons = map[x509.InvalidReason]struct {
	detail int64
	note   string
}{
	x509.NotAuthorizedToSign:           {x509InvalidCA, "x509.NotAuthorizedToSign"},
	x509.TooManyIntermediates:          {x509PathLength, ""},
	x509.IncompatibleUsage:             {x509InvalidPurpose, ""},
	x509.CANotAuthorizedForExtKeyUsage: {x509InvalidPurpose, ""},
	x509.UnconstrainedName:             {x509UnsupportedNCType, ""},
	x509.TooManyConstraints:            {x509Unspecified, "Go's name-constraint comparison budget"},
	x509.NameMismatch:                  {x509SubjectIssuer, ""},
}

func invalidOutcome(e x509.CertificateInvalidError, text string) outcome {
	switch e.Reason {
	case x509.Expired:
		if e.Cert != nil && time.Now().Before(e.Cert.NotBefore) {
			return outcome{stageHandshake, x509NotYetValid, text, "x509.Expired, before NotBefore"}
		}
		return outcome{stageHandshake, x509Expired, text, ""}
	case x509.CANotAuthorizedForThisName, x509.NameConstraintsWithoutSANs:
		if strings.Contains(e.Detail, "is excluded by constraint") {
			return outcome{stageHandshake, x509ExcludedViolation, text, ""}
		}
		return outcome{stageHandshake, x509PermittedViolation, text, ""}
	}
	if r, ok := invalidReasons[e.Reason]; ok {
		return outcome{stageHandshake, r.detail, text, r.note}
	}
	return outcome{stageHandshake, unmappedGoErr, text, "unknown x509.InvalidReason"}
}

// x509.UnknownAuthorityError is Go's one "no chain" error. Its unexported hintErr holds why the
// first candidate issuer was refused (a signature check or a constraint). Without one, no issuer
// was found for e.Cert, the certificate where chain building stopped. When that certificate is
// self-signed it is OpenSSL's 18 if it is the leaf and 19 if it is a root the server sent; Go does
// not say which, but it checks the leaf's name before building chains, so a certificate valid for
// serverName is taken as the leaf (a self-signed CA carrying the server's name would read as 18).
// Otherwise 20; OpenSSL's 2 (a trusted anchor's own issuer missing) cannot occur: Go accepts
// any RootCAs certificate as an anchor.
func unknownAuthorityOutcome(e x509.UnknownAuthorityError, text, serverName string) outcome {
	hint := reflect.ValueOf(e).FieldByName("hintErr")
	if hint.IsValid() && hint.Kind() == reflect.Interface && !hint.IsNil() {
		switch hint.Elem().Type() {
		case reflect.TypeOf(x509.InsecureAlgorithmError(0)):
			return outcome{stageHandshake, x509CAMDTooWeak, text, "issuer found; its signature uses an algorithm Go refuses"}
		case reflect.TypeOf(x509.ConstraintViolationError{}):
			return outcome{stageHandshake, x509InvalidCA, text, "issuer found; CheckSignatureFrom refused it (not a CA, or no keyCertSign)"}
		}
		return outcome{stageHandshake, x509SignatureFailure, text, "a candidate issuer (matched by name) did not verify the signature"}
	}
	if c := e.Cert; c != nil && bytes.Equal(c.RawIssuer, c.RawSubject) &&
		c.CheckSignature(c.SignatureAlgorithm, c.RawTBSCertificate, c.Signature) == nil {
		if c.VerifyHostname(serverName) == nil {
			return outcome{stageHandshake, x509DepthZeroSelf, text, "the leaf is self-signed (told by the adapter)"}
		}
		return outcome{stageHandshake, x509SelfSignedInChain, text, "a self-signed certificate above the leaf (told by the adapter)"}
	}
	return outcome{stageHandshake, x509UnableLocalIssuer, text, ""}
}

// readOutcome: errors after the handshake, while reading (or holding). rawEOF says whether the
// socket itself reported end-of-stream: crypto/tls turns a FIN at a record boundary into io.EOF,
// the same value it returns for close_notify.
func readOutcome(stage int, err error, rawEOF bool) outcome {
	text := err.Error()
	if err == io.EOF {
		if rawEOF {
			return outcome{stage, peerClosed, text, "FIN without close_notify (io.EOF from crypto/tls; the socket saw the FIN)"}
		}
		return outcome{stage, earlyNotify, text, "close_notify before the response ended"}
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return outcome{stage, peerClosed, text, "peer closed the connection without close_notify"}
	}
	return streamOutcome(stage, err, "no OpenSSL counterpart")
}

func writeOutcome(err error) outcome { return streamOutcome(stageWrite, err, "no errno") }

// streamOutcome: an error on the established connection, writing or reading, that is not an end of
// the stream: the deadline, a TLS alert or record error, an errno, else unmapped (with `unmapped`).
// An end of stream is never a timeout, so readOutcome may look for it first.
func streamOutcome(stage int, err error, unmapped string) outcome {
	text := err.Error()
	if isTimeout(err) {
		return outcome{stageDeadline, int64(stage), text, "deadline during " + stageNames[stage]}
	}
	if o, ok := tlsOutcome(stage, err); ok {
		return o
	}
	if en, ok := errnoOf(err); ok {
		return outcome{stage, int64(en), text, ""}
	}
	return outcome{stage, unmappedGoErr, text, unmapped}
}

func connectOutcome(err error) outcome {
	text := err.Error()
	if isTimeout(err) || errors.Is(err, context.DeadlineExceeded) {
		return outcome{stageDeadline, stageConnect, text, "deadline during connect"}
	}
	var se *os.SyscallError
	if errors.As(err, &se) && se.Syscall == "socket" { // no descriptor to be had: as tlsnb's setup/3
		return outcome{stageSetup, setupSocket, text, "socket() failed"}
	}
	if en, ok := errnoOf(err); ok {
		if en == syscall.ECONNRESET || en == syscall.EPIPE {
			// The peer accepted and reset before Go read SO_ERROR: net.Dial reports it, but the
			// TCP connection existed, so it is the peer closing before the handshake (as tlsnb).
			return outcome{stageHandshake, peerClosed, text, "reset reported by the dial: peer closed before the handshake"}
		}
		return outcome{stageConnect, int64(en), text, ""}
	}
	return outcome{stageConnect, unmappedGoErr, text, "no errno"}
}
