package reconciler

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
)

// Handler serves the reconciler's local endpoint:
//
//	GET  /v1/gate              the version gate
//	GET  /v1/services          the service records the gate decides from
//	POST /v1/services          a heartbeat: {"host","binary","version",...}
//	GET  /v1/jobs              jobs, schedules and recent runs
//	POST /v1/jobs/{name}/run   run a job now (409 while it runs)
//
// Answers are JSON; errors are {"error": "..."} (the router's own 404
// and 405 are plain text). With Options.Token set, a request without the
// token or with a wrong one gets 401 before routing; there is no 403, as
// the endpoint has one credential and no roles.
func (r *Reconciler) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/gate", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, r.Gate())
	})
	mux.HandleFunc("GET /v1/services", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"services": r.Services()})
	})
	mux.HandleFunc("POST /v1/services", r.serveHeartbeat)
	mux.HandleFunc("GET /v1/jobs", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"jobs": r.Jobs()})
	})
	mux.HandleFunc("POST /v1/jobs/{name}/run", func(w http.ResponseWriter, req *http.Request) {
		rec, err := r.RunJob(req.Context(), req.PathValue("name"))
		switch {
		case errors.Is(err, ErrUnknownJob):
			writeError(w, http.StatusNotFound, err)
		case errors.Is(err, ErrJobBusy):
			writeError(w, http.StatusConflict, err)
		default:
			// A failed run is still a recorded run: 200 with result error.
			writeJSON(w, http.StatusOK, rec)
		}
	})
	if r.opts.Token == "" {
		return mux
	}
	return requireToken(r.opts.Token, mux)
}

func (r *Reconciler) serveHeartbeat(w http.ResponseWriter, req *http.Request) {
	var rec ServiceRecord
	dec := json.NewDecoder(io.LimitReader(req.Body, 1<<16))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rec); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	// One record per request: trailing data means a malformed body, not
	// a second heartbeat to ignore.
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		writeError(w, http.StatusBadRequest, errors.New("the body must hold one JSON object"))
		return
	}
	if err := rec.Validate(); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	if err := r.Heartbeat(rec); err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// requireToken refuses requests without the token, compared in constant
// time.
func requireToken(token string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		got := req.Header.Get("X-Auth-Token")
		if got == "" {
			got, _ = strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
		}
		if subtle.ConstantTimeCompare([]byte(got), []byte(token)) != 1 {
			writeError(w, http.StatusUnauthorized, errors.New("a valid token is required"))
			return
		}
		next.ServeHTTP(w, req)
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

func writeError(w http.ResponseWriter, status int, err error) {
	writeJSON(w, status, map[string]string{"error": err.Error()})
}
