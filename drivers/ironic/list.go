package ironic

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"
	"go.uber.org/zap"

	"github.com/placement-syncd/placement-syncd/internal/backoff"
)

// listRetry bounds how often a listing starts over after the node it
// paged from was deleted between two pages (Ironic answers 404 for that
// marker): 3 tries, at once (nothing to wait for: the next listing starts
// from the first page).
func listRetry() backoff.Policy { return backoff.Policy{Attempts: 3} }

// maxPages stops a server whose pages never end; at Ironic's default
// max_limit of 1000 it is ten million nodes.
const maxPages = 10000

// nodeFields are the fields the driver reads, asked of GET /v1/nodes
// rather than the whole documents of /v1/nodes/detail: a page of 1000
// nodes is then 16 times smaller, and Ironic answers it twice as fast.
// All are in node documents from microversion 1.46 on.
const nodeFields = "uuid,resource_class,traits,maintenance,provision_state,power_state,instance_uuid,conductor_group"

// nodePage is one answer of GET /v1/nodes. Ironic marks a full
// page with a top-level "next" link (not "nodes_links", which the
// gophercloud pager looks for, so it stops after the first page).
type nodePage struct {
	Nodes []nodes.Node `json:"nodes"`
	Next  string       `json:"next"`
}

// listNodes reads every page of the node list. It pages with limit and
// marker itself rather than following "next": Ironic's next link keeps
// only sort, limit and marker, dropping the conductor_group and shard
// filters. A listing that cannot be read to its end is an error, so that
// no node on an unread page is taken for deleted.
func (d *Driver) listNodes(ctx context.Context) ([]nodes.Node, error) {
	start := time.Now()
	retry := listRetry()
	for attempt := 1; ; attempt++ {
		ns, pages, err := d.listOnce(ctx)
		if err == nil {
			d.log.Debug("nodes listed", zap.Int("nodes", len(ns)), zap.Int("pages", pages),
				zap.Int("attempts", attempt), zap.Duration("duration", time.Since(start).Round(time.Millisecond)))
			return ns, nil
		}
		if !errors.Is(err, errMarkerGone) {
			return nil, err
		}
		d.log.Info("node list started over", zap.Error(err), zap.Int("attempt", attempt))
		if attempt >= retry.Attempts {
			return nil, err
		}
	}
}

var errMarkerGone = errors.New("the node paged from was deleted during the listing")

// listOnce reads the pages from the first; it returns the nodes and how
// many pages that took.
func (d *Driver) listOnce(ctx context.Context) ([]nodes.Node, int, error) {
	base := d.client.ServiceURL("nodes")
	q := url.Values{}
	if d.opts.ConductorGroup != "" {
		// Ironic stores groups in lower case, and matches the filter as
		// given.
		q.Set("conductor_group", strings.ToLower(d.opts.ConductorGroup))
	}
	if d.opts.Shard != "" {
		q.Set("shard", d.opts.Shard)
	}
	if d.opts.PageSize > 0 {
		q.Set("limit", strconv.Itoa(d.opts.PageSize))
	}
	var all []nodes.Node
	for page := 1; ; page++ {
		if page > maxPages {
			return nil, page, fmt.Errorf("ironic: list nodes: more than %d pages", maxPages)
		}
		var p nodePage
		u := base + "?fields=" + nodeFields
		if len(q) > 0 {
			u += "&" + q.Encode()
		}
		_, err := d.client.Get(ctx, u, &p, &gophercloud.RequestOpts{OkCodes: []int{http.StatusOK}})
		switch {
		case err != nil && q.Has("marker") && gophercloud.ResponseCodeIs(err, http.StatusNotFound):
			return nil, page, fmt.Errorf("ironic: list nodes, page %d: %w", page, errMarkerGone)
		case err != nil && d.opts.Shard != "" && gophercloud.ResponseCodeIs(err, http.StatusNotAcceptable):
			return nil, page, fmt.Errorf("ironic: list nodes of shard %q (shards need API microversion %s): %w", d.opts.Shard, ShardMicroversion, err)
		case err != nil:
			return nil, page, fmt.Errorf("ironic: list nodes, page %d: %w", page, err)
		}
		all = append(all, p.Nodes...)
		if p.Next == "" || len(p.Nodes) == 0 {
			return all, page, nil
		}
		last := p.Nodes[len(p.Nodes)-1].UUID
		if last == "" || last == q.Get("marker") {
			return nil, page, fmt.Errorf("ironic: list nodes, page %d: the listing does not advance (marker %q)", page, last)
		}
		q.Set("marker", last)
	}
}
