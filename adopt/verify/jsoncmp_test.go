package verify

import (
	"strings"
	"testing"
)

func diffsOf(t *testing.T, ref, ours string) []string {
	t.Helper()
	r, err := decode([]byte(ref))
	if err != nil {
		t.Fatal(err)
	}
	o, err := decode([]byte(ours))
	if err != nil {
		t.Fatal(err)
	}
	d := &differ{path: "/x"}
	d.walk("$", r, o)
	var out []string
	for _, x := range d.diffs {
		out = append(out, x.Where+": "+x.Ref+" | "+x.Ours)
	}
	return out
}

func TestDiffer(t *testing.T) {
	cases := []struct {
		ref, ours string
		want      []string
	}{
		// arrays are sets; key order does not matter
		{`{"traits":["A","B"],"g":1}`, `{"g":1,"traits":["B","A"]}`, nil},
		// an error's request id differs by design
		{`{"errors":[{"status":404,"request_id":"req-1"}]}`, `{"errors":[{"status":404,"request_id":"req-2"}]}`, nil},
		{`{"traits":["A","B"]}`, `{"traits":["A","C"]}`, []string{`$.traits[]: "B" | absent`, `$.traits[]: absent | "C"`}},
		{`{"usages":{"VCPU":1}}`, `{"usages":{"VCPU":2,"DISK_GB":0}}`, []string{"$.usages.DISK_GB: absent | 0", "$.usages.VCPU: 1 | 2"}},
		// 1.0 and 1 are different answers
		{`{"allocation_ratio":1.0}`, `{"allocation_ratio":1}`, []string{"$.allocation_ratio: 1.0 | 1"}},
	}
	for _, c := range cases {
		got := diffsOf(t, c.ref, c.ours)
		if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("%s vs %s:\n got %q\nwant %q", c.ref, c.ours, got, c.want)
		}
	}
}

func TestCandidateQueries(t *testing.T) {
	qs := candidateQueries([]provider{
		{uuid: "r", root: "r", classes: []string{"DISK_GB", "MEMORY_MB", "VCPU"}, traits: []string{"CUSTOM_A", "HW_X"}, aggregates: []string{"agg"}},
		{uuid: "c", root: "r", classes: []string{"CUSTOM_GPU"}},
	})
	all := strings.Join(qs, "\n")
	for _, want := range []string{
		"/allocation_candidates?resources=CUSTOM_GPU%3A1",
		"/allocation_candidates?resources=VCPU%3A1%2CMEMORY_MB%3A256%2CDISK_GB%3A1",
		"/allocation_candidates?resources=DISK_GB%3A1&required=%21CUSTOM_A",
		"/allocation_candidates?resources=DISK_GB%3A1&member_of=agg",
		"/allocation_candidates?resources=VCPU%3A1&in_tree=r",
		"same_subtree=_A%2C_B",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no query %s in:\n%s", want, all)
		}
	}
	if strings.Contains(all, "HW_X") {
		t.Errorf("a standard trait got a query of its own:\n%s", all)
	}
}
