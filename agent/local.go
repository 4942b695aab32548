package agent

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/placement-syncd/placement-syncd/drivers"
	"github.com/placement-syncd/placement-syncd/internal/httpserve"
	"github.com/placement-syncd/placement-syncd/internal/localapi"
)

// answer is how the local endpoint writes JSON: compact, one line.
const answer = localapi.Compact

// LocalHandler serves the agent's local endpoint, for the CLI and
// operators on the host. Every request needs X-Auth-Token equal to token;
// an empty token refuses every request.
//
//	POST /v1/resync         ask for a pass now (202)
//	POST /v1/fpga/program   {"device","image","force"} -> ProgramResult;
//	                        200 success, 400 bad body, 404 unknown device,
//	                        409 refused or busy, 502 failure, 504 timeout,
//	                        503 Placement not read or written
//	POST /v1/fpga/clear     {"device"} -> ProgramResult; clears a failed
//	                        programming (200), 404 unknown device, 409 when
//	                        not failed
//	GET  /v1/status         last pass results and device states
//	GET  /v1/service        the ServiceRecord
//
// Every error answer carries the error's text in "error".
func (a *Agent) LocalHandler(token string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/resync", func(w http.ResponseWriter, r *http.Request) {
		a.Resync()
		answer.WriteJSON(w, http.StatusAccepted, map[string]string{"status": "resync requested"})
	})
	mux.HandleFunc("POST /v1/fpga/program", a.serveProgram)
	mux.HandleFunc("POST /v1/fpga/clear", a.serveClear)
	mux.HandleFunc("GET /v1/status", a.serveStatus)
	mux.HandleFunc("GET /v1/service", func(w http.ResponseWriter, r *http.Request) {
		answer.WriteJSON(w, http.StatusOK, a.ServiceRecord())
	})
	return localapi.Guard{Token: token, Refusal: "a valid X-Auth-Token is required", Style: answer}.Wrap(mux)
}

// ProgramRequest is the body of POST /v1/fpga/program.
type ProgramRequest struct {
	Device string `json:"device"`
	Image  string `json:"image"`
	Force  bool   `json:"force"`
}

func (a *Agent) serveProgram(w http.ResponseWriter, r *http.Request) {
	var req ProgramRequest
	if msg := badRequest(w, r, &req, true); msg != "" {
		answer.WriteError(w, http.StatusBadRequest, msg)
		return
	}
	res, err := a.Program(r.Context(), req.Device, req.Image, req.Force)
	if err != nil && res.Error == "" {
		res.Error = err.Error()
	}
	answer.WriteJSON(w, programStatus(res, err), res)
}

// badRequest decodes a programming (withImage) or clear request into req
// and says what is wrong with it, or "".
func badRequest(w http.ResponseWriter, r *http.Request, req *ProgramRequest, withImage bool) string {
	want := `body must be {"device": ...}`
	if withImage {
		want = `body must be {"device": ..., "image": ..., "force": bool}`
	}
	switch err := localapi.DecodeJSON(w, r, req); {
	case err != nil:
		return want + ": " + err.Error()
	case req.Device == "":
		return want + ": device is missing"
	case withImage && req.Image == "":
		return want + ": image is missing"
	}
	return ""
}

// programStatus is the status of a programming request's answer: the
// caller's mistakes (unknown device, nothing programs devices) and
// refusals are told apart from the device's and Placement's failures.
func programStatus(res ProgramResult, err error) int {
	switch {
	case err == nil:
		return http.StatusOK
	case errors.Is(err, drivers.ErrUnknownDevice), errors.Is(err, ErrNoProgrammer):
		return http.StatusNotFound
	case res.Result == "refused", errors.Is(err, ErrDeviceInUse), errors.Is(err, drivers.ErrDeviceBusy):
		return http.StatusConflict
	case res.Result == "timeout":
		return http.StatusGatewayTimeout
	case res.Result == "failure":
		return http.StatusBadGateway
	}
	// Placement could not be read or written, or the driver is not set
	// up to program (no command): nothing the request can change.
	return http.StatusServiceUnavailable
}

func (a *Agent) serveClear(w http.ResponseWriter, r *http.Request) {
	var req ProgramRequest
	if msg := badRequest(w, r, &req, false); msg != "" {
		answer.WriteError(w, http.StatusBadRequest, msg)
		return
	}
	res, err := a.ClearFailed(r.Context(), req.Device)
	status := http.StatusOK
	switch {
	case err == nil:
	case res.Result == "cleared":
		status = http.StatusServiceUnavailable // Placement not updated yet
	case errors.Is(err, ErrNoProgrammer), errors.Is(err, drivers.ErrUnknownDevice):
		status = http.StatusNotFound
	default:
		status = http.StatusConflict
	}
	if err != nil {
		res.Error = err.Error()
	}
	answer.WriteJSON(w, status, res)
}

func (a *Agent) serveStatus(w http.ResponseWriter, r *http.Request) {
	results, lastOK := a.LastResults()
	type driverStatus struct {
		Driver      string         `json:"driver"`
		Providers   int            `json:"providers"`
		Writes      int            `json:"writes"`
		Conflicts   int            `json:"conflicts"`
		Unavailable map[string]int `json:"unavailable"`
		Deferred    int            `json:"deferred"`
		Error       string         `json:"error,omitempty"`
	}
	out := struct {
		LastSuccess time.Time      `json:"last_success,omitzero"`
		Drivers     []driverStatus `json:"drivers"`
		Devices     any            `json:"devices,omitempty"`
	}{LastSuccess: lastOK}
	for _, res := range results {
		ds := driverStatus{Driver: res.Driver, Providers: res.Providers, Writes: res.Writes, Conflicts: res.Conflicts,
			Unavailable: res.Unavailable, Deferred: res.Deferred}
		if res.Err != nil {
			ds.Error = res.Err.Error()
		}
		out.Drivers = append(out.Drivers, ds)
	}
	for _, d := range a.opts.Drivers {
		if s, ok := d.(interface{ StatusJSON() any }); ok {
			out.Devices = s.StatusJSON()
		}
	}
	answer.WriteJSON(w, http.StatusOK, out)
}

// ServeLocal serves LocalHandler on ln until ctx ends.
func (a *Agent) ServeLocal(ctx context.Context, ln net.Listener, token string) error {
	srv := &http.Server{Handler: a.LocalHandler(token), ReadHeaderTimeout: 10 * time.Second}
	// A shutdown cut short by the grace period is not an error here.
	served, _ := httpserve.Run(ctx, srv, ln, 5*time.Second)
	return served
}
