package placementsrv

import (
	"bufio"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// rawExchange writes raw bytes on one connection and reads as many
// responses as want lists statuses for, checking each.
func rawExchange(t *testing.T, ts *testServer, raw string, want []int) []string {
	t.Helper()
	conn, err := net.DialTimeout("tcp", strings.TrimPrefix(ts.URL, "http://"), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, raw); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	var bodies []string
	for i, status := range want {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("response %d: %v", i, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != status {
			t.Fatalf("response %d: status %d, want %d: %s", i, resp.StatusCode, status, b)
		}
		bodies = append(bodies, string(b))
	}
	return bodies
}

func TestNonIntegerContentLength(t *testing.T) {
	ts := startTestServer(t)
	const hdr = "Host: x\r\nX-Auth-Token: admin\r\nAccept: application/json\r\nContent-Type: application/json\r\n"
	body := `{"name": "one"}`
	good := "POST /resource_providers HTTP/1.1\r\n" + hdr + "Content-Length: 15\r\n\r\n" + body
	get := "GET /resource_providers HTTP/1.1\r\n" + hdr + "\r\n"

	t.Run("alone", func(t *testing.T) {
		bodies := rawExchange(t, ts, "POST /resource_providers HTTP/1.1\r\n"+hdr+"Content-Length: hi mom\r\n\r\n"+body, []int{400})
		if !strings.Contains(bodies[0], "content-length header must be an integer") {
			t.Errorf("body %s", bodies[0])
		}
	})
	t.Run("after keep-alive requests with bodies", func(t *testing.T) {
		bad := "POST /resource_providers HTTP/1.1\r\n" + hdr + "content-length: 12abc\r\n\r\n" + body
		bodies := rawExchange(t, ts, good+get+bad, []int{201, 200, 400})
		if !strings.Contains(bodies[2], "content-length header must be an integer") {
			t.Errorf("body %s", bodies[2])
		}
	})
	t.Run("marker header from a client is dropped", func(t *testing.T) {
		spoof := "GET /resource_providers HTTP/1.1\r\n" + hdr + invalidLengthHeader + ": x\r\n\r\n"
		rawExchange(t, ts, spoof, []int{200})
	})
	t.Run("body split across reads", func(t *testing.T) {
		conn, err := net.Dial("tcp", strings.TrimPrefix(ts.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		br := bufio.NewReader(conn)
		req := "PUT /resource_providers/" + otherUUID + " HTTP/1.1\r\n" + hdr + "Content-Length: 15\r\n\r\n" + body
		for _, chunk := range []string{req[:10], req[10:60], req[60:]} {
			if _, err := io.WriteString(conn, chunk); err != nil {
				t.Fatal(err)
			}
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Fatalf("status %d", resp.StatusCode)
		}
	})
}

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
		"GET /b HTTP/1.1\r\n" + hdr + invalidLengthHeader + ": forged\r\n\r\n" +
		"PUT /c HTTP/1.1\r\n" + hdr + "Content-Length: 15\r\n\r\n" + body +
		"\r\nGET /d HTTP/1.1\r\nHost: x\r\n\r\n" +
		"POST /e HTTP/1.1\r\n" + hdr + "Content-Length:  12abc \r\n\r\n" + body + "GET /f HTTP/1.1\r\n\r\n"
	want := "POST /a HTTP/1.1\r\n" + hdr + "Content-Length: 15\r\n\r\n" + body +
		"GET /b HTTP/1.1\r\n" + hdr + "\r\n" +
		"PUT /c HTTP/1.1\r\n" + hdr + "Content-Length: 15\r\n\r\n" + body +
		"\r\nGET /d HTTP/1.1\r\nHost: x\r\n\r\n" +
		"POST /e HTTP/1.1\r\n" + hdr + invalidLengthHeader + ": 12abc\r\nConnection: close\r\n\r\n" + body + "GET /f HTTP/1.1\r\n\r\n"
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
