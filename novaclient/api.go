package novaclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/pagination"
)

// Microversion is the compute API microversion every request asks
// for: 2.41 added aggregate uuids, 2.53 made hypervisor ids the compute
// node (and resource provider) uuids, 2.61 lists flavors with their
// extra specs, and 2.69 lists the services of a cell Nova cannot read
// (status UNKNOWN) instead of leaving them out.
const Microversion = "2.69"

// DefaultTimeout bounds each Nova listing: above Nova's own cell
// timeout (60 s), so that a hung cell shows as Nova's own answer (the
// cell's computes UNKNOWN, or left out) rather than as our timeout.
const DefaultTimeout = 90 * time.Second

// API reads Nova's state through the compute API.
type API struct {
	client *gophercloud.ServiceClient
	// Timeout bounds each listing, all its pages (0: DefaultTimeout).
	Timeout time.Duration
}

func (n *API) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if n.Timeout <= 0 {
		return context.WithTimeout(ctx, DefaultTimeout)
	}
	return context.WithTimeout(ctx, n.Timeout)
}

// NewAPI wraps a compute client; it works on a copy pinned to
// Microversion, so the caller's client is left as it was.
func NewAPI(client *gophercloud.ServiceClient) *API {
	c := *client
	c.Microversion = Microversion
	if c.Type == "" {
		// Without a type gophercloud sends no microversion header at all.
		c.Type = "compute"
	}
	return &API{client: &c}
}

// State implements Source: all aggregates, then every page of
// hypervisors.
func (n *API) State(ctx context.Context) (State, error) {
	actx, cancel := n.bound(ctx)
	defer cancel()
	aggs, err := listAll[novaAggregateJSON](actx, n.client, "aggregates", "os-aggregates")
	if err != nil {
		return State{}, fmt.Errorf("%w: list aggregates: %w", ErrUnavailable, err)
	}
	hctx, hcancel := n.bound(ctx)
	defer hcancel()
	hvs, err := listAll[novaHypervisorJSON](hctx, n.client, "hypervisors", "os-hypervisors", "detail")
	if err != nil {
		return State{}, fmt.Errorf("%w: list hypervisors: %w", ErrUnavailable, err)
	}
	st, err := novaStateFromJSON(aggs, hvs)
	if err != nil {
		return State{}, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return st, nil
}

// listAll reads every page of a Nova list at path (query included), decoding
// the items under key as T, in order. gophercloud's own pages take any
// 200, 204 or 300 answer without the key for an empty list; here only a
// 200 that carries the key is a list, so a wrong endpoint or a missing
// token is an error, never "Nova has nothing".
func listAll[T any](ctx context.Context, client *gophercloud.ServiceClient, key string, path ...string) ([]T, error) {
	url := client.ServiceURL(path...)
	pager := pagination.NewPager(client, url, func(r pagination.PageResult) pagination.Page {
		return keyedPage{PageResult: r, key: key}
	})
	var all []T
	err := pager.EachPage(ctx, func(_ context.Context, p pagination.Page) (bool, error) {
		var page []T
		if err := p.(keyedPage).ExtractIntoSlicePtr(&page, key); err != nil {
			return false, err
		}
		all = append(all, page...)
		return true, nil
	})
	return all, err
}

// keyedPage is one page of a Nova list: {"<key>": [...], "<key>_links": [...]}.
type keyedPage struct {
	pagination.PageResult
	key string
}

// IsEmpty refuses an answer that is not a list: gophercloud stops at the
// first empty page without an error, so this is where a 300 or a 204 is
// caught.
func (p keyedPage) IsEmpty() (bool, error) {
	if p.StatusCode != http.StatusOK {
		return false, fmt.Errorf("%s: answered %d, not a list (%s)", p.URL.Redacted(), p.StatusCode, answerHint(p.StatusCode))
	}
	body, ok := p.Body.(map[string]any)
	if !ok {
		return false, fmt.Errorf("%s: answer is not a JSON object", p.URL.Redacted())
	}
	items, ok := body[p.key].([]any)
	if !ok {
		return false, fmt.Errorf("%s: answer has no %q list", p.URL.Redacted(), p.key)
	}
	return len(items) == 0, nil
}

// NextPageURL follows the "<key>_links" next link.
func (p keyedPage) NextPageURL() (string, error) {
	var doc map[string]json.RawMessage
	if err := p.ExtractInto(&doc); err != nil {
		return "", err
	}
	raw, ok := doc[p.key+"_links"]
	if !ok {
		return "", nil // the last (or only) page
	}
	var links []gophercloud.Link
	if err := json.Unmarshal(raw, &links); err != nil {
		return "", fmt.Errorf("%s_links: %w", p.key, err)
	}
	return gophercloud.ExtractNextURL(links)
}

// ResourceKey implements pagination.KeyedPage.
func (p keyedPage) ResourceKey() string { return p.key }

func answerHint(code int) string {
	switch code {
	case http.StatusMultipleChoices:
		return "a version document: is the endpoint missing /v2.1?"
	case http.StatusNoContent:
		return "no content: Nova's noauth2 answers so without a token"
	}
	return "unexpected status"
}

// GetBody implements pagination.Page.
func (p keyedPage) GetBody() any { return p.Body }
