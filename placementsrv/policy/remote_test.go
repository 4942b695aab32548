package policy

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestRemoteCheck: http: checks POST rule, target and credentials as
// form fields holding JSON, and pass on a body of True, as oslo.policy's
// HttpCheck with its default content type.
func TestRemoteCheck(t *testing.T) {
	var got map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			t.Error(err)
		}
		got = map[string]any{}
		for _, k := range []string{"rule", "target", "credentials"} {
			var v any
			if err := json.Unmarshal([]byte(r.PostForm.Get(k)), &v); err != nil {
				t.Errorf("%s: %v", k, err)
			}
			got[k] = v
		}
		if strings.HasSuffix(r.URL.Path, "/p1") {
			_, _ = w.Write([]byte(`"True"`))
			return
		}
		_, _ = w.Write([]byte("False"))
	}))
	defer srv.Close()
	file := `"placement:usages": "` + srv.URL + `/check/%(project_id)s"`
	enf, err := NewFromBytes("p", []byte(file), Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := Credentials{Roles: []string{"reader"}, ProjectID: Str("p1"), UserID: Str("u"), SystemScope: Str("all")}
	tg := Target{ProjectID: Str("p1")}
	if r := enf.Enforce(TotalUsages, &c, &tg); r != Allowed {
		t.Errorf("p1: %v", r)
	}
	if got["rule"] != TotalUsages || got["target"].(map[string]any)["project_id"] != "p1" {
		t.Errorf("payload %v", got)
	}
	cr := got["credentials"].(map[string]any)
	if cr["system"] != "all" || cr["roles"].([]any)[0] != "reader" || cr["domain_id"] != nil {
		t.Errorf("credentials %v", cr)
	}
	tg = Target{ProjectID: Str("p2")}
	if r := enf.Enforce(TotalUsages, &c, &tg); r != Denied {
		t.Errorf("p2: %v", r)
	}
	srv.Close()
	tg = Target{ProjectID: Str("p1")}
	if r := enf.Enforce(TotalUsages, &c, &tg); r != Denied {
		t.Errorf("server down: %v", r)
	}
}
