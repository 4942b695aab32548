package difftest

import (
	"bufio"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/placement-syncd/placement-syncd/microversion"
)

// Record is one line of a trace: the JSONL format of ../shared/repro
// (README there), plus optional keys of ours: headers (explicit header
// overrides, null removes the header), bad (a deliberately wrong
// request) and body_base64 (the body's bytes when they are not UTF-8,
// which a JSON string cannot hold). Without headers, replay derives them from gen and note
// as the shared traces spell them.
type Record struct {
	Op       int                `json:"op"`
	Step     int                `json:"step"`
	Gen      string             `json:"gen"`
	Method   string             `json:"method"`
	Path     string             `json:"path"`
	MV       any                `json:"mv"`
	Note     string             `json:"note"`
	Body     string             `json:"body"`
	BodyB64  string             `json:"body_base64,omitempty"`
	Headers  map[string]*string `json:"headers,omitempty"`
	Bad      bool               `json:"bad,omitempty"`
	Ref      int                `json:"ref"`
	Cand     int                `json:"cand"`
	RefBody  string             `json:"ref_body"`
	Mismatch []string           `json:"mismatch"`
}

// ReadTrace reads a trace file, gzip-compressed when its name ends in .gz.
func ReadTrace(path string) ([]Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open trace: %w", err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("trace %s: %w", path, err)
		}
		defer zr.Close()
		r = zr
	}
	var recs []Record
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for line := 1; sc.Scan(); line++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var rec Record
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return nil, fmt.Errorf("trace %s line %d: %w", path, line, err)
		}
		recs = append(recs, rec)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read trace %s: %w", path, err)
	}
	return recs, nil
}

// TraceWriter writes records as JSONL, gzip-compressed when the file name
// ends in .gz.
type TraceWriter struct {
	f  *os.File
	zw *gzip.Writer
	bw *bufio.Writer
}

// CreateTrace creates (or truncates) a trace file.
func CreateTrace(path string) (*TraceWriter, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("create trace: %w", err)
	}
	tw := &TraceWriter{f: f}
	if strings.HasSuffix(path, ".gz") {
		tw.zw = gzip.NewWriter(f)
		tw.bw = bufio.NewWriter(tw.zw)
	} else {
		tw.bw = bufio.NewWriter(f)
	}
	return tw, nil
}

// Write appends one record.
func (tw *TraceWriter) Write(rec *Record) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("encode trace record %d: %w", rec.Op, err)
	}
	b = append(b, '\n')
	if _, err := tw.bw.Write(b); err != nil {
		return fmt.Errorf("write trace: %w", err)
	}
	return nil
}

// Close flushes and closes the file.
func (tw *TraceWriter) Close() error {
	err := tw.bw.Flush()
	if tw.zw != nil {
		if zerr := tw.zw.Close(); err == nil {
			err = zerr
		}
	}
	if cerr := tw.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("close trace: %w", err)
	}
	return nil
}

// legacyVersionHeader is the pre-1.x header name some traces send instead
// of OpenStack-API-Version.
const legacyVersionHeader = "X-OpenStack-Placement-API-Version"

// FromRecord turns a trace line back into a request to replay.
func FromRecord(rec *Record) *Request {
	r := &Request{Gen: rec.Gen, Note: rec.Note, Method: rec.Method, Path: rec.Path, Body: rec.Body, MV: -1, Bad: rec.Bad}
	if b, err := base64.StdEncoding.DecodeString(rec.BodyB64); err == nil && rec.BodyB64 != "" {
		r.Body = string(b)
	}
	hdr := map[string]*string{}
	switch v := rec.MV.(type) {
	case float64:
		r.MV = int(v)
	case string:
		if name, ok := strings.CutPrefix(v, "legacy "); ok {
			hdr[name] = hv("placement " + microversion.Max.String())
		} else {
			// The shared traces write a raw header as Python's repr.
			if len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'' {
				v = v[1 : len(v)-1]
			}
			hdr["OpenStack-API-Version"] = hv(v)
		}
	}
	if rec.Headers != nil {
		hdr = rec.Headers
	} else {
		headersFromNote(rec, hdr)
	}
	if len(hdr) > 0 {
		r.Headers = hdr
	}
	return r
}

// headersFromNote reads the header a shared trace names in its note.
func headersFromNote(rec *Record, hdr map[string]*string) {
	quoted := func(prefix string) (*string, bool) {
		rest, ok := strings.CutPrefix(rec.Note, prefix)
		if !ok {
			return nil, false
		}
		if rest == "None" {
			return nil, true
		}
		return hv(strings.TrimSuffix(strings.TrimPrefix(rest, "'"), "'")), true
	}
	switch rec.Gen {
	case "bad_accept":
		if v, ok := quoted("Accept "); ok {
			hdr["Accept"] = v
		}
	case "bad_ctype":
		if v, ok := quoted("content-type "); ok {
			hdr["Content-Type"] = v
		}
	case "non_admin":
		if v, ok := quoted("token "); ok {
			hdr["X-Auth-Token"] = v
		}
	case "no_auth":
		hdr["X-Auth-Token"] = nil
	}
}

// toRecord is the trace line of a request (path and body as the
// reference saw them, generated uuids as @genN@).
func toRecord(op, step int, r *Request, path, body string) *Record {
	rec := &Record{Op: op, Step: step, Gen: r.Gen, Method: r.Method, Path: path, Note: r.Note, Body: body,
		Headers: r.Headers, Bad: r.Bad, Mismatch: []string{}}
	if !utf8.ValidString(body) {
		rec.BodyB64 = base64.StdEncoding.EncodeToString([]byte(body))
	}
	if r.MV >= 0 {
		rec.MV = r.MV
	} else if v, ok := r.Headers["OpenStack-API-Version"]; ok && v != nil {
		rec.MV = *v
	}
	return rec
}
