// Package computeapi is the JSON client of Nova's compute API that the
// Nova harnesses (testkit/novatest, testkit/novafull) and their tests
// call: one request with an identity and a microversion, its status and
// body, a JSON answer decoded. Each harness sets the identity, the
// microversion and the timeout its Nova wants.
package computeapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"syscall"
	"time"

	"github.com/placement-syncd/placement-syncd/testkit/svcproc"
)

// Client calls one compute API.
type Client struct {
	// Endpoint is the compute API with its version, http://127.0.0.1:N/v2.1.
	Endpoint string
	// Microversion is the compute microversion every request asks for.
	Microversion string
	// Project is the project Do and Call act for.
	Project string
	// Identity sets the headers that say who asks, on behalf of project.
	Identity func(h http.Header, project string)
	// Timeout bounds one call, its retries included.
	Timeout time.Duration
	// FreshConnections sends each request on a connection of its own and
	// sends it again (twice at the most) when that connection is reset or
	// closed before an answer. Only for a server that does so before
	// reading the request (uWSGI's http-socket, whose idle connections
	// close just as a request is sent on them): a request it had served
	// would be served twice.
	FreshConnections bool
	// ServerLog, when set, is the server's log: the end of it goes with an
	// exchange that failed.
	ServerLog func() string
}

// Do sends one request (path relative to Endpoint) on behalf of Project
// and decodes a JSON answer under 300 into out when out is not nil.
func (c *Client) Do(ctx context.Context, method, path string, body, out any) (int, []byte, error) {
	return c.DoAs(ctx, c.Project, method, path, body, out)
}

// DoAs is Do on behalf of project.
func (c *Client) DoAs(ctx context.Context, project, method, path string, body, out any) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	var b []byte
	if body != nil {
		var err error
		if b, err = json.Marshal(body); err != nil {
			return 0, nil, fmt.Errorf("computeapi: %s %s: %w", method, path, err)
		}
	}
	resp, err := c.send(ctx, project, method, path, b)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, nil, fmt.Errorf("computeapi: %s %s: %w", method, path, err)
	}
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(data, out); err != nil {
			return resp.StatusCode, data, fmt.Errorf("computeapi: %s %s: decode: %w", method, path, err)
		}
	}
	return resp.StatusCode, data, nil
}

// send sends the request, again on a reset or closed fresh connection
// when FreshConnections says that the server had not read it.
func (c *Client) send(ctx context.Context, project, method, path string, body []byte) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		req, err := c.request(ctx, project, method, path, body)
		if err != nil {
			return nil, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			return resp, nil
		}
		if c.FreshConnections && (errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF)) && attempt < 2 {
			continue
		}
		if c.ServerLog != nil {
			return nil, fmt.Errorf("computeapi: %s %s: %w\nserver log:\n%s", method, path, err, svcproc.Tail(c.ServerLog(), 2000))
		}
		return nil, fmt.Errorf("computeapi: %s %s: %w", method, path, err)
	}
}

func (c *Client) request(ctx context.Context, project, method, path string, body []byte) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.Endpoint+path, rd)
	if err != nil {
		return nil, fmt.Errorf("computeapi: %w", err)
	}
	c.Identity(req.Header, project)
	req.Header.Set("OpenStack-API-Version", "compute "+c.Microversion)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Close = c.FreshConnections
	return req, nil
}

// Call is Do that wants one status code.
func (c *Client) Call(ctx context.Context, want int, method, path string, body, out any) error {
	code, data, err := c.Do(ctx, method, path, body, out)
	if err != nil {
		return err
	}
	if code != want {
		return fmt.Errorf("computeapi: %s %s: %d, want %d: %s", method, path, code, want, data)
	}
	return nil
}

// ComputeServices lists the ids of host's nova-compute services (uuids
// from microversion 2.53).
func (c *Client) ComputeServices(ctx context.Context, host string) ([]string, error) {
	var out struct {
		Services []struct {
			ID string `json:"id"`
		} `json:"services"`
	}
	q := url.Values{"binary": {"nova-compute"}, "host": {host}}
	if err := c.Call(ctx, http.StatusOK, http.MethodGet, "/os-services?"+q.Encode(), nil, &out); err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(out.Services))
	for _, s := range out.Services {
		ids = append(ids, s.ID)
	}
	return ids, nil
}
