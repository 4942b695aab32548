package query

import (
	"reflect"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/microversion"
)

var (
	v121 = microversion.Version{Major: 1, Minor: 21}
	v123 = microversion.Version{Major: 1, Minor: 23}
	v131 = microversion.Version{Major: 1, Minor: 31}
	v138 = microversion.Version{Major: 1, Minor: 38}
	v139 = microversion.Max
)

type requiredCase struct {
	name      string
	values    []string
	mv        microversion.Version
	required  [][]string
	forbidden []string
	err       string // substring of the error detail; "" for success
}

var requiredCases = []requiredCase{
	{"one", []string{"A"}, v139, [][]string{{"A"}}, nil, ""},
	{"several", []string{"A, B"}, v139, [][]string{{"A"}, {"B"}}, nil, ""},
	{"forbidden", []string{"A,!B"}, v139, [][]string{{"A"}}, []string{"B"}, ""},
	{"many bangs", []string{"!!!B"}, v139, nil, []string{"B"}, ""},
	{"forbidden dedup", []string{"!B,!B"}, v139, nil, []string{"B"}, ""},
	{"any of", []string{"in: A, B ,A"}, v139, [][]string{{"A", "B"}}, nil, ""},
	{"repeated at 1.39", []string{"in:A,B", "C,!D"}, v139, [][]string{{"A", "B"}, {"C"}}, []string{"D"}, ""},
	{"repeated before 1.39 keeps the last", []string{"A", "B"}, v138, [][]string{{"B"}}, nil, ""},
	{"empty", []string{""}, v139, nil, nil, "Expected 'required' parameter value of the form: HW_CPU_X86_VMX,!CUSTOM_MAGIC. Got an empty trait in: "},
	{"empty element", []string{"A,,B"}, v139, nil, nil, "Got an empty trait in: A,,B"},
	{"bare bang", []string{"A,!"}, v139, nil, nil, "Got an empty trait in: A,!"},
	{"empty before 1.22", []string{""}, v121, nil, nil, "Expected 'required' parameter value of the form: HW_CPU_X86_VMX,CUSTOM_MAGIC. Got an empty trait in: "},
	{"forbidden before 1.22", []string{"!A"}, v121, nil, nil, "Expected 'required' parameter value of the form: HW_CPU_X86_VMX,CUSTOM_MAGIC. Got: !A"},
	{"any of before 1.39", []string{"in:A,B"}, v138, nil, nil, "The format 'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' only supported since microversion 1.39. Got: in:A,B"},
	{"any of empty", []string{"in:A,"}, v139, nil, nil, "Expected 'required' parameter value of the form: in:HW_CPU_X86_VMX,CUSTOM_MAGIC. Got an empty trait in: in:A,"},
	{"any of forbidden", []string{"in:A,!B"}, v139, nil, nil, "The format 'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' does not support forbidden traits. Got: in:A,!B"},
}

func TestParseRequired(t *testing.T) {
	for _, tc := range requiredCases {
		t.Run(tc.name, func(t *testing.T) {
			got, herr := ParseRequired(tc.values, tc.mv)
			if tc.err != "" {
				if herr == nil || herr.Status != 400 || !strings.Contains(herr.Detail, tc.err) {
					t.Fatalf("got %v, %v; want error containing %q", got, herr, tc.err)
				}
				return
			}
			if herr != nil {
				t.Fatalf("unexpected error %v", herr)
			}
			if !reflect.DeepEqual(got.Required, tc.required) || !reflect.DeepEqual(got.Forbidden, tc.forbidden) {
				t.Errorf("got %v / %v, want %v / %v", got.Required, got.Forbidden, tc.required, tc.forbidden)
			}
		})
	}
}

const (
	aggA = "9c0c7c6e-5d4e-4b3a-8a29-1f0e9d8c7b6a"
	aggB = "1d2e3f4a-5b6c-4d7e-8f9a-0b1c2d3e4f5a"
)

type memberOfCase struct {
	name      string
	values    []string
	mv        microversion.Version
	required  [][]string
	forbidden []string
	err       string
}

var memberOfCases = []memberOfCase{
	{"one", []string{aggA}, v139, [][]string{{aggA}}, nil, ""},
	{"in", []string{"in:" + aggA + "," + aggB}, v123, [][]string{{aggA, aggB}}, nil, ""},
	{"repeated", []string{aggA, "in:" + aggB}, v139, [][]string{{aggA}, {aggB}}, nil, ""},
	{"forbidden", []string{"!" + aggA, "!in:" + aggA + "," + aggB}, v139, nil, []string{aggA, aggB}, ""},
	{"dashless uuid", []string{strings.ReplaceAll(aggA, "-", "")}, v139, [][]string{{strings.ReplaceAll(aggA, "-", "")}}, nil, ""},
	{"repeated before 1.24", []string{aggA, aggB}, v123, nil, nil, "Multiple member_of parameters are not supported"},
	{"forbidden before 1.32", []string{"!" + aggA}, v131, nil, nil, "Forbidden member_of parameters are not supported in the specified microversion"},
	{"list without in", []string{aggA + "," + aggB}, v139, nil, nil, "Multiple values for 'member_of' must be prefixed with the 'in:' or '!in:' keyword using the valid microversion. Got: " + aggA + "," + aggB},
	{"not a uuid", []string{"in:" + aggA + ",x"}, v139, nil, nil, "Expected 'member_of' parameter to contain valid UUID(s). Got: x"},
	{"empty", []string{""}, v139, nil, nil, "Got: "},
}

func TestParseMemberOf(t *testing.T) {
	for _, tc := range memberOfCases {
		t.Run(tc.name, func(t *testing.T) {
			got, herr := ParseMemberOf(tc.values, "", tc.mv)
			if tc.err != "" {
				if herr == nil || !strings.Contains(herr.Detail, tc.err) {
					t.Fatalf("got %v, %v; want error containing %q", got, herr, tc.err)
				}
				return
			}
			if herr != nil {
				t.Fatalf("unexpected error %v", herr)
			}
			if !reflect.DeepEqual(got.Required, tc.required) || !reflect.DeepEqual(got.Forbidden, tc.forbidden) {
				t.Errorf("got %v / %v, want %v / %v", got.Required, got.Forbidden, tc.required, tc.forbidden)
			}
		})
	}
}

func TestParseMemberOfSuffix(t *testing.T) {
	_, herr := ParseMemberOf([]string{aggA, aggB}, "1", v123)
	if herr == nil || herr.Detail != "Multiple member_of1 parameters are not supported" {
		t.Fatalf("got %v", herr)
	}
}

func TestParseResources(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []Resource
		err  string
	}{
		{"VCPU:1", []Resource{{Class: "VCPU", Amount: 1}}, ""},
		{"VCPU:1,MEMORY_MB:1024,VCPU:3", []Resource{{Class: "VCPU", Amount: 3}, {Class: "MEMORY_MB", Amount: 1024}}, ""},
		{"VCPU: +2 ", []Resource{{Class: "VCPU", Amount: 2}}, ""},
		{"DISK_GB:1_000", []Resource{{Class: "DISK_GB", Amount: 1000}}, ""},
		{"DISK_GB:١٢", []Resource{{Class: "DISK_GB", Amount: 12}}, ""},
		{"  ", nil, "Badly formed resources parameter. Expected resources query string parameter in form: ?resources=VCPU:2,MEMORY_MB:1024. Got: empty string."},
		{"VCPU", nil, "Got: VCPU."},
		{"VCPU:1:2", nil, "Got: VCPU:1:2."},
		{"VCPU:1,", nil, "Got: ."},
		{"VCPU:x", nil, "Requested resource VCPU expected positive integer amount. Got: x."},
		{"VCPU:1__0", nil, "expected positive integer amount"},
		{"VCPU:-1", nil, "Requested resource VCPU requires amount >= 1. Got: -1."},
	} {
		got, herr := ParseResources(tc.in)
		if tc.err != "" {
			if herr == nil || !strings.Contains(herr.Detail, tc.err) {
				t.Errorf("%q: got %v, %v; want error containing %q", tc.in, got, herr, tc.err)
			}
			continue
		}
		if herr != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: got %v, %v; want %v", tc.in, got, herr, tc.want)
		}
	}
}

func TestUUIDForms(t *testing.T) {
	const canon = "9c0c7c6e-5d4e-4b3a-8a29-1f0e9d8c7b6a"
	for _, in := range []string{canon, strings.ToUpper(canon), strings.ReplaceAll(canon, "-", ""), "{" + canon + "}", "urn:uuid:" + canon} {
		got, ok := NormalizeUUID(in)
		if !ok || got != canon {
			t.Errorf("NormalizeUUID(%q) = %q, %v", in, got, ok)
		}
	}
	for _, in := range []string{"", "x", canon + "0", " " + canon, "+" + canon[1:]} {
		if IsUUIDLike(in) {
			t.Errorf("IsUUIDLike(%q)", in)
		}
	}
	if got, herr := ParseInTree(" " + canon + " "); herr != nil || got != canon {
		t.Errorf("ParseInTree: %q %v", got, herr)
	}
}

// FuzzParseRequired checks that any input either parses into non-empty
// trait names or fails with a 400, never panics, and that parsing is
// deterministic.
func FuzzParseRequired(f *testing.F) {
	for _, tc := range requiredCases {
		f.Add(strings.Join(tc.values, "&"), tc.mv.Minor)
	}
	f.Fuzz(func(t *testing.T, joined string, minor int) {
		if minor < 0 || minor > microversion.Max.Minor {
			return
		}
		mv := microversion.Version{Major: 1, Minor: minor}
		values := strings.Split(joined, "&")
		got, herr := ParseRequired(values, mv)
		if herr != nil {
			if herr.Status != 400 {
				t.Fatalf("status %d", herr.Status)
			}
			return
		}
		for _, g := range got.Required {
			if len(g) == 0 {
				t.Fatalf("empty any-of group in %v", got.Required)
			}
			for _, name := range g {
				if name == "" || strings.HasPrefix(name, "!") && len(g) > 1 {
					t.Fatalf("bad required name %q in %v", name, got.Required)
				}
			}
		}
		for _, name := range got.Forbidden {
			if name == "" || strings.HasPrefix(name, "!") {
				t.Fatalf("bad forbidden name %q", name)
			}
		}
		if len(got.Forbidden) > 0 && !mv.AtLeast(microversion.ForbiddenTraits) {
			t.Fatalf("forbidden traits accepted at %s", mv)
		}
		again, _ := ParseRequired(values, mv)
		if !reflect.DeepEqual(got, again) {
			t.Fatalf("not deterministic")
		}
	})
}

// FuzzParseMemberOf checks that accepted aggregates are uuid-like and that
// version gates hold.
func FuzzParseMemberOf(f *testing.F) {
	for _, tc := range memberOfCases {
		f.Add(strings.Join(tc.values, "&"), tc.mv.Minor)
	}
	f.Fuzz(func(t *testing.T, joined string, minor int) {
		if minor < 0 || minor > microversion.Max.Minor {
			return
		}
		mv := microversion.Version{Major: 1, Minor: minor}
		values := strings.Split(joined, "&")
		got, herr := ParseMemberOf(values, "", mv)
		if herr != nil {
			if herr.Status != 400 {
				t.Fatalf("status %d", herr.Status)
			}
			return
		}
		if len(values) > 1 && !mv.AtLeast(microversion.MultiMemberOf) {
			t.Fatalf("repeated member_of accepted at %s", mv)
		}
		if len(got.Forbidden) > 0 && !mv.AtLeast(microversion.ForbiddenAggregates) {
			t.Fatalf("forbidden member_of accepted at %s", mv)
		}
		for _, g := range got.Required {
			for _, u := range g {
				if !IsUUIDLike(u) {
					t.Fatalf("accepted %q", u)
				}
			}
		}
		for _, u := range got.Forbidden {
			if !IsUUIDLike(u) {
				t.Fatalf("accepted forbidden %q", u)
			}
		}
	})
}
