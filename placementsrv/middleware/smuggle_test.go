package middleware

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestLengthCheckZeroPaddedLength sends, over a real socket, a request
// whose Content-Length is zero-padded to 20 digits (net/http accepts it)
// and whose body is shaped like a header block with a bad Content-Length.
// Were the wrapper to lose track of the body, it would rewrite those
// bytes, lengthening them, and the tail ("GET /sm HTTP/1.0") would be
// read as a second request that no front proxy ever saw.
func TestLengthCheckZeroPaddedLength(t *testing.T) {
	var mu sync.Mutex
	var paths, bodies []string
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		paths, bodies = append(paths, r.URL.Path), append(bodies, string(b))
		mu.Unlock()
		fmt.Fprint(w, "ok")
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(NewLengthCheckListener(ln)) //nolint:errcheck // ends with Close below
	defer srv.Close()

	body := "Z\r\nContent-Length: abc\r\nGET /sm HTTP/1.0\r\n\r\n"
	req := "POST /outer HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
		fmt.Sprintf("Content-Length: %020d\r\n\r\n", len(body)) + body
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// A safety net against a hung test, not a measured time.
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	// Nothing more is sent: a second answer can only come from a request
	// found inside the body.
	_ = c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	rest, _ := io.ReadAll(br)
	mu.Lock()
	defer mu.Unlock()
	if len(paths) != 1 || paths[0] != "/outer" || bodies[0] != body {
		t.Errorf("handled paths %q bodies %q, want only /outer with its body intact", paths, bodies)
	}
	if strings.Contains(string(rest), "HTTP/1.") {
		t.Errorf("a second answer followed: %q", rest)
	}
}
