package policy

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// remoteChecker performs oslo.policy's http: and https: checks: POST the
// rule name, target and credentials (form fields holding JSON, upstream's
// default remote_content_type) to the URL; the check passes when the
// answer's body is exactly True (optionally in double quotes). Any
// failure to get an answer denies.
type remoteChecker struct {
	client  *http.Client
	timeout time.Duration
}

func newRemoteChecker(opts Options) *remoteChecker {
	timeout := opts.RemoteTimeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	client := opts.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: timeout}
	}
	return &remoteChecker{client: client, timeout: timeout}
}

func (rc *remoteChecker) check(n *node, x *evalCtx) bool {
	target, ok := n.tmpl.render(x)
	if !ok {
		return false
	}
	rule, _ := json.Marshal(strings.Clone(x.rule))
	tj, _ := json.Marshal(targetMap(x.t))
	cj, _ := json.Marshal(credsMap(x.c))
	form := url.Values{"rule": {string(rule)}, "target": {string(tj)}, "credentials": {string(cj)}}
	ctx, cancel := context.WithTimeout(context.Background(), rc.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.Clone(target), strings.NewReader(form.Encode()))
	if err != nil {
		return false
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := rc.client.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if err != nil {
		return false
	}
	return strings.TrimRight(strings.TrimLeft(string(body), `"`), `"`) == "True"
}

func jsonValue(v Value) any {
	if v.state != valueString {
		return nil
	}
	// A copy, so that enforcement's arguments do not escape to the heap
	// for the sake of this rarely used check.
	return strings.Clone(v.s)
}

func cloneAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strings.Clone(s)
	}
	return out
}

func targetMap(t *Target) map[string]any {
	m := map[string]any{}
	if t.ProjectID.state != valueMissing {
		m["project_id"] = jsonValue(t.ProjectID)
	}
	if t.UserID.state != valueMissing {
		m["user_id"] = jsonValue(t.UserID)
	}
	return m
}

func credsMap(c *Credentials) map[string]any {
	roles, sroles := cloneAll(c.Roles), cloneAll(c.ServiceRoles)
	m := map[string]any{
		"user_id":                   jsonValue(c.UserID),
		"user_domain_id":            jsonValue(c.UserDomainID),
		"system_scope":              jsonValue(c.SystemScope),
		"domain_id":                 jsonValue(c.DomainID),
		"project_id":                jsonValue(c.ProjectID),
		"project_domain_id":         jsonValue(c.ProjectDomainID),
		"roles":                     roles,
		"is_admin_project":          c.IsAdminProject,
		"service_user_id":           jsonValue(c.ServiceUserID),
		"service_user_domain_id":    jsonValue(c.ServiceUserDomainID),
		"service_project_id":        jsonValue(c.ServiceProjectID),
		"service_project_domain_id": jsonValue(c.ServiceProjectDomainID),
		"service_roles":             sroles,
	}
	if c.SystemScope.Truthy() {
		m["system"] = strings.Clone(c.SystemScope.s)
	}
	return m
}
