package audit

import (
	"testing"
	"time"
)

// TestAudit_FreshWithoutLastModified: a consumer whose answer carries no
// time of change is fresh for the job until it has been seen for the
// grace period, and forgotten once gone; for the one-shot audit (no
// memory) it is never old enough to touch.
func TestAudit_FreshWithoutLastModified(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	job := &Auditor{Grace: 10 * time.Minute, Remember: true}
	if fresh, why := job.fresh("c", ConsumerInfo{}, t0); !fresh {
		t.Fatalf("first sight: not fresh (%s)", why)
	}
	if fresh, why := job.fresh("c", ConsumerInfo{}, t0.Add(9*time.Minute)); !fresh {
		t.Fatalf("after 9m: not fresh (%s)", why)
	}
	if fresh, why := job.fresh("c", ConsumerInfo{}, t0.Add(10*time.Minute)); fresh {
		t.Fatalf("after 10m: still fresh (%s)", why)
	}
	job.forget(map[string]bool{})
	if fresh, _ := job.fresh("c", ConsumerInfo{}, t0.Add(20*time.Minute)); !fresh {
		t.Fatal("a consumer gone and back is not seen anew")
	}
	cli := &Auditor{Grace: 10 * time.Minute}
	if fresh, _ := cli.fresh("c", ConsumerInfo{}, t0.Add(24*time.Hour)); !fresh {
		t.Fatal("without memory nor Last-Modified a consumer was judged old")
	}
	if fresh, _ := cli.fresh("c", ConsumerInfo{Changed: t0}, t0.Add(11*time.Minute)); fresh {
		t.Fatal("Last-Modified 11m ago with a 10m grace: fresh")
	}
}

// TestAudit_NovaConsumer: Nova's consumers by type, else by the classes
// they hold; another service's type is never Nova's.
func TestAudit_NovaConsumer(t *testing.T) {
	nodes := map[string]bool{"node": true}
	for _, c := range []struct {
		info ConsumerInfo
		want bool
	}{
		{ConsumerInfo{Type: "INSTANCE", Providers: map[string]map[string]int64{"x": {"CUSTOM_X": 1}}}, true},
		{ConsumerInfo{Type: "MIGRATION"}, true},
		{ConsumerInfo{Type: "BLAZAR_RESERVATION", Providers: map[string]map[string]int64{"node": {"VCPU": 1}}}, false},
		{ConsumerInfo{Providers: map[string]map[string]int64{"x": {"MEMORY_MB": 1}}}, true},
		{ConsumerInfo{Type: "unknown", Providers: map[string]map[string]int64{"node": {"CUSTOM_BAREMETAL_GOLD": 1}}}, true},
		{ConsumerInfo{Providers: map[string]map[string]int64{"child": {"CUSTOM_RESERVATION_1": 1}}}, false},
	} {
		if got := novaConsumer(c.info, nodes, nil); got != c.want {
			t.Errorf("novaConsumer(%+v) = %v, want %v", c.info, got, c.want)
		}
	}
}
