package reconciler

import (
	"errors"
	"net/http"

	"github.com/placement-syncd/placement-syncd/internal/localapi"
)

// answer is how the endpoint writes JSON: indented, for operators
// reading it with curl.
const answer = localapi.Indented

// Handler serves the reconciler's local endpoint:
//
//	GET  /v1/gate              the version gate
//	POST /v1/gate              {"override": "open|closed|auto"}, recorded
//	GET  /v1/services          the service records the gate decides from
//	POST /v1/services          a heartbeat: {"host","binary","version",...}
//	GET  /v1/jobs              jobs, schedules and recent runs
//	POST /v1/jobs/{name}/run   run a job now (409 while it runs)
//
// Answers are JSON; errors are {"error": "..."} (the router's own 404
// and 405 are plain text). With Options.Token set, a request without the
// token (as X-Auth-Token or a bearer token) or with a wrong one gets 401
// before routing.
func (r *Reconciler) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/gate", func(w http.ResponseWriter, _ *http.Request) {
		answer.WriteJSON(w, http.StatusOK, r.Gate())
	})
	mux.HandleFunc("GET /v1/services", func(w http.ResponseWriter, _ *http.Request) {
		answer.WriteJSON(w, http.StatusOK, map[string]any{"services": r.Services()})
	})
	mux.HandleFunc("POST /v1/gate", func(w http.ResponseWriter, req *http.Request) {
		var body struct {
			Override string `json:"override"`
		}
		if err := localapi.DecodeJSON(w, req, &body); err != nil {
			answer.WriteError(w, http.StatusBadRequest, err.Error())
			return
		}
		if err := r.SetGateOverride(body.Override); err != nil {
			answer.WriteError(w, http.StatusBadRequest, err.Error())
			return
		}
		answer.WriteJSON(w, http.StatusOK, r.Gate())
	})
	mux.HandleFunc("POST /v1/services", r.serveHeartbeat)
	mux.HandleFunc("GET /v1/jobs", func(w http.ResponseWriter, _ *http.Request) {
		answer.WriteJSON(w, http.StatusOK, map[string]any{"jobs": r.Jobs(), "leadership": r.Leadership()})
	})
	mux.HandleFunc("POST /v1/jobs/{name}/run", func(w http.ResponseWriter, req *http.Request) {
		rec, err := r.RunJob(req.Context(), req.PathValue("name"))
		switch {
		case errors.Is(err, ErrUnknownJob):
			answer.WriteError(w, http.StatusNotFound, err.Error())
		case errors.Is(err, ErrJobBusy):
			answer.WriteError(w, http.StatusConflict, err.Error())
		default:
			// A failed run is still a recorded run: 200 with result error.
			answer.WriteJSON(w, http.StatusOK, rec)
		}
	})
	if r.opts.Token == "" {
		return mux
	}
	return localapi.Guard{Token: r.opts.Token, Bearer: true, Refusal: "a valid token is required", Style: answer}.Wrap(mux)
}

func (r *Reconciler) serveHeartbeat(w http.ResponseWriter, req *http.Request) {
	var rec ServiceRecord
	if err := localapi.DecodeJSON(w, req, &rec); err != nil {
		answer.WriteError(w, http.StatusBadRequest, err.Error())
		return
	}
	if err := rec.Validate(); err != nil {
		answer.WriteError(w, http.StatusBadRequest, err.Error())
		return
	}
	// With a token every request here passed the guard; without one
	// the record is kept but gives the gate no version.
	if err := r.heartbeat(rec, r.opts.Token != ""); err != nil {
		answer.WriteError(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
