package reconciler

import (
	"reflect"
	"testing"
)

func TestEvaluateGate(t *testing.T) {
	rec := func(host string, v int) ServiceRecord {
		return ServiceRecord{Host: host, Binary: ComputeBinary, Version: v}
	}
	tests := []struct {
		name     string
		in       GateInput
		open     bool
		min      int
		computes int
		behind   []string
	}{
		{name: "no records: closed", in: GateInput{Required: 73}},
		{name: "all new: open", in: GateInput{Required: 73, Records: []ServiceRecord{rec("a", 73), rec("b", 80)}}, open: true, min: 73, computes: 2},
		{name: "one old compute: closed", in: GateInput{Required: 73, Records: []ServiceRecord{rec("a", 73), rec("old", 72)}}, min: 72, computes: 2, behind: []string{"old"}},
		{name: "deleted old compute ignored", in: GateInput{Required: 73, Records: []ServiceRecord{rec("a", 74), {Host: "old", Binary: ComputeBinary, Version: 60, Deleted: true}}}, open: true, min: 74, computes: 1},
		{name: "forced-down old compute ignored", in: GateInput{Required: 73, Records: []ServiceRecord{rec("a", 74), {Host: "old", Binary: ComputeBinary, Version: 60, ForcedDown: true}}}, open: true, min: 74, computes: 1},
		{name: "version 0 ignored as Nova does", in: GateInput{Required: 73, Records: []ServiceRecord{rec("a", 74), rec("b", 0)}}, open: true, min: 74, computes: 1},
		{name: "other binaries ignored", in: GateInput{Required: 73, Records: []ServiceRecord{rec("a", 74), {Host: "c", Binary: "nova-conductor", Version: 1}}}, open: true, min: 74, computes: 1},
		{name: "override open", in: GateInput{Required: 73, Override: GateOpen, Records: []ServiceRecord{rec("old", 1)}}, open: true, min: 1, computes: 1, behind: []string{"old"}},
		{name: "override closed", in: GateInput{Required: 73, Override: GateClosed, Records: []ServiceRecord{rec("a", 99)}}, min: 99, computes: 1},
		{name: "configured minimum", in: GateInput{Required: 80, Records: []ServiceRecord{rec("a", 79)}}, min: 79, computes: 1, behind: []string{"a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := EvaluateGate(tt.in)
			if got.Open != tt.open || got.MinVersion != tt.min || got.Computes != tt.computes || !reflect.DeepEqual(got.Behind, tt.behind) {
				t.Fatalf("got %+v", got)
			}
			if got.Reason == "" {
				t.Fatal("no reason")
			}
		})
	}
}

func TestMergeRecords(t *testing.T) {
	hb := []ServiceRecord{{Host: "a", Binary: ComputeBinary, Version: 60}, {Host: "b", Binary: ComputeBinary, Version: 73}}
	cfg := []ServiceRecord{{Host: "a", Binary: ComputeBinary, Version: 60, Deleted: true}}
	got := mergeRecords(hb, cfg)
	if len(got) != 2 || !got[0].Deleted || got[1].Host != "b" {
		t.Fatalf("merge = %+v", got)
	}
}
