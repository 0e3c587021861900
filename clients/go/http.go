package main

// The HTTP/1.1 request and a response delimited by Content-Length, the same rules as
// tlsnb's client/http_response.cc: a response it cannot delimit so is an outcome, not a hang.

import (
	"strconv"
	"strings"
)

type respState int

const (
	stStatus respState = iota
	stHeaders
	stBody
	stComplete
	stChunked
	stMalformed
)

const maxLine = 8192

type response struct {
	state         respState
	line          []byte
	status        int
	contentLength int64
	bodyLeft      int64
	transferEnc   string // every Transfer-Encoding value, judged at the end of the headers
	why           string
}

func newResponse() *response { return &response{contentLength: -1} }

func (r *response) done() bool { return r.state >= stComplete }

// feed consumes bytes until the response is complete or failed; what follows is dropped.
func (r *response) feed(data []byte) {
	for i := 0; i < len(data) && !r.done(); {
		if r.state == stBody {
			take := int64(len(data) - i)
			if take > r.bodyLeft {
				take = r.bodyLeft
			}
			r.bodyLeft -= take
			i += int(take)
			if r.bodyLeft == 0 {
				r.state = stComplete
			}
			continue
		}
		c := data[i]
		i++
		if c != '\n' {
			if len(r.line) >= maxLine {
				r.fail(stMalformed, "header line longer than 8192 bytes")
			} else {
				r.line = append(r.line, c)
			}
			continue
		}
		line := string(r.line)
		r.line = r.line[:0]
		line = strings.TrimSuffix(line, "\r")
		if r.state == stStatus {
			r.takeStatus(line)
		} else {
			r.takeHeader(line)
		}
	}
}

func (r *response) fail(s respState, why string) { r.state, r.why = s, why }

func (r *response) takeStatus(line string) {
	if !strings.HasPrefix(line, "HTTP/1.") || len(line) < 12 || line[8] != ' ' {
		r.fail(stMalformed, "bad status line")
		return
	}
	for i := 9; i < 12; i++ {
		if line[i] < '0' || line[i] > '9' {
			r.fail(stMalformed, "bad status code")
			return
		}
	}
	r.status, _ = strconv.Atoi(line[9:12])
	r.state = stHeaders
}

func (r *response) takeHeader(line string) {
	if line == "" {
		// RFC 9112 6.3: both framings in one response are an error, whichever comes first
		if r.transferEnc != "" && r.contentLength >= 0 {
			r.fail(stMalformed, "both Transfer-Encoding and Content-Length")
			return
		}
		if r.transferEnc != "" && strings.ToLower(r.transferEnc) != "identity" {
			r.fail(stChunked, "Transfer-Encoding: "+r.transferEnc+" is not supported")
			return
		}
		if r.contentLength < 0 {
			if r.status == 204 || r.status == 304 || (r.status >= 100 && r.status < 200) {
				r.contentLength = 0
			} else {
				r.fail(stMalformed, "no Content-Length")
				return
			}
		}
		r.bodyLeft = r.contentLength
		if r.bodyLeft == 0 {
			r.state = stComplete
		} else {
			r.state = stBody
		}
		return
	}
	colon := strings.IndexByte(line, ':')
	if colon < 0 {
		r.fail(stMalformed, "header without a colon")
		return
	}
	name := strings.ToLower(strings.Trim(line[:colon], " \t"))
	value := strings.Trim(line[colon+1:], " \t")
	switch name {
	case "transfer-encoding":
		if r.transferEnc != "" {
			r.transferEnc += ", "
		}
		r.transferEnc += value
	case "content-length":
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil || n < 0 || (r.contentLength >= 0 && n != r.contentLength) {
			r.fail(stMalformed, "bad Content-Length")
		} else {
			r.contentLength = n
		}
	}
}

// buildRequest: GET, or POST with the lab's body pattern; the same bytes for every request.
func buildRequest(o *options) []byte {
	method := "GET"
	if o.body > 0 {
		method = "POST"
	}
	head := method + " / HTTP/1.1\r\nHost: " + o.name + "\r\nConnection: keep-alive\r\n"
	if o.body > 0 {
		head += "Content-Type: application/octet-stream\r\nContent-Length: " + strconv.FormatInt(o.body, 10) + "\r\n"
	}
	req := make([]byte, 0, len(head)+2+int(o.body))
	req = append(req, head+"\r\n"...)
	for i := uint64(0); i < uint64(o.body); i++ {
		req = append(req, byte((i*131+o.seed)%251))
	}
	return req
}
