package reconciler

import (
	"reflect"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/novaclient"
)

func TestEvaluateGate(t *testing.T) {
	rec := func(host string, v int) ServiceRecord {
		return ServiceRecord{Host: host, Binary: ComputeBinary, Version: v, Authenticated: true}
	}
	listed := func(hosts ...string) []novaclient.ComputeService {
		var out []novaclient.ComputeService
		for _, h := range hosts {
			out = append(out, novaclient.ComputeService{Host: h})
		}
		return out
	}
	cell := func(host string, v int) novaclient.ComputeService {
		return novaclient.ComputeService{Host: host, Version: v, Cell: "cell1"}
	}
	tests := []struct {
		name     string
		in       GateInput
		open     bool
		min      int
		computes int
		behind   []string
		unknown  []string
	}{
		{name: "list never read: closed", in: GateInput{Required: 73, Records: []ServiceRecord{rec("a", 80)}}},
		{name: "Nova lists none: closed", in: GateInput{Required: 73, Listed: true, Records: []ServiceRecord{rec("a", 80)}}},
		{name: "cell versions all new: open", in: GateInput{Required: 73, Listed: true, Computes: []novaclient.ComputeService{cell("a", 73), cell("b", 80)}}, open: true, min: 73, computes: 2},
		{name: "one cell compute at 72: closed", in: GateInput{Required: 73, Listed: true, Computes: []novaclient.ComputeService{cell("a", 73), cell("old", 72)}},
			min: 72, computes: 2, behind: []string{"old"}},
		{name: "heartbeat versions all new: open", in: GateInput{Required: 73, Listed: true, Computes: listed("a", "b"), Records: []ServiceRecord{rec("a", 73), rec("b", 74)}},
			open: true, min: 73, computes: 2},
		{name: "listed compute without a heartbeat: closed", in: GateInput{Required: 73, Listed: true, Computes: listed("a", "silent"), Records: []ServiceRecord{rec("a", 74)}},
			min: 74, computes: 2, unknown: []string{"silent"}},
		{name: "unauthenticated heartbeat gives no version", in: GateInput{Required: 73, Listed: true, Computes: listed("a"),
			Records: []ServiceRecord{{Host: "a", Binary: ComputeBinary, Version: 73}}}, computes: 1, unknown: []string{"a"}},
		{name: "heartbeat of a host Nova does not list counts for nothing", in: GateInput{Required: 73, Listed: true, Computes: listed("a"),
			Records: []ServiceRecord{rec("x", 73)}}, computes: 1, unknown: []string{"a"}},
		{name: "trusted record: decommissioned compute off the count", in: GateInput{Required: 73, Listed: true, Computes: listed("a", "gone"),
			Records: []ServiceRecord{rec("a", 74), {Host: "gone", Binary: ComputeBinary, Deleted: true, Authenticated: true}}}, open: true, min: 74, computes: 1},
		{name: "other binaries give no version", in: GateInput{Required: 73, Listed: true, Computes: listed("a"),
			Records: []ServiceRecord{{Host: "a", Binary: "nova-conductor", Version: 80, Authenticated: true}}}, computes: 1, unknown: []string{"a"}},
		{name: "override open", in: GateInput{Required: 73, Override: GateOpen, Listed: true, Computes: []novaclient.ComputeService{cell("old", 1)}}, open: true, min: 1, computes: 1, behind: []string{"old"}},
		{name: "override closed", in: GateInput{Required: 73, Override: GateClosed, Listed: true, Computes: []novaclient.ComputeService{cell("a", 99)}}, min: 99, computes: 1},
		{name: "configured minimum", in: GateInput{Required: 80, Listed: true, Computes: []novaclient.ComputeService{cell("a", 79)}}, min: 79, computes: 1, behind: []string{"a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := EvaluateGate(tt.in)
			if got.Open != tt.open || got.MinVersion != tt.min || got.Computes != tt.computes || !reflect.DeepEqual(got.Behind, tt.behind) || !reflect.DeepEqual(got.Unknown, tt.unknown) {
				t.Fatalf("got %+v", got)
			}
			if got.Reason == "" {
				t.Fatal("no reason")
			}
		})
	}
}

func TestMergeRecords(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	hb := []ServiceRecord{{Host: "a", Binary: ComputeBinary, Version: 60, UpdatedAt: at}, {Host: "b", Binary: ComputeBinary, Version: 73, UpdatedAt: at}}
	cfg := []ServiceRecord{{Host: "a", Binary: ComputeBinary, Version: 60, Deleted: true}, {Host: "c", Binary: ComputeBinary, Version: 73}}
	got := mergeRecords(hb, cfg)
	if len(got) != 3 || !got[0].Deleted || !got[0].Authenticated || got[1].Host != "b" || got[1].Authenticated || !got[2].Authenticated {
		t.Fatalf("merge = %+v", got)
	}
	// The configured record of a keeps a's last check-in; c never
	// checked in and has no time.
	if !got[0].UpdatedAt.Equal(at) || !got[2].UpdatedAt.IsZero() {
		t.Fatalf("merge times: a %v, c %v; want %v and none", got[0].UpdatedAt, got[2].UpdatedAt, at)
	}
}
