package main

// Output: one JSON line per attempt and a summary (field names as tlsnb's), or words without --json.

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"unicode/utf8"
)

type report struct {
	json              bool
	out               *bufio.Writer
	count, ok, failed int64
	resumed           int64
	byOutcome         map[string]int64
	texts             map[string]string
}

type summaryCounts struct{ failed int64 }

func newReport(json bool) *report {
	return &report{json: json, out: bufio.NewWriterSize(os.Stdout, 64*1024),
		byOutcome: map[string]int64{}, texts: map[string]string{}}
}

func jsonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\ufffd`) // the text is not UTF-8: keep the line valid JSON
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r < 0x20:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	b.WriteByte('"')
	return b.String()
}

type jsonLine struct{ b strings.Builder }

func newLine(kind string) *jsonLine {
	l := &jsonLine{}
	l.b.WriteString(`{"type":"` + kind + `"`)
	return l
}
func (l *jsonLine) raw(k, v string) *jsonLine {
	l.b.WriteString(`,"` + k + `":` + v)
	return l
}
func (l *jsonLine) num(k string, v int64) *jsonLine { return l.raw(k, strconv.FormatInt(v, 10)) }
func (l *jsonLine) real(k string, v float64) *jsonLine {
	return l.raw(k, strconv.FormatFloat(v, 'f', 3, 64))
}
func (l *jsonLine) str(k, v string) *jsonLine { return l.raw(k, jsonString(v)) }
func (l *jsonLine) boolean(k string, v bool) *jsonLine {
	return l.raw(k, strconv.FormatBool(v))
}
func (l *jsonLine) done() string { return l.b.String() + "}\n" }

func (r *report) attempt(a result) {
	r.count++
	if a.out.stage == stageOK {
		r.ok++
	} else {
		r.failed++
	}
	if a.resumed {
		r.resumed++
	}
	key := a.out.key()
	r.byOutcome[key]++
	if _, seen := r.texts[key]; !seen {
		r.texts[key] = a.out.text
	}
	if !r.json {
		return
	}
	r.out.WriteString(newLine("attempt").
		num("conn", a.conn).
		num("slot", int64(a.slot)).
		str("stage", stageNames[a.out.stage]).
		num("stage_code", int64(a.out.stage)).
		num("detail", a.out.detail).
		str("detail_text", a.out.text).
		num("verify_depth", -1). // crypto/x509 does not say at which depth a chain failed
		str("addr", a.addr).
		real("ms", a.ms).
		boolean("resumed", a.resumed).
		str("tls_version", a.version).
		str("cipher", a.cipher).
		num("http_status", int64(a.httpStatus)).
		num("requests_done", a.requestsDone).
		str("note", a.out.note).
		done())
}

type processFigures struct {
	cpuMs                       float64
	threads, rssKib, rssPeakKib int64
}

func readProcessFigures() processFigures {
	var f processFigures
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		f.cpuMs = float64(ru.Utime.Sec+ru.Stime.Sec)*1000 + float64(ru.Utime.Usec+ru.Stime.Usec)/1000
	}
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return f
	}
	for _, line := range strings.Split(string(status), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		n, _ := strconv.ParseInt(fields[1], 10, 64)
		switch fields[0] {
		case "Threads:":
			f.threads = n
		case "VmRSS:":
			f.rssKib = n
		case "VmHWM:":
			f.rssPeakKib = n
		}
	}
	return f
}

func (r *report) summary(wallMs float64, peakFds, peakSockets int64) summaryCounts {
	f := readProcessFigures()
	perConn := 0.0
	if r.count > 0 {
		perConn = f.cpuMs / float64(r.count)
	}
	keys := make([]string, 0, len(r.byOutcome))
	for k := range r.byOutcome {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if !r.json {
		for _, k := range keys {
			fmt.Fprintf(r.out, "%-16s %8d  %s\n", k, r.byOutcome[k], r.texts[k])
		}
		fmt.Fprintf(r.out, "count=%d ok=%d failed=%d resumed=%d wall_ms=%.1f cpu_ms=%.1f cpu_ms_per_conn=%.3f "+
			"threads=%d peak_fds=%d rss_kib=%d\n", r.count, r.ok, r.failed, r.resumed, wallMs, f.cpuMs, perConn,
			f.threads, peakFds, f.rssKib)
	} else {
		outcomes := make([]string, 0, len(keys))
		for _, k := range keys {
			outcomes = append(outcomes, jsonString(k)+":"+strconv.FormatInt(r.byOutcome[k], 10))
		}
		heap := liveHeap()
		r.out.WriteString(newLine("summary").
			num("count", r.count).
			num("ok", r.ok).
			num("failed", r.failed).
			raw("by_outcome", "{"+strings.Join(outcomes, ",")+"}").
			real("wall_ms", wallMs).
			real("cpu_ms", f.cpuMs).
			real("cpu_ms_per_conn", perConn).
			num("threads", f.threads).
			num("peak_fds", peakFds).
			num("rss_kib", f.rssKib).
			num("rss_peak_kib", f.rssPeakKib).
			num("resumed", r.resumed).
			num("peak_sockets", peakSockets).
			num("gomaxprocs", int64(runtime.GOMAXPROCS(0))).
			str("go_version", runtime.Version()).
			num("heap_live_objects", int64(heap.HeapObjects)).
			num("heap_live_bytes", int64(heap.HeapAlloc)).
			num("goroutines", int64(runtime.NumGoroutine())).
			done())
	}
	r.out.Flush()
	return summaryCounts{failed: r.failed}
}

// liveHeap is Go's own count of what is still reachable at exit (the heap shim cannot see a
// static Go program's heap): two collections, so that finalizers queued by the first have run
// and what they freed is gone too, then runtime.MemStats. The leak gate compares it after a
// short and a long run: an object kept per connection grows with the count.
func liveHeap() runtime.MemStats {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m
}
