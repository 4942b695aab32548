package placementclient

import "net/http"

// replayableWrites marks write requests as safe for net/http to resend
// when a reused keep-alive connection turns out to be closed by the
// server before answering. uWSGI's http-socket (a common way to serve
// Placement) closes every connection after one response without saying
// so, and net/http otherwise resends only GET-like requests, so writes
// would fail at random with EOF.
//
// Resending is safe for every write this client makes: inventory, trait
// and aggregate PUTs carry the provider generation (a resent write that
// had been applied gets 409 concurrent_update and the caller re-reads),
// resource class and trait PUTs are idempotent, and a provider POST
// carries its uuid (a resent one gets 409 duplicate_name).
//
// An empty Idempotency-Key value is net/http's documented way to say
// "idempotent" without sending the header.
type replayableWrites struct{ next http.RoundTripper }

func (t replayableWrites) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead && r.Header.Get("Idempotency-Key") == "" {
		r = r.Clone(r.Context())
		r.Header["Idempotency-Key"] = []string{}
	}
	return t.next.RoundTrip(r)
}

// withReplayableWrites returns a copy of hc whose transport marks writes
// replayable and counts every request in sent (once, however often
// net/http resends it).
func withReplayableWrites(hc *http.Client, sent *requestCounter) *http.Client {
	c := *hc
	next := c.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	c.Transport = countingTransport{next: replayableWrites{next: next}, n: sent}
	return &c
}
