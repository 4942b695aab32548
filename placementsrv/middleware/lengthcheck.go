package middleware

import (
	"bytes"
	"errors"
	"net"
	"strconv"

	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
	"github.com/placement-syncd/placement-syncd/placementsrv/query"
)

// Upstream answers a request whose Content-Length is not an integer with
// Placement's own 400 ("content-length header must be an integer"). Go's
// HTTP server rejects such a request before any handler runs, with a bare
// text 400. lengthCheckListener bridges the two: it watches the byte stream
// of each plain-TCP connection, and when a request's header block carries
// a Content-Length that is not a number it renames that header to
// InvalidLengthHeader and asks for the connection to close after the
// answer (the length of the body that follows is unknown). The handler
// chain then reports the error as upstream does.
//
// The wrapper follows request boundaries by counting Content-Length bodies;
// once a request uses any Transfer-Encoding it stops inspecting that
// connection and passes bytes through untouched.

// InvalidLengthHeader carries a rejected Content-Length value to the
// handler chain. The wrapper removes any copy a client sent itself.
const InvalidLengthHeader = "X-Placement-Invalid-Content-Length"

// maxInspectedHeader bounds how much of a header block is buffered; larger
// blocks pass through for net/http to refuse.
const maxInspectedHeader = 1 << 20

// lengthCheckListener wraps every accepted connection; see above.
type lengthCheckListener struct{ net.Listener }

// NewLengthCheckListener wraps ln, which must not be a TLS listener.
func NewLengthCheckListener(ln net.Listener) net.Listener { return lengthCheckListener{ln} }

func (l lengthCheckListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &lengthCheckConn{Conn: c}, nil
}

type connMode int

const (
	modeHeader      connMode = iota // collecting a request's header block
	modeBody                        // passing remaining body bytes
	modePassthrough                 // no longer inspecting
)

// lengthCheckConn rewrites request header blocks as they are read.
// net/http reads a connection from one goroutine at a time, so it needs no
// locking.
type lengthCheckConn struct {
	net.Conn
	mode      connMode
	remaining int64  // body bytes left in modeBody
	pending   []byte // incomplete header block
	out       []byte // bytes ready for the reader
	outBuf    []byte // out's buffer, from its start
	err       error  // deferred read error
	buf       [4096]byte
}

func (c *lengthCheckConn) Read(p []byte) (int, error) {
	for len(c.out) == 0 {
		if err := c.err; err != nil {
			c.err = nil
			return 0, err
		}
		if c.mode == modePassthrough && len(c.pending) == 0 {
			return c.Conn.Read(p)
		}
		n, err := c.Conn.Read(c.buf[:])
		c.out = c.outBuf[:0] // all handed over: reuse the buffer
		c.feed(c.buf[:n])
		if err != nil {
			// net/http interrupts reads with past deadlines and carries
			// on, so a timeout keeps the partial header; any other error
			// ends the stream, so hand over what was held back.
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Timeout() {
				c.out = append(c.out, c.pending...)
				c.pending = nil
			}
			if len(c.out) == 0 {
				return 0, err
			}
			c.err = err // reported on the next call, after the data
		}
		c.outBuf = c.out[:0]
	}
	n := copy(p, c.out)
	c.out = c.out[n:]
	return n, nil
}

// feed classifies newly read bytes.
func (c *lengthCheckConn) feed(data []byte) {
	for len(data) > 0 {
		switch c.mode {
		case modePassthrough:
			c.out = append(c.out, data...)
			return
		case modeBody:
			k := int64(len(data))
			if k > c.remaining {
				k = c.remaining
			}
			c.out = append(c.out, data[:k]...)
			data = data[k:]
			c.remaining -= k
			if c.remaining == 0 {
				c.mode = modeHeader
			}
		case modeHeader:
			if len(c.pending) == 0 {
				// Usually a whole header block arrives in one read.
				if end := headerEnd(data); end >= 0 {
					c.out = c.inspect(c.out, data[:end])
					data = data[end:]
					continue
				}
			}
			c.pending = append(c.pending, data...)
			data = nil
			end := headerEnd(c.pending)
			if end < 0 {
				if len(c.pending) > maxInspectedHeader {
					c.out = append(c.out, c.pending...)
					c.pending = nil
					c.mode = modePassthrough
				}
				return
			}
			block, rest := c.pending[:end], c.pending[end:]
			c.out = c.inspect(c.out, block)
			// rest is copied to the front of the same buffer by the next
			// round, if it holds an incomplete header block.
			c.pending = c.pending[:0]
			data = rest
		}
	}
}

// headerEnd returns the length of the header block at the start of b,
// including its blank line, or -1 when b does not hold all of it yet.
// Leading empty lines, which net/http skips, are part of the block.
func headerEnd(b []byte) int {
	start := 0
	for start < len(b) && (b[start] == '\r' || b[start] == '\n') {
		start++
	}
	if i := bytes.Index(b[start:], []byte("\n\r\n")); i >= 0 {
		if j := bytes.Index(b[start:], []byte("\n\n")); j >= 0 && j < i {
			return start + j + 2
		}
		return start + i + 3
	}
	if j := bytes.Index(b[start:], []byte("\n\n")); j >= 0 {
		return start + j + 2
	}
	return -1
}

// inspect appends the header block to dst, rewritten when its
// Content-Length is not a number (or a client sent InvalidLengthHeader
// itself), and sets the mode for what follows.
func (c *lengthCheckConn) inspect(dst, block []byte) []byte {
	var length int64
	invalid, chunked, rewrite := false, false, false
	forEachHeader(block, func(_ []byte, action headerAction, n int64) {
		switch action {
		case headerForged:
			rewrite = true
		case headerChunked:
			chunked = true
		case headerLength:
			length = n
		case headerBadLength:
			invalid, rewrite = true, true
		}
	})
	start := len(dst)
	if !rewrite {
		dst = append(dst, block...)
	} else {
		dst = append(dst, firstLine(block)...)
		forEachHeader(block, func(line []byte, action headerAction, _ int64) {
			switch action {
			case headerForged: // only this wrapper may set it
			case headerBadLength:
				_, value, _ := bytes.Cut(line, []byte(":"))
				dst = append(dst, InvalidLengthHeader+": "...)
				dst = append(dst, bytes.TrimSpace(value)...)
				dst = append(dst, "\r\n"...)
			default:
				dst = append(dst, line...)
			}
		})
	}
	switch {
	case invalid:
		// Drop the blank line ending the block, ask for the connection
		// to close, and end the block again.
		end := len(dst) - 1
		if bytes.HasSuffix(dst[start:], []byte("\n\r\n")) {
			end = len(dst) - 2
		}
		dst = append(dst[:end], "Connection: close\r\n\r\n"...)
		c.mode = modePassthrough
	case chunked:
		c.mode = modePassthrough
	case length > 0:
		c.mode, c.remaining = modeBody, length
	default:
		c.mode = modeHeader
	}
	return dst
}

// headerAction is what inspect does with one header line.
type headerAction int

const (
	headerKeep      headerAction = iota
	headerForged                 // a client's own InvalidLengthHeader: dropped
	headerChunked                // Transfer-Encoding
	headerLength                 // a Content-Length net/http accepts
	headerBadLength              // a Content-Length that is not a number
)

// firstLine returns the request line of a header block, with its newline.
func firstLine(block []byte) []byte {
	if i := bytes.IndexByte(block, '\n'); i >= 0 {
		return block[:i+1]
	}
	return block
}

// forEachHeader calls fn with each line after the request line (newline
// included, the blank line ending the block too) and what it means.
func forEachHeader(block []byte, fn func(line []byte, action headerAction, length int64)) {
	rest := block[len(firstLine(block)):]
	for len(rest) > 0 {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line = rest[:i+1]
		}
		rest = rest[len(line):]
		action, n := headerKeep, int64(0)
		if name, rawValue, ok := bytes.Cut(line, []byte(":")); ok {
			name, value := bytes.TrimSpace(name), bytes.TrimSpace(rawValue)
			switch {
			case bytes.EqualFold(name, []byte(InvalidLengthHeader)):
				action = headerForged
			case bytes.EqualFold(name, []byte("Transfer-Encoding")):
				action = headerChunked
			case bytes.EqualFold(name, []byte("Content-Length")):
				if v, ok := parseDecimal(rawValue); ok {
					action, n = headerLength, v
				} else if _, isInt := query.PyIntLiteral(string(value)); !isInt {
					action = headerBadLength
				}
				// Python would take it (e.g. "+5"); leave it to net/http.
			}
		}
		fn(line, action, n)
	}
}

// parseDecimal parses a Content-Length exactly as net/http does: the
// value trimmed of ASCII blanks, then strconv.ParseUint(v, 10, 63). Any
// number of leading zeros is allowed there, so a digit count is no bound:
// a wrapper that gave up on a long zero-padded value would take the body
// that net/http reads for the next header block and could rewrite it.
func parseDecimal(b []byte) (int64, bool) {
	n, err := strconv.ParseUint(string(trimASCII(b)), 10, 63)
	if err != nil {
		return 0, false
	}
	return int64(n), true
}

// trimASCII is textproto.TrimBytes: it trims space, tab, CR and LF only.
func trimASCII(b []byte) []byte {
	isBlank := func(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }
	for len(b) > 0 && isBlank(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isBlank(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

// CloseWrite half-closes the underlying TCP connection, which net/http
// uses to let a client read an error before the connection goes away.
func (c *lengthCheckConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// checkContentLength mirrors upstream's guard: a Content-Length must be an
// integer, and a body needs a content type.
func checkContentLength(req *Request) *apierror.Error {
	if _, bad := req.Header[InvalidLengthHeader]; bad {
		return apierror.BadRequest("content-length header must be an integer")
	}
	cl := req.Header.Get("Content-Length")
	if cl == "" {
		return nil
	}
	n := 0
	for _, c := range cl {
		if c < '0' || c > '9' {
			return apierror.BadRequest("content-length header must be an integer")
		}
		n = n*10 + int(c-'0')
		if n > 1<<30 {
			break
		}
	}
	if n > 0 && req.Header.Get("Content-Type") == "" {
		return apierror.BadRequest("content-type header required when content-length > 0")
	}
	return nil
}
