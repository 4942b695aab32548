package placementclient

import (
	"net/http"
	"strings"
	"sync/atomic"
)

// Kinds of request, as Requests counts them.
const (
	KindList  = "list"  // GET /resource_providers (a provider list)
	KindRead  = "read"  // any other GET
	KindWrite = "write" // everything else
)

// Requests counts the HTTP requests a Client has sent, by kind, since it
// was built; callers take differences (a pass's requests). A request that
// net/http resends on a dead keep-alive connection counts once; with
// Keystone, token requests count too (as writes).
type Requests struct {
	List, Read, Write int64
}

// Total is every request counted.
func (r Requests) Total() int64 { return r.List + r.Read + r.Write }

// Sub is r - o, what was sent between two snapshots.
func (r Requests) Sub(o Requests) Requests {
	return Requests{List: r.List - o.List, Read: r.Read - o.Read, Write: r.Write - o.Write}
}

// ByKind returns the counts keyed by KindList, KindRead and KindWrite.
func (r Requests) ByKind() map[string]int64 {
	return map[string]int64{KindList: r.List, KindRead: r.Read, KindWrite: r.Write}
}

// requestCounter is the transport's tally; its zero value is ready.
type requestCounter struct {
	list, read, write atomic.Int64
}

func (c *requestCounter) snapshot() Requests {
	return Requests{List: c.list.Load(), Read: c.read.Load(), Write: c.write.Load()}
}

// countingTransport counts each request by kind before sending it.
type countingTransport struct {
	next http.RoundTripper
	n    *requestCounter
}

func (t countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	switch {
	case r.Method != http.MethodGet && r.Method != http.MethodHead:
		t.n.write.Add(1)
	case strings.HasSuffix(strings.TrimRight(r.URL.Path, "/"), "/resource_providers"):
		t.n.list.Add(1)
	default:
		t.n.read.Add(1)
	}
	return t.next.RoundTrip(r)
}

// Requests returns how many requests the Client has sent, by kind.
func (c *Client) Requests() Requests { return c.sent.snapshot() }
