package main

// The lab's command line (clients/README.md), parsed by hand: Go's flag package takes -x and --x
// alike and prints its usage on an error; the contract wants --x and one stderr line.

import (
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"net"
	"strconv"
	"strings"
)

type options struct {
	target, name, connectIP, cafile string
	port                            int
	verify, systemTrust, resume     bool
	verifyName                      bool // false: --no-verify-name (the chain verified, no name matched)
	json                            bool
	count, parallel, requests       int64
	body, deadlineMs, holdMs        int64
	seed                            uint64
	tlsMax                          uint16
	sigpipe                         string   // "", "default" or "ignore"
	certFile, keyFile               string   // --cert, --key: a client certificate for a server that asks
	pins                            [][]byte // --pin-sha256: SPKI SHA-256, one must match the verified chain
}

// usageError: exit 2. unsupportedError: exit 89 (an optional flag of the contract this client lacks).
type usageError struct{ msg string }
type unsupportedError struct{ msg string }

func (e usageError) Error() string       { return e.msg }
func (e unsupportedError) Error() string { return e.msg }

// The contract's optional flags this client does not have, with whether each takes a value and why not.
var unsupported = map[string]struct {
	value bool
	why   string
}{
	"--transport":      {true, "Go's crypto/tls has no BIO/fd transport choice: it always drives the net.Conn itself"},
	"--verify-depth":   {true, "crypto/x509 has no maximum chain depth setting"},
	"--ns":             {true, "no in-loop resolver: this client dials literals only"},
	"--dns-udp":        {false, "no in-loop resolver: this client dials literals only"},
	"--dns-timeout-ms": {true, "no in-loop resolver: this client dials literals only"},
	"--allow-private":  {false, "no in-loop resolver: this client dials literals only"},
	"--crl":            {true, "not built: crypto/tls checks no revocation (x509.RevocationList is parsed, never consulted by Verify)"},
	"--crl-all":        {false, "not built: crypto/tls checks no revocation"},
	"--ocsp-staple":    {true, "not built: crypto/tls hands over the staple (ConnectionState.OCSPResponse) but the standard library cannot parse OCSP"},
}

// flagSpec: one of the contract's flags this client has, as tlsnb's flag table says it
// (client/flag_table.h): whether it takes a value, and how it fills the options.
type flagSpec struct {
	takesValue bool
	apply      func(flag, v string) error
}

// text: a string field; the value must not be empty.
func text(field *string) flagSpec {
	return flagSpec{true, func(flag, v string) error {
		if v == "" {
			return usageError{flag + ": expects a non-empty value"}
		}
		*field = v
		return nil
	}}
}

// toggle: a flag without a value that sets a switch to `to`.
func toggle(field *bool, to bool) flagSpec {
	return flagSpec{false, func(string, string) error {
		*field = to
		return nil
	}}
}

// number: a whole number in lo..hi.
func number(field *int64, lo, hi int64) flagSpec {
	return flagSpec{true, func(flag, v string) (err error) {
		*field, err = parseInt(flag, v, lo, hi)
		return err
	}}
}

// flags: every flag this client has, each bound to the field of o it fills.
func (o *options) flags() map[string]flagSpec {
	return map[string]flagSpec{
		"--name":           text(&o.name),
		"--cafile":         text(&o.cafile),
		"--cert":           text(&o.certFile),
		"--key":            text(&o.keyFile),
		"--connect":        {true, o.setConnect},
		"--pin-sha256":     {true, o.addPin},
		"--no-verify":      toggle(&o.verify, false),
		"--no-verify-name": toggle(&o.verifyName, false),
		"--json":           toggle(&o.json, true),
		"--resume":         toggle(&o.resume, true),
		"--system-trust":   toggle(&o.systemTrust, true),
		// Accepted, changes nothing: crypto/x509 takes every RootCAs certificate as an anchor,
		// self-signed or not, so Go always verifies as X509_V_FLAG_PARTIAL_CHAIN does.
		"--partial-chain": {false, func(string, string) error { return nil }},
		"--count":         number(&o.count, 1, 100000000),
		"--parallel":      number(&o.parallel, 1, 65536),
		"--requests":      number(&o.requests, 0, 1000000),
		"--body":          number(&o.body, 0, 1<<30),
		"--deadline-ms":   number(&o.deadlineMs, 1, 86400000),
		"--hold-ms":       number(&o.holdMs, 0, 86400000),
		"--seed":          {true, o.setSeed},
		"--tls-max":       {true, o.setTLSMax},
		"--sigpipe":       {true, o.setSigpipe},
	}
}

// isIPv4 accepts a dotted quad only (what inet_pton(AF_INET) takes; Go rejects leading zeros too).
func isIPv4(s string) bool {
	ip := net.ParseIP(s)
	return ip != nil && ip.To4() != nil && !strings.Contains(s, ":")
}

func parseInt(flag, v string, lo, hi int64) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < lo || n > hi {
		return 0, usageError{fmt.Sprintf("%s: expects an integer in %d..%d, got '%s'", flag, lo, hi, v)}
	}
	return n, nil
}

func parseOptions(args []string) (*options, bool, error) {
	o := &options{verify: true, verifyName: true, count: 1, parallel: 64, requests: 1, seed: 1, deadlineMs: 2000, tlsMax: tls.VersionTLS13}
	known := o.flags()
	var positional []string
	var lacking error
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--help" || arg == "-h" {
			return nil, true, nil
		}
		if len(arg) < 2 || arg[0] != '-' {
			positional = append(positional, arg)
			continue
		}
		flag, value, inline := arg, "", false
		if strings.HasPrefix(arg, "--") {
			if eq := strings.IndexByte(arg, '='); eq >= 0 {
				flag, value, inline = arg[:eq], arg[eq+1:], true
			}
		}
		spec, has := known[flag]
		takesValue := spec.takesValue
		if u, ok := unsupported[flag]; ok {
			takesValue = u.value
			if lacking == nil {
				lacking = unsupportedError{fmt.Sprintf("%s is not supported: %s", flag, u.why)}
			}
		} else if !has {
			return nil, false, usageError{fmt.Sprintf("unknown flag '%s' (see --help)", flag)}
		}
		if takesValue && !inline {
			if i+1 >= len(args) {
				return nil, false, usageError{flag + ": missing value"}
			}
			i++
			value = args[i]
		} else if !takesValue && inline {
			return nil, false, usageError{flag + ": takes no value"}
		}
		if has {
			if err := spec.apply(flag, value); err != nil {
				return nil, false, err
			}
		}
	}
	if len(positional) != 1 {
		if len(positional) == 0 {
			return nil, false, usageError{"missing TARGET:PORT"}
		}
		return nil, false, usageError{fmt.Sprintf("one TARGET:PORT expected, got '%s'", positional[1])}
	}
	t := positional[0]
	colon := strings.LastIndexByte(t, ':')
	port, perr := int64(0), error(nil)
	if colon > 0 {
		port, perr = parseInt("port", t[colon+1:], 1, 65535)
	}
	if colon <= 0 || perr != nil {
		return nil, false, usageError{fmt.Sprintf("TARGET:PORT: expected HOST:PORT with a port in 1..65535, got '%s'", t)}
	}
	o.target, o.port = t[:colon], int(port)
	if o.name == "" {
		o.name = o.target
	}
	if lacking != nil { // e.g. --ns, which would have made a name TARGET usable
		return o, false, lacking
	}
	if (o.certFile == "") != (o.keyFile == "") {
		return nil, false, usageError{"--cert and --key go together"}
	}
	if !o.verify && !o.verifyName {
		return nil, false, usageError{"--no-verify-name and --no-verify exclude each other (the first still verifies the chain; drop one)"}
	}
	if !o.verify && len(o.pins) > 0 {
		return nil, false, usageError{"--pin-sha256 needs verification: pins never replace it (drop --no-verify)"}
	}
	if !isIPv4(o.target) && o.connectIP == "" {
		return nil, false, usageError{fmt.Sprintf("TARGET '%s' is a name: give --connect IP (tlsnb-go never resolves a name)", o.target)}
	}
	return o, false, nil
}

func (o *options) setConnect(flag, v string) error {
	if !isIPv4(v) {
		return usageError{fmt.Sprintf("--connect: expects an IPv4 literal, got '%s'", v)}
	}
	o.connectIP = v
	return nil
}

func (o *options) addPin(flag, v string) error {
	pin, err := base64.StdEncoding.DecodeString(v)
	if err != nil || len(pin) != 32 {
		return usageError{fmt.Sprintf("--pin-sha256: expects the base64 of 32 bytes (RFC 7469), got '%s'", v)}
	}
	o.pins = append(o.pins, pin)
	return nil
}

func (o *options) setSeed(flag, v string) error {
	s, err := parseInt(flag, v, 0, 4294967295)
	o.seed = uint64(s)
	return err
}

func (o *options) setTLSMax(flag, v string) error {
	switch v {
	case "1.2":
		o.tlsMax = tls.VersionTLS12
	case "1.3":
		o.tlsMax = tls.VersionTLS13
	default:
		return usageError{fmt.Sprintf("--tls-max: expects 1.2 or 1.3, got '%s'", v)}
	}
	return nil
}

func (o *options) setSigpipe(flag, v string) error {
	if v != "default" && v != "ignore" {
		return usageError{fmt.Sprintf("--sigpipe: expects default or ignore, got '%s'", v)}
	}
	o.sigpipe = v
	return nil
}

const usageText = `usage: tlsnb-go [options] TARGET:PORT

A client under test for tlslab: Go 1.19 crypto/tls, one goroutine per attempt over Go's
netpoller, HTTP/1.1 written and read by hand. TARGET is an IPv4 literal or a name (a name
needs --connect; nothing is ever resolved).

  --name NAME           name the certificate must carry; SNI (default TARGET; none for an IP)
  --connect IP          dial this IPv4 address; TARGET is then only the name
  --cafile PATH         trust anchors (PEM): tls.Config.RootCAs; without it the system pool
  --system-trust        also trust the system pool (x509.SystemCertPool) beside --cafile
  --no-verify           InsecureSkipVerify (controls only)
  --no-verify-name      InsecureSkipVerify turns crypto/tls's own check off and VerifyConnection runs
                        x509 Verify without DNSName: the chain verified as ever, no name matched
  --partial-chain       accepted, changes nothing: crypto/x509 always ends a chain at any
                        RootCAs certificate (X509_V_FLAG_PARTIAL_CHAIN is its only mode)
  --tls-max 1.2|1.3     tls.Config.MaxVersion (MinVersion is always TLS 1.2)
  --sigpipe default|ignore
                        default: Go's runtime handler (EPIPE on sockets, never a death);
                        ignore: signal.Ignore(SIGPIPE)
  --count N             attempts in total (default 1)
  --parallel N          attempts in flight (default 64)
  --requests K          HTTP/1.1 requests per connection, keep-alive (default 1; 0: handshake only)
  --body BYTES          POST body size (0: GET); byte i is (i * 131 + seed) % 251
  --seed N              seed of the body pattern (default 1)
  --deadline-ms MS      per attempt, from its start to its last response (default 2000)
  --resume              share one tls.NewLRUClientSessionCache between attempts
  --hold-ms MS          hold each connection open this long after the handshake (reading)
  --json                one JSON object per attempt, then one summary object
  --help                this text

  --cert FILE --key FILE
                        a client certificate (tls.Config.Certificates); crypto/tls sends it only
                        when the request's CA names admit it (or name none); a key that does not
                        match: exit 2
  --pin-sha256 BASE64   RFC 7469 pin (repeatable): VerifyPeerCertificate wants one certificate of a
                        verified chain to match (handshake/50 otherwise)
Not supported (exit 89): --crl, --crl-all, --ocsp-staple, --transport, --verify-depth, --ns, --dns-udp, --dns-timeout-ms,
--allow-private.

Outcomes (stage/detail): ok/0; connect/errno; handshake/X509_V_ERR_* or packed OpenSSL code,
-1 peer closed without an alert, -100 a Go error with no OpenSSL counterpart; write/errno;
read/errno, -1 closed without close_notify, -2 chunked, -3 malformed, 0 close_notify early;
deadline/stage interrupted. Exit: 0 all ok, 1 any failed, 2 bad usage, 89 unsupported.
`
