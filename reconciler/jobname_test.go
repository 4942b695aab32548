package reconciler

import (
	"net/http"
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
