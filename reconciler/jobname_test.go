package reconciler

import (
	"errors"
	"net/http"
	"slices"
	"testing"
)

// TestEndpoint_JobNameMatchesConfigKey: the stamping job is configured
// as jobs.owner_traits and answers to that name on the endpoint; its
// older spelling owner-traits still reaches it, in the endpoint and in
// the schedules.
func TestEndpoint_JobNameMatchesConfigKey(t *testing.T) {
	t.Parallel()
	for _, configured := range []string{"owner_traits", "owner-traits"} {
		f := newRunnerFixture(t, Options{Jobs: map[string]string{configured: "@every 1h"}})
		h := f.r.Handler()
		for _, name := range []string{"owner_traits", "owner-traits"} {
			if status, body := endpointDo(t, h, http.MethodPost, "/v1/jobs/"+name+"/run", "", ""); status != http.StatusOK {
				t.Errorf("configured %s: POST /v1/jobs/%s/run: %d %s", configured, name, status, body)
			}
		}
		if jobs := f.r.Jobs(); len(jobs) != 1 || jobs[0].Name != "owner_traits" || len(jobs[0].Runs) != 2 {
			t.Errorf("configured %s: jobs = %+v, want owner_traits with 2 runs", configured, jobs)
		}
	}
}

// TestJobs_NamesAndPrerequisites: JobNames lists every job in start
// order; the aggregates job scheduled without a Nova source is left out,
// not refused, while the others are scheduled; an unknown name is still
// an error.
func TestJobs_NamesAndPrerequisites(t *testing.T) {
	t.Parallel()
	if got := JobNames(); !slices.Equal(got, []string{JobAggregates, JobOwnerTraits, JobAudit}) {
		t.Errorf("JobNames() = %v", got)
	}
	pl := FromClient(nil) // no run reaches Placement here
	r, err := New(Options{Placement: pl, Jobs: map[string]string{JobAggregates: "@every 1h", JobOwnerTraits: "@every 1h"}})
	if err != nil {
		t.Fatal(err)
	}
	if jobs := r.Jobs(); len(jobs) != 1 || jobs[0].Name != JobOwnerTraits {
		t.Errorf("without Nova: jobs %+v, want owner_traits only", jobs)
	}
	if _, err := New(Options{Placement: pl, Jobs: map[string]string{"nope": "@every 1h"}}); !errors.Is(err, ErrUnknownJob) {
		t.Errorf("unknown job: %v, want ErrUnknownJob", err)
	}
}
