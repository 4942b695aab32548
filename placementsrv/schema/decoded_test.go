package schema

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
)

// TestValidateDecodedAgrees: for every JSON case of the Python goldens,
// validating the decoded document gives exactly what validating the body
// in its key order gives, valid or not, and the same message.
func TestValidateDecodedAgrees(t *testing.T) {
	set := New()
	checked, invalid := 0, 0
	for i, c := range loadCases(t) {
		if c.Kind == "query" {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader([]byte(c.Instance)))
		dec.UseNumber()
		var doc any
		if err := dec.Decode(&doc); err != nil {
			continue // malformed: the handlers refuse it before validating
		}
		s := caseSchema(t, set, c)
		want := validateJSON(s, []byte(c.Instance))
		got := s.ValidateDecoded(context.Background(), doc, []byte(c.Instance))
		if (want == nil) != (got == nil) || (want != nil && want.Error() != got.Error()) {
			t.Errorf("#%d %s %s: decoded %v, in key order %v", i, c.Schema, c.Instance, got, want)
		}
		checked++
		if want != nil {
			invalid++
		}
	}
	if checked < 100 || invalid < 50 {
		t.Fatalf("only %d cases checked (%d invalid)", checked, invalid)
	}
}
