package candidates

import (
	"slices"
	"testing"
)

// TestPrefilterApply: every group but one asking for another owner's
// trait forbids OWNER_CYBORG, the unnumbered group included; the root
// requires OWNER_NOVA unless the request already speaks of the root's
// owner; non-scheduler users and a closed gate change nothing.
func TestPrefilterApply(t *testing.T) {
	req := func() Request {
		return Request{Groups: []Group{
			{Suffix: "", Resources: []Resource{{"VCPU", 1}}},
			{Suffix: "1", Resources: []Resource{{"VGPU", 1}}},
			{Suffix: "_ACC", Resources: []Resource{{"FPGA", 1}}, Required: [][]string{{"CUSTOM_X", "OWNER_CYBORG"}}},
			{Suffix: "2", Resources: []Resource{{"VGPU", 1}}, Forbidden: []string{"OWNER_CYBORG"}},
		}}
	}
	p, err := NewPrefilter(PrefilterOn, nil, []string{"nova"})
	if err != nil {
		t.Fatal(err)
	}
	r := req()
	p.Apply("nova", &r)
	if !slices.Equal(r.RootRequired, []string{"OWNER_NOVA"}) {
		t.Errorf("root_required = %v, want [OWNER_NOVA]", r.RootRequired)
	}
	for i, want := range [][]string{{"OWNER_CYBORG"}, {"OWNER_CYBORG"}, nil, {"OWNER_CYBORG"}} {
		if !slices.Equal(r.Groups[i].Forbidden, want) {
			t.Errorf("group %q forbidden = %v, want %v", r.Groups[i].Suffix, r.Groups[i].Forbidden, want)
		}
	}

	r = req()
	r.RootForbidden = []string{"OWNER_NOVA"}
	p.Apply("nova", &r)
	if len(r.RootRequired) != 0 || !slices.Equal(r.Groups[0].Forbidden, []string{"OWNER_CYBORG"}) {
		t.Errorf("root owner named by the request: root_required %v, group forbidden %v", r.RootRequired, r.Groups[0].Forbidden)
	}

	r = req()
	p.Apply("admin", &r)
	if len(r.RootRequired) != 0 || len(r.Groups[0].Forbidden) != 0 {
		t.Errorf("non-scheduler user rewritten: %+v", r)
	}
	closed, err := NewPrefilter(PrefilterAuto, gateValue(false), []string{"nova"})
	if err != nil {
		t.Fatal(err)
	}
	r = req()
	closed.Apply("nova", &r)
	if len(r.RootRequired) != 0 || len(r.Groups[1].Forbidden) != 0 {
		t.Errorf("closed gate rewrote: %+v", r)
	}
}

type gateValue bool

func (g gateValue) OwnerNovaGateOpen() bool { return bool(g) }
