package middleware

import (
	"io"
	"math/rand/v2"
	"net"
	"testing"
)

func TestHeaderEnd(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"GET / HTTP/1.1\r\nHost: x\r\n\r\nrest", 27},
		{"GET / HTTP/1.1\nHost: x\n\nrest", 24},
		{"\r\nGET / HTTP/1.1\r\n\r\n", 20},
		{"GET / HTTP/1.1\r\nHost: x\r\n", -1},
	} {
		if got := headerEnd([]byte(tc.in)); got != tc.want {
			t.Errorf("headerEnd(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

// chunkConn is a connection whose reads return the given chunks, then EOF.
type chunkConn struct {
	net.Conn
	chunks []string
}

func (c *chunkConn) Read(p []byte) (int, error) {
	if len(c.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.chunks[0])
	if c.chunks[0] = c.chunks[0][n:]; c.chunks[0] == "" {
		c.chunks = c.chunks[1:]
	}
	return n, nil
}

// TestLengthCheckConnAnySplit: however the byte stream is cut into reads
// and however much the reader asks for, the wrapper hands over the same
// rewritten stream.
func TestLengthCheckConnAnySplit(t *testing.T) {
	const hdr = "Host: x\r\nContent-Type: application/json\r\n"
	body := `{"name": "one"}`
	in := "POST /a HTTP/1.1\r\n" + hdr + "Content-Length: 15\r\n\r\n" + body +
		"GET /b HTTP/1.1\r\n" + hdr + InvalidLengthHeader + ": forged\r\n\r\n" +
		"PUT /c HTTP/1.1\r\n" + hdr + "Content-Length: 15\r\n\r\n" + body +
		"\r\nGET /d HTTP/1.1\r\nHost: x\r\n\r\n" +
		"POST /e HTTP/1.1\r\n" + hdr + "Content-Length:  12abc \r\n\r\n" + body + "GET /f HTTP/1.1\r\n\r\n"
	want := "POST /a HTTP/1.1\r\n" + hdr + "Content-Length: 15\r\n\r\n" + body +
		"GET /b HTTP/1.1\r\n" + hdr + "\r\n" +
		"PUT /c HTTP/1.1\r\n" + hdr + "Content-Length: 15\r\n\r\n" + body +
		"\r\nGET /d HTTP/1.1\r\nHost: x\r\n\r\n" +
		"POST /e HTTP/1.1\r\n" + hdr + InvalidLengthHeader + ": 12abc\r\nConnection: close\r\n\r\n" + body + "GET /f HTTP/1.1\r\n\r\n"
	r := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 300; trial++ {
		var chunks []string
		for rest := in; rest != ""; {
			n := min(1+r.IntN(80), len(rest))
			if trial == 0 {
				n = len(rest) // one read
			}
			chunks = append(chunks, rest[:n])
			rest = rest[n:]
		}
		c := &lengthCheckConn{Conn: &chunkConn{chunks: chunks}}
		var got []byte
		for {
			p := make([]byte, 1+r.IntN(64))
			n, err := c.Read(p)
			got = append(got, p[:n]...)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if string(got) != want {
			t.Fatalf("trial %d (%d reads):\n got %q\nwant %q", trial, len(chunks), got, want)
		}
	}
}
