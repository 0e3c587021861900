#!/usr/bin/env node
// tlsnb-node: the lab's client contract (clients/README.md) on Node.js's tls module: one thread's
// event loop (libuv), every attempt a tls.connect over a net.Socket the program connected itself,
// HTTP/1.1 by hand. What each flag becomes in Node, and what Node cannot be given: README.md.
'use strict';

const fs = require('fs');
const net = require('net');
const path = require('path');
const tls = require('tls');
const crypto = require('crypto');

const PROG = 'tlsnb-node';
// The help lines of the core flags every adapter words alike, written once (clients/contract/README.md).
const CORE_HELP = fs.readFileSync(path.join(__dirname, '..', 'contract', 'core_help.txt'), 'utf8');
const USAGE = `usage: tlsnb-node [options] TARGET:PORT

The lab's client contract on Node.js ${process.version} tls (OpenSSL ${process.versions.openssl}): one event loop,
many attempts in flight. TARGET is an IPv4 literal or a name (a name needs --connect).

  --name NAME           name the certificate must carry; SNI (default TARGET; no SNI for an IP)
  --connect IP          dial this IPv4 address; TARGET is then only the name
  --cafile PATH         trust anchors (PEM), tls.connect's ca; without it Node's own bundled roots
  --system-trust        also trust Node's bundled roots (tls.rootCertificates; not the system's store)
  --no-verify           do not verify the peer (rejectUnauthorized: false; controls only)
  --no-verify-name      rejectUnauthorized stays true (the chain verified), checkServerIdentity skips
                        Node's name check (tls.checkServerIdentity): no name matched, SNI still sent
  --partial-chain       allowPartialTrustChain (Node 20.18 and later; older: exit 89)
  --crl FILE            a CRL (PEM; repeatable): tls.connect's crl, which makes OpenSSL check every
                        certificate of the chain (CRL_CHECK | CRL_CHECK_ALL): Node's one mode
  --crl-all             accepted with --crl (it is Node's one mode); alone: exit 89
  --cert FILE --key FILE
                        a client certificate (chain, PEM) and its key: tls.connect's cert and key
  --pin-sha256 BASE64   a pin (repeatable): checkServerIdentity, after Node's own name check, asks
                        that a certificate of the peer's chain has this SPKI SHA-256
  --tls-max 1.2|1.3     highest protocol version offered (the lowest is always TLS 1.2)
  --transport bio       accepted: Node's TLS always runs over its own memory BIO (fd: exit 89)
  --sigpipe default|ignore
                        accepted: Node ignores SIGPIPE at start-up, both leave it so
${CORE_HELP}  --deadline-ms MS      per attempt, from its start to its last response (default 2000)
  --resume              offer a session saved by an earlier attempt of this run ('session' event)
  --hold-ms MS          hold each connection open this long after the handshake (reading)
  --json                one JSON object per attempt, then one summary object
  --help                this text

Not available here (exit 89): --verify-depth (no Node option), --transport fd, --ocsp-staple (Node
hands the raw staple to the application and verifies nothing), --ns, --dns-udp, --dns-timeout-ms,
--allow-private.
Exit: 0 every attempt ok, 1 any failed, 2 bad usage or unusable configuration, 89 a flag or value
this client cannot honour.
`;

class Usage extends Error {}
class Lacking extends Error {}

const STAGE = { ok: 0, connect: 1, handshake: 2, write: 3, read: 4, setup: 5, deadline: 102 };
const STAGE_NAME = Object.fromEntries(Object.entries(STAGE).map(([k, v]) => [v, k]));
const SHUTDOWN = -100;  // the responses are complete, close_notify going out: a failure here is still ok

// ---------------------------------------------------------------------------------------------
// The command line

function isIPv4(text) {
  const parts = text.split('.');
  return parts.length === 4 && parts.every((p) => /^[0-9]{1,3}$/.test(p) && Number(p) <= 255 &&
                                                   !(p.length > 1 && p[0] === '0'));
}

function parseCount(flag, text, lo, hi) {
  if (!/^[0-9]+$/.test(text)) throw new Usage(`${flag}: expects an integer, got '${text}'`);
  const n = Number(text);
  if (n < lo || n > hi) throw new Usage(`${flag}: expects ${lo}..${hi}, got '${text}'`);
  return n;
}

function lacking(why) {
  return (o) => { if (!o.lacked) o.lacked = why; };
}

const NODE_MAJOR_MINOR = process.versions.node.split('.').map(Number);
const HAS_PARTIAL_CHAIN = NODE_MAJOR_MINOR[0] > 20 || (NODE_MAJOR_MINOR[0] === 20 && NODE_MAJOR_MINOR[1] >= 18);

// flag -> [takes a value, apply(options, value)]
const FLAGS = {
  '--name': [true, (o, v) => { if (!v) throw new Usage('--name: expects a non-empty value'); o.name = v; }],
  '--connect': [true, (o, v) => { if (!isIPv4(v)) throw new Usage(`--connect: expects an IPv4 literal, got '${v}'`); o.connectIp = v; }],
  '--cafile': [true, (o, v) => { o.cafile = v; }],
  '--system-trust': [false, (o) => { o.systemTrust = true; }],
  '--no-verify': [false, (o) => { o.verify = false; }],
  '--no-verify-name': [false, (o) => { o.verifyName = false; }],
  '--partial-chain': [false, (o) => {
    if (HAS_PARTIAL_CHAIN) o.partialChain = true;
    else lacking(`--partial-chain: Node ${process.version} has no allowPartialTrustChain (added in 20.18)`)(o);
  }],
  '--crl': [true, (o, v) => { if (!v) throw new Usage('--crl: expects a non-empty value'); o.crls.push(v); }],
  '--crl-all': [false, (o) => { o.crlAll = true; }],
  '--cert': [true, (o, v) => { o.cert = v; }],
  '--key': [true, (o, v) => { o.key = v; }],
  '--pin-sha256': [true, (o, v) => {
    if (!/^[A-Za-z0-9+/]{43}=$/.test(v)) throw new Usage(`--pin-sha256: expects the base64 of 32 bytes (RFC 7469), got '${v}'`);
    o.pins.push(v);
  }],
  '--tls-max': [true, (o, v) => {
    if (v !== '1.2' && v !== '1.3') throw new Usage(`--tls-max: expects 1.2 or 1.3, got '${v}'`);
    o.tlsMax = v;
  }],
  '--transport': [true, (o, v) => {
    if (v !== 'bio' && v !== 'fd') throw new Usage(`--transport: expects bio or fd, got '${v}'`);
    if (v === 'fd') lacking("--transport fd: Node's TLS runs over its own memory BIO (TLSWrap), never the socket BIO")(o);
  }],
  '--sigpipe': [true, (o, v) => {
    if (v !== 'default' && v !== 'ignore') throw new Usage(`--sigpipe: expects default or ignore, got '${v}'`);
  }],
  '--count': [true, (o, v) => { o.count = parseCount('--count', v, 1, 100000000); }],
  '--parallel': [true, (o, v) => { o.parallel = parseCount('--parallel', v, 1, 100000); }],
  '--requests': [true, (o, v) => { o.requests = parseCount('--requests', v, 0, 1000000); }],
  '--body': [true, (o, v) => { o.body = parseCount('--body', v, 0, 1 << 30); }],
  '--seed': [true, (o, v) => { o.seed = parseCount('--seed', v, 0, 4294967295); }],
  '--deadline-ms': [true, (o, v) => { o.deadlineMs = parseCount('--deadline-ms', v, 1, 86400000); }],
  '--resume': [false, (o) => { o.resume = true; }],
  '--hold-ms': [true, (o, v) => { o.holdMs = parseCount('--hold-ms', v, 0, 86400000); }],
  '--json': [false, (o) => { o.json = true; }],
  '--verify-depth': [true, lacking('--verify-depth: Node has no option for X509_VERIFY_PARAM_set_depth')],
  '--ocsp-staple': [true, (o, v) => {
    if (v !== 'off' && v !== 'check' && v !== 'require') throw new Usage(`--ocsp-staple: expects off, check or require, got '${v}'`);
    if (v !== 'off') lacking("--ocsp-staple: Node asks for a staple (requestOCSP) and hands the raw response to the application ('OCSPResponse'); it verifies nothing and has no OCSP parser, and this adapter writes none")(o);
  }],
  '--ns': [true, lacking('--ns: this client has no resolver of its own (dial with --connect)')],
  '--dns-udp': [false, lacking('--dns-udp: this client has no resolver')],
  '--dns-timeout-ms': [true, lacking('--dns-timeout-ms: this client has no resolver')],
  '--allow-private': [false, lacking('--allow-private: this client has no resolver')],
};

function parseOptions(argv) {
  const o = {
    name: '', connectIp: '', cafile: '', systemTrust: false, verify: true, verifyName: true, partialChain: false, crls: [],
    crlAll: false, cert: '', key: '', pins: [], tlsMax: '1.3', count: 1, parallel: 64, requests: 1, body: 0,
    seed: 1, deadlineMs: 2000, resume: false, holdMs: 0, json: false, lacked: '', target: '', port: 0,
  };
  const positional = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--help' || arg === '-h') return null;
    if (!arg.startsWith('--')) { positional.push(arg); continue; }
    const eq = arg.indexOf('=');
    const flag = eq > 0 ? arg.slice(0, eq) : arg;
    const spec = FLAGS[flag];
    if (!spec) throw new Usage(`unknown option '${flag}' (--help lists them)`);
    let value;
    if (spec[0]) {
      if (eq > 0) value = arg.slice(eq + 1);
      else if (i + 1 < argv.length) value = argv[++i];
      else throw new Usage(`${flag}: expects a value`);
    } else if (eq > 0) {
      throw new Usage(`${flag}: takes no value`);
    }
    spec[1](o, value);
  }
  if (positional.length !== 1) throw new Usage(positional.length ? `one TARGET:PORT expected, got ${positional.length}` : 'missing TARGET:PORT');
  const m = /^(.+):([0-9]{1,5})$/.exec(positional[0]);
  if (!m || Number(m[2]) < 1 || Number(m[2]) > 65535) throw new Usage(`TARGET:PORT expected, got '${positional[0]}'`);
  o.target = m[1];
  o.port = Number(m[2]);
  if (!o.name) o.name = o.target;
  if (!!o.cert !== !!o.key) throw new Usage('--cert and --key go together');
  if (!o.verify && !o.verifyName) throw new Usage('--no-verify-name and --no-verify exclude each other (the first still verifies the chain; drop one)');
  if (!o.verify && o.pins.length) throw new Usage('--pin-sha256 needs verification: pins never replace it (drop --no-verify)');
  if (!o.verify && (o.crls.length || o.crlAll)) throw new Usage('--crl, --crl-all and --ocsp-staple need verification (drop --no-verify)');
  if (o.crlAll && !o.crls.length && !o.lacked)
    o.lacked = "--crl-all without --crl: Node checks CRLs only when given one (its crl option sets CRL_CHECK_ALL); it has no mode that requires a CRL it was not given";
  if (o.lacked) throw new Lacking(o.lacked);
  if (!isIPv4(o.target) && !o.connectIp) throw new Usage(`TARGET '${o.target}' is a name: give --connect IP (this client never resolves a name)`);
  return o;
}

// ---------------------------------------------------------------------------------------------
// OpenSSL's numbers, read from its headers (the X509_V_ERR_* Node's codes name, SSL_R_* reasons)

function readDefines(path, prefix) {
  const table = new Map();
  let text = '';
  try { text = fs.readFileSync(path, 'latin1'); } catch (e) { return table; }
  const re = new RegExp(`#\\s*define\\s+${prefix}(\\w+)\\s+(\\d+)\\b`, 'g');
  for (const m of text.matchAll(re)) table.set(m[1], Number(m[2]));
  return table;
}

const X509_CODES = readDefines('/usr/include/openssl/x509_vfy.h', 'X509_V_ERR_');
const SSL_REASONS = readDefines('/usr/include/openssl/sslerr.h', 'SSL_R_');
const ERR_LIB_SSL = 20;
const X509_V_ERR_HOSTNAME_MISMATCH = 62;
const X509_V_ERR_IP_ADDRESS_MISMATCH = 64;
const X509_V_ERR_APPLICATION_VERIFICATION = 50;

function packedSsl(reason) {
  const code = SSL_REASONS.get(reason);
  return code === undefined ? undefined : ERR_LIB_SSL * (1 << 23) + code;
}

function errText(e) {
  const code = e && e.code ? `${e.code}: ` : '';
  return code + (e && e.message ? e.message : String(e));
}

// A Node error met in `stage` -> [stage, detail]: the library's words stay in detail_text.
function classify(stage, e, nameIsIp) {
  const code = (e && e.code) || '';
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') return [STAGE.handshake, nameIsIp ? X509_V_ERR_IP_ADDRESS_MISMATCH : X509_V_ERR_HOSTNAME_MISMATCH];
  if (code === 'ERR_TLSLAB_PIN') return [STAGE.handshake, X509_V_ERR_APPLICATION_VERIFICATION];
  if (X509_CODES.has(code) && stage === STAGE.handshake) return [stage, X509_CODES.get(code)];
  if (code.startsWith('ERR_SSL_')) {
    const reason = code.slice('ERR_SSL_'.length);
    if (reason === 'UNEXPECTED_EOF_WHILE_READING') return [stage, -1];
    const packed = packedSsl(reason);
    if (packed !== undefined) return [stage, packed];
  }
  const errno = typeof e.errno === 'number' ? Math.abs(e.errno) : undefined;
  if (stage === STAGE.connect && (code === 'ECONNRESET' || code === 'EPIPE')) stage = STAGE.handshake;  // a reset needs an established connection
  if (stage === STAGE.handshake && (code === 'ECONNRESET' || code === 'EPIPE')) return [stage, -1];  // closed without an alert
  if (errno !== undefined) return [stage, errno];
  if (code === 'ECONNRESET') return [stage, 104];
  if (code === 'EPIPE') return [stage, 32];
  return [stage, -100];
}

// ---------------------------------------------------------------------------------------------
// Trust, identity and revocation: read once, handed to every tls.connect

function readPem(flag, path, marker) {
  let data;
  try {
    const st = fs.statSync(path);
    if (!st.isFile()) throw new Usage(`${flag}: '${path}' is not a regular file`);
    if (st.size === 0) throw new Usage(`${flag}: '${path}' is empty`);
    data = fs.readFileSync(path, 'latin1');
  } catch (e) {
    if (e instanceof Usage) throw e;
    throw new Usage(`${flag}: cannot read '${path}': ${e.code || e.message}`);
  }
  if (marker && !data.includes(marker)) return null;
  return data;
}

// tls.createSecureContext loads a key of another type than the certificate's without a word
// (OpenSSL files it in another slot; Node never calls SSL_CTX_check_private_key): the pair is
// checked with Node's own X509Certificate.checkPrivateKey, tlsnb's words for each refusal.
function checkIdentity(o, certPem, keyPem) {
  let cert;
  let key;
  try { cert = new crypto.X509Certificate(certPem); } catch (e) {
    throw new Usage(`--cert: no PEM certificate could be loaded from '${o.cert}'`);
  }
  try { key = crypto.createPrivateKey(keyPem); } catch (e) {
    throw new Usage(`--key: no PEM private key could be loaded from '${o.key}' (${errText(e)})`);
  }
  if (!cert.checkPrivateKey(key)) throw new Usage(`--key: '${o.key}' does not match the certificate of --cert '${o.cert}'`);
}

function tlsOptions(o) {
  const base = {
    minVersion: 'TLSv1.2', maxVersion: o.tlsMax === '1.2' ? 'TLSv1.2' : 'TLSv1.3', rejectUnauthorized: o.verify,
  };
  if (o.verify) {
    const cas = [];
    if (o.cafile) {
      const pem = readPem('--cafile', o.cafile, '-----BEGIN CERTIFICATE-----');
      if (pem === null) throw new Usage(`--cafile: no PEM certificate in '${o.cafile}'`);
      // SecureContext::AddCACert drops a block that does not parse without a word (the attempt then
      // fails closed, handshake/21): each block is parsed here, so the file is refused as tlsnb's is.
      for (const block of pem.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) || []) {
        try { new crypto.X509Certificate(block); } catch (e) {
          throw new Usage(`--cafile: '${o.cafile}' holds a certificate that does not decode (${errText(e)})`);
        }
      }
      cas.push(pem);
    }
    if (o.cafile && o.systemTrust) cas.push(...tls.rootCertificates);
    if (cas.length) base.ca = cas;
    if (o.partialChain) base.allowPartialTrustChain = true;
    if (o.crls.length) {
      // One string a CRL: Node's crl option reads one CRL from each (SecureContext::AddCRL), so a file
      // that holds several, as OpenSSL's X509_load_crl_file reads them, is split (pkits/: 4.1.1's two CRLs)
      base.crl = o.crls.flatMap((path) => {
        const pem = readPem('--crl', path, '-----BEGIN X509 CRL-----');
        if (pem === null || pem.includes('-----BEGIN CERTIFICATE-----')) throw new Usage(`--crl: no PEM CRL could be loaded from '${path}'`);
        return pem.match(/-----BEGIN X509 CRL-----[\s\S]*?-----END X509 CRL-----\s*/g);
      });
    }
  }
  if (o.cert) {
    base.cert = readPem('--cert', o.cert, '');
    base.key = readPem('--key', o.key, '');
    checkIdentity(o, base.cert, base.key);
  }
  // Build it once: a file Node (OpenSSL) cannot use is the user's to fix, one line.
  try {
    base.secureContext = tls.createSecureContext(base);
  } catch (e) {
    const code = (e && e.code) || '';
    if (code.includes('KEY_VALUES_MISMATCH')) throw new Usage(`--key: '${o.key}' does not match the certificate of --cert '${o.cert}'`);
    if (o.cert && /key|PEM|DECODER/i.test(code + e.message) && !/CRL/i.test(code + e.message))
      throw new Usage(`--key: no PEM private key could be loaded from '${o.key}' (${errText(e)})`);
    if (o.crls.length && /CRL/i.test(code + e.message))
      throw new Usage(`--crl: no PEM CRL could be loaded from '${o.crls.join("', '")}' (${errText(e)})`);
    throw new Usage(`the TLS context could not be made: ${errText(e)}`);
  }
  return base;
}

// ---------------------------------------------------------------------------------------------
// checkServerIdentity, called by Node only after the chain verified: Node's own name check (none with
// --no-verify-name), then the pins, SPKI SHA-256 of any certificate of the peer's chain (Node's
// issuerCertificate links)

function identityCheck(o) {
  const wanted = new Set(o.pins);
  return (host, cert) => {
    const err = o.verifyName ? tls.checkServerIdentity(host, cert) : undefined;
    if (err || !wanted.size) return err;
    const seen = new Set();
    for (let c = cert; c && c.raw && !seen.has(c.fingerprint256); c = c.issuerCertificate) {
      seen.add(c.fingerprint256);
      const spki = new crypto.X509Certificate(c.raw).publicKey.export({ type: 'spki', format: 'der' });
      if (wanted.has(crypto.createHash('sha256').update(spki).digest('base64'))) return undefined;
    }
    const e = new Error('no certificate of the chain matches a --pin-sha256');
    e.code = 'ERR_TLSLAB_PIN';
    return e;
  };
}

// ---------------------------------------------------------------------------------------------
// HTTP/1.1 by Content-Length (the rules of tlsnb's client/http_response.cc)

const MAX_LINE = 8192;

function makeRequest(o) {
  let head = `${o.body > 0 ? 'POST' : 'GET'} / HTTP/1.1\r\nHost: ${o.name}\r\nConnection: keep-alive\r\n`;
  if (o.body > 0) head += `Content-Type: application/octet-stream\r\nContent-Length: ${o.body}\r\n`;
  head += '\r\n';
  const h = Buffer.from(head, 'utf8');
  const out = Buffer.allocUnsafe(h.length + o.body);
  h.copy(out, 0);
  const period = Buffer.alloc(251);
  for (let i = 0; i < 251; i++) period[i] = (i * 131 + o.seed) % 251;
  for (let off = 0; off < o.body; off += 251) period.copy(out, h.length + off, 0, Math.min(251, o.body - off));
  return out;
}

class BadResponse extends Error {
  constructor(detail, text) { super(text); this.detail = detail; }
}

// Fed bytes as they come; says 'more', or 'complete' with the bytes after the response kept.
class ResponseReader {
  constructor() { this.buf = Buffer.alloc(0); this.reset(); }
  reset() { this.head = true; this.need = 0; this.status = 0; this.lines = 0; }
  feed(chunk) { this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk; }
  // -> the status when a final response is whole, else 0
  step() {
    for (;;) {
      if (this.head) {
        const nl = this.buf.indexOf('\n');
        if (nl < 0) {
          if (this.buf.length > MAX_LINE) throw new BadResponse(-3, 'a header line over 8192 bytes');
          return 0;
        }
        if (nl > MAX_LINE) throw new BadResponse(-3, 'a header line over 8192 bytes');
        let line = this.buf.subarray(0, nl).toString('latin1');
        this.buf = this.buf.subarray(nl + 1);
        if (line.endsWith('\r')) line = line.slice(0, -1);
        if (this.lines++ === 0) { this.statusLine(line); continue; }
        if (line !== '') { this.header(line); continue; }
        this.endOfHead();
        if (this.interim) { this.reset(); continue; }
      }
      if (this.buf.length < this.need) return 0;
      this.buf = this.buf.subarray(this.need);
      const status = this.status;
      this.reset();
      return status;
    }
  }
  statusLine(line) {
    if (!/^HTTP\/1\.[0-9] [0-9]{3}( |$)/.test(line)) throw new BadResponse(-3, 'bad status line');
    this.status = Number(line.slice(9, 12));
    this.length = -1;
    this.encodings = [];
  }
  header(line) {
    const colon = line.indexOf(':');
    if (colon < 0) throw new BadResponse(-3, 'header without a colon');
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (name === 'transfer-encoding') this.encodings.push(value);
    if (name === 'content-length') {
      if (!/^[+-]?[0-9]+$/.test(value) || Number(value) < 0 || (this.length >= 0 && Number(value) !== this.length))
        throw new BadResponse(-3, 'bad Content-Length');
      this.length = Number(value);
    }
  }
  endOfHead() {
    this.interim = this.status >= 100 && this.status < 200;
    if (this.encodings.length && this.length >= 0) throw new BadResponse(-3, 'both Transfer-Encoding and Content-Length');
    if (this.encodings.length && this.encodings.join(', ').toLowerCase() !== 'identity')
      throw new BadResponse(-2, `Transfer-Encoding: ${this.encodings.join(', ')} is not supported`);
    if (this.length < 0) {
      if (this.interim || this.status === 204 || this.status === 304) this.length = 0;
      else throw new BadResponse(-3, 'no Content-Length');
    }
    this.head = false;
    this.need = this.length;
  }
}

// ---------------------------------------------------------------------------------------------
// Process figures

function countFds() {
  try { return fs.readdirSync('/proc/self/fd').length - 1; } catch (e) { return -1; }
}

function procStatus() {
  const out = { threads: 0, rss_kib: 0, rss_peak_kib: 0 };
  try {
    for (const line of fs.readFileSync('/proc/self/status', 'latin1').split('\n')) {
      const [key, rest] = line.split(':');
      if (key === 'Threads') out.threads = parseInt(rest, 10);
      else if (key === 'VmRSS') out.rss_kib = parseInt(rest, 10);
      else if (key === 'VmHWM') out.rss_peak_kib = parseInt(rest, 10);
    }
  } catch (e) { /* figures stay 0 */ }
  return out;
}

// ---------------------------------------------------------------------------------------------
// One attempt

class Run {
  constructor(o, base) {
    this.o = o;
    this.base = base;
    this.request = makeRequest(o);
    this.dialIp = o.connectIp || o.target;
    this.nameIsIp = isIPv4(o.name);
    this.checkIdentity = o.pins.length || !o.verifyName ? identityCheck(o) : undefined;
    this.next = 0;
    this.byOutcome = {};
    this.texts = {};
    this.ok = 0;
    this.failed = 0;
    this.resumed = 0;
    this.peakFds = 0;
    this.openSockets = 0;
    this.peakSockets = 0;
    this.sessions = [];
  }

  sampleFds() { this.peakFds = Math.max(this.peakFds, countFds()); }

  report(conn, slot, stage, detail, text, info) {
    const key = `${STAGE_NAME[stage]}/${detail}`;
    this.byOutcome[key] = (this.byOutcome[key] || 0) + 1;
    if (!(key in this.texts)) this.texts[key] = text;
    if (stage === STAGE.ok) this.ok++; else this.failed++;
    if (info.resumed) this.resumed++;
    if (!this.o.json) return;
    process.stdout.write(JSON.stringify({
      type: 'attempt', conn, slot, stage: STAGE_NAME[stage], stage_code: stage, detail, detail_text: text,
      verify_depth: -1, addr: `${this.dialIp}:${this.o.port}`, ms: Math.round(info.ms * 1000) / 1000,
      resumed: info.resumed, tls_version: info.tlsVersion, cipher: info.cipher, http_status: info.httpStatus,
      requests_done: info.requestsDone,
    }) + '\n');
  }

  attempt(conn, slot) {
    return new Promise((resolve) => {
      const o = this.o;
      const info = { ms: 0, resumed: false, tlsVersion: '', cipher: '', httpStatus: 0, requestsDone: 0 };
      const started = process.hrtime.bigint();
      let stage = STAGE.connect;
      let done = false;
      let tcp = null;
      let sock = null;
      let holdTimer = null;
      const reader = new ResponseReader();
      let writing = false;

      const finish = (st, detail, text) => {
        if (done) return;
        done = true;
        clearTimeout(deadline);
        clearTimeout(holdTimer);
        info.ms = Number(process.hrtime.bigint() - started) / 1e6;
        this.report(conn, slot, st, detail, text, info);
        // The slot's next attempt starts once this socket is closed, as tlsnb's: never more
        // sockets than slots. close_notify and FIN first when the attempt is ok, best effort:
        // the peer's close_notify is not awaited (destroy once ours is flushed, or 200 ms on).
        const s = sock || tcp;
        const raw = tcp;
        const closed = () => { this.openSockets--; resolve(); };
        if (!raw || raw.destroyed) return raw ? closed() : resolve();
        raw.once('close', closed);
        if (st === STAGE.ok && !s.destroyed) {
          s.end(() => s.destroy());
          setTimeout(() => s.destroy(), 200).unref();
        } else {
          s.destroy();
        }
      };
      const fail = (e) => {
        if (done) return;
        if (stage === SHUTDOWN) return finish(STAGE.ok, 0, `ok (${errText(e)} while closing)`);
        if (e instanceof BadResponse) return finish(STAGE.read, e.detail, e.message);
        const [st, detail] = classify(stage, e, this.nameIsIp);
        finish(st, detail, errText(e));
      };
      const deadline = setTimeout(() => {
        if (stage === SHUTDOWN) finish(STAGE.ok, 0, 'ok (close_notify not flushed before the deadline)');
        else finish(STAGE.deadline, stage, `deadline during ${STAGE_NAME[stage]}`);
      }, o.deadlineMs);

      const sendNext = () => {
        if (info.requestsDone >= o.requests) {
          stage = SHUTDOWN;
          return finish(STAGE.ok, 0, 'ok');
        }
        stage = STAGE.write;
        writing = true;
        sock.write(this.request, (err) => {
          if (err || done) return;
          writing = false;
          stage = STAGE.read;
          readResponse();
        });
      };
      const readResponse = () => {
        if (writing || done) return;
        let status;
        try { status = reader.step(); } catch (e) { return fail(e); }
        if (!status) return;
        info.httpStatus = status;
        info.requestsDone++;
        sendNext();
      };
      const onEnd = () => {
        if (done || stage === SHUTDOWN) return;
        // 'end' comes for a close_notify and for a bare FIN alike when OpenSSL reports no error
        finish(stage === STAGE.handshake ? STAGE.handshake : stage, -1,
               `the peer closed the connection ('end') during ${STAGE_NAME[stage]}`);
      };

      try {
        tcp = net.connect({ host: this.dialIp, port: o.port, family: 4 });
      } catch (e) {
        return finish(STAGE.setup, 3, `socket: ${errText(e)}`);
      }
      this.openSockets++;
      this.peakSockets = Math.max(this.peakSockets, this.openSockets);
      tcp.on('error', fail);
      tcp.once('connect', () => {
        if (done) return;
        this.sampleFds();
        stage = STAGE.handshake;
        const opts = Object.assign({}, this.base, { socket: tcp });
        if (!this.nameIsIp) opts.servername = o.name;
        if (this.checkIdentity) opts.checkServerIdentity = this.checkIdentity;
        opts.host = o.name;  // what checkServerIdentity checks: an IP literal against IP SANs only
        if (o.resume && this.sessions.length) opts.session = this.sessions.pop();
        try {
          sock = tls.connect(opts);
        } catch (e) {
          return fail(e);
        }
        sock.on('error', fail);
        sock.on('end', onEnd);
        sock.on('session', (s) => {
          if (!o.resume) return;
          this.sessions.push(s);
          if (this.sessions.length > o.parallel) this.sessions.shift();
        });
        sock.on('data', (chunk) => {
          if (stage === STAGE.write || stage === STAGE.read) {
            reader.feed(chunk);
            readResponse();
          }
        });
        sock.once('secureConnect', () => {
          if (done) return;
          info.tlsVersion = sock.getProtocol() || '';
          const c = sock.getCipher();
          info.cipher = c ? c.standardName || c.name : '';
          info.resumed = sock.isSessionReused();
          if (o.holdMs > 0) {
            stage = STAGE.read;  // holding is reading (and dropping) what arrives, as tlsnb
            holdTimer = setTimeout(sendNext, o.holdMs);
          } else {
            sendNext();
          }
        });
      });
    });
  }

  async slot(slot) {
    while (this.next < this.o.count) {
      const conn = this.next++;
      await this.attempt(conn, slot);
    }
  }

  async main() {
    this.sampleFds();
    this.baseFds = countFds();
    const started = process.hrtime.bigint();
    const slots = [];
    for (let i = 0; i < Math.min(this.o.parallel, this.o.count); i++) slots.push(this.slot(i));
    await Promise.all(slots);
    this.wallMs = Number(process.hrtime.bigint() - started) / 1e6;
  }

  summary() {
    const cpu = process.cpuUsage();
    const cpuMs = (cpu.user + cpu.system) / 1000;
    const st = procStatus();
    const count = this.ok + this.failed;
    const perConn = count ? cpuMs / count : 0;
    const round = (x) => Math.round(x * 1000) / 1000;
    if (!this.o.json) {
      for (const key of Object.keys(this.byOutcome).sort())
        process.stdout.write(`${key.padEnd(16)} ${String(this.byOutcome[key]).padStart(8)}  ${this.texts[key]}\n`);
      process.stdout.write(`count=${count} ok=${this.ok} failed=${this.failed} resumed=${this.resumed} wall_ms=${this.wallMs.toFixed(1)} ` +
                           `cpu_ms=${cpuMs.toFixed(1)} threads=${st.threads} peak_fds=${this.peakFds} rss_kib=${st.rss_kib}\n`);
      return;
    }
    const byOutcome = Object.fromEntries(Object.keys(this.byOutcome).sort().map((k) => [k, this.byOutcome[k]]));
    process.stdout.write(JSON.stringify({
      type: 'summary', count, ok: this.ok, failed: this.failed, by_outcome: byOutcome, wall_ms: round(this.wallMs),
      cpu_ms: round(cpuMs), cpu_ms_per_conn: round(perConn), threads: st.threads, peak_fds: this.peakFds,
      rss_kib: st.rss_kib, rss_peak_kib: st.rss_peak_kib, resumed: this.resumed, peak_sockets: this.peakSockets,
      base_fds: this.baseFds, fds_at_end: countFds(), node: process.version, openssl: process.versions.openssl,
    }) + '\n');
  }
}

function failLine(code, text) {
  process.stderr.write(`${PROG}: ${text}\n`);
  return code;
}

async function main(argv) {
  let o;
  try {
    o = parseOptions(argv);
  } catch (e) {
    if (e instanceof Usage) return failLine(2, e.message);
    if (e instanceof Lacking) return failLine(89, e.message);
    throw e;
  }
  if (o === null) {
    process.stdout.write(USAGE);
    return 0;
  }
  let base;
  try {
    base = tlsOptions(o);
  } catch (e) {
    if (e instanceof Usage) return failLine(2, e.message);
    throw e;
  }
  const run = new Run(o, base);
  await run.main();
  run.summary();
  return run.failed === 0 ? 0 : 1;
}

process.stdout.on('error', () => process.exit(1));  // a reader that went away: nothing left to say
main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code; },
  (e) => { process.exitCode = failLine(1, `internal error: ${errText(e)}`); });
