package difftest

import (
	"path/filepath"
	"testing"
)

// TestTraceRoundTrip writes a generated request's record and reads it
// back as the same request, compressed or not.
func TestTraceRoundTrip(t *testing.T) {
	for _, name := range []string{"t.jsonl", "t.jsonl.gz"} {
		path := filepath.Join(t.TempDir(), name)
		tw, err := CreateTrace(path)
		if err != nil {
			t.Fatal(err)
		}
		reqs := generate(5, 400)
		for i, r := range reqs {
			if err := tw.Write(toRecord(i+1, i, r, r.Path, r.Body)); err != nil {
				t.Fatal(err)
			}
		}
		if err := tw.Close(); err != nil {
			t.Fatal(err)
		}
		recs, err := ReadTrace(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != len(reqs) {
			t.Fatalf("%s: %d records for %d requests", name, len(recs), len(reqs))
		}
		for i, rec := range recs {
			got := FromRecord(&rec)
			got.Gen, got.Note = reqs[i].Gen, reqs[i].Note
			if requestLine(got) != requestLine(reqs[i]) || got.Bad != reqs[i].Bad {
				t.Fatalf("%s op %d:\nwrote %s\nread  %s", name, i+1, requestLine(reqs[i]), requestLine(got))
			}
		}
	}
}

// TestFromSharedRecord reads the header cases of ../shared/repro's traces,
// which name them in mv and note rather than in headers.
func TestFromSharedRecord(t *testing.T) {
	cases := []struct {
		rec  Record
		want string
	}{
		{Record{Gen: "bad_mvhdr", Method: "GET", Path: "/", MV: "'placement 1.39 '"}, "GET / mv=-1 h=OpenStack-API-Version: placement 1.39 ;  body="},
		{Record{Gen: "bad_mvhdr", Method: "GET", Path: "/", MV: "legacy X-OpenStack-Placement-API-Version"},
			"GET / mv=-1 h=X-OpenStack-Placement-API-Version: placement 1.39;  body="},
		{Record{Gen: "bad_accept", Method: "GET", Path: "/traits", MV: 39.0, Note: "Accept 'text/html'"}, "GET /traits mv=39 h=Accept: text/html;  body="},
		{Record{Gen: "bad_ctype", Method: "POST", Path: "/reshaper", MV: 39.0, Note: "content-type None", Body: "{}"},
			"POST /reshaper mv=39 h=Content-Type: <none>;  body={}"},
		{Record{Gen: "non_admin", Method: "GET", Path: "/", MV: 10.0, Note: "token 'reader:proj-a'"}, "GET / mv=10 h=X-Auth-Token: reader:proj-a;  body="},
		{Record{Gen: "no_auth", Method: "GET", Path: "/traits", MV: 11.0}, "GET /traits mv=11 h=X-Auth-Token: <none>;  body="},
		{Record{Gen: "ac", Method: "GET", Path: "/allocation_candidates?resources=VCPU:1", MV: nil}, "GET /allocation_candidates?resources=VCPU:1 mv=-1 h= body="},
	}
	for _, c := range cases {
		if got := requestLine(FromRecord(&c.rec)); got != c.want {
			t.Errorf("%+v:\n got %s\nwant %s", c.rec, got, c.want)
		}
	}
}
