package placementsrv

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/middleware"
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
		spoof := "GET /resource_providers HTTP/1.1\r\n" + hdr + middleware.InvalidLengthHeader + ": x\r\n\r\n"
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
