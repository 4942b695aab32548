package audit

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/gophercloud/gophercloud/v2"
)

// Placement is what the audit reads from Placement, and the one
// write it makes (DELETE /allocations/{consumer}).
type Placement interface {
	// AuditProviders lists every provider; with required set, only those
	// having that trait.
	AuditProviders(ctx context.Context, required string) ([]Provider, error)
	// ProviderInventories returns a provider's inventories by class.
	ProviderInventories(ctx context.Context, provider string) (map[string]Inventory, error)
	// ProviderAllocations returns a provider's allocations: consumer,
	// class, amount.
	ProviderAllocations(ctx context.Context, provider string) (map[string]map[string]int64, error)
	// Consumer reads one consumer's allocations, owner, type and when
	// they last changed.
	Consumer(ctx context.Context, consumer string) (ConsumerInfo, error)
	// DeleteConsumer removes every allocation of consumer.
	DeleteConsumer(ctx context.Context, consumer string) error
}

// Provider is a resource provider as listed, what the audit names it by.
type Provider struct {
	UUID string `json:"uuid"`
	Name string `json:"name"`
}

// Inventory is the part of an inventory that makes capacity.
type Inventory struct {
	Total           int64   `json:"total"`
	Reserved        int64   `json:"reserved"`
	AllocationRatio float64 `json:"allocation_ratio"`
}

// Capacity is what may be allocated: (total − reserved) × ratio, as
// Placement computes it.
func (i Inventory) Capacity() float64 {
	return float64(i.Total-i.Reserved) * i.AllocationRatio
}

// ConsumerInfo is GET /allocations/{consumer} at 1.38.
type ConsumerInfo struct {
	Project, User string
	// Type is the consumer type (1.38), "" when the server has none.
	Type string
	// Providers maps provider to class to amount.
	Providers map[string]map[string]int64
	// Changed is the answer's Last-Modified: the newest creation or
	// update of its allocations (1.15); zero when the server sent none.
	Changed time.Time
}

// Microversion is what the audit asks Placement for: 1.14 gives
// providers their root, 1.15 Last-Modified, 1.38 consumer types.
const Microversion = "1.38"

// httpPlacement is the audit's Placement over its HTTP API.
type httpPlacement struct {
	sc *gophercloud.ServiceClient
}

// NewPlacement returns the audit's Placement client over sc; it
// works on a copy pinned to Microversion.
func NewPlacement(sc *gophercloud.ServiceClient) Placement {
	c := *sc
	c.Microversion = Microversion
	if c.Type == "" {
		// Without a type gophercloud sends no microversion header.
		c.Type = "placement"
	}
	return httpPlacement{sc: &c}
}

func (p httpPlacement) get(ctx context.Context, path string, out any) (*http.Response, error) {
	resp, err := p.sc.Get(ctx, p.sc.ServiceURL(path), out, &gophercloud.RequestOpts{OkCodes: []int{http.StatusOK}})
	if err != nil {
		return nil, fmt.Errorf("placement GET /%s: %w", path, err)
	}
	return resp, nil
}

func (p httpPlacement) AuditProviders(ctx context.Context, required string) ([]Provider, error) {
	path := "resource_providers"
	if required != "" {
		path += "?required=" + url.QueryEscape(required)
	}
	var doc struct {
		Providers []Provider `json:"resource_providers"`
	}
	if _, err := p.get(ctx, path, &doc); err != nil {
		return nil, err
	}
	return doc.Providers, nil
}

func (p httpPlacement) ProviderInventories(ctx context.Context, provider string) (map[string]Inventory, error) {
	var doc struct {
		Inventories map[string]Inventory `json:"inventories"`
	}
	_, err := p.get(ctx, "resource_providers/"+url.PathEscape(provider)+"/inventories", &doc)
	return doc.Inventories, err
}

func (p httpPlacement) ProviderAllocations(ctx context.Context, provider string) (map[string]map[string]int64, error) {
	var doc struct {
		Allocations map[string]struct {
			Resources map[string]int64 `json:"resources"`
		} `json:"allocations"`
	}
	if _, err := p.get(ctx, "resource_providers/"+url.PathEscape(provider)+"/allocations", &doc); err != nil {
		return nil, err
	}
	out := make(map[string]map[string]int64, len(doc.Allocations))
	for c, a := range doc.Allocations {
		out[c] = a.Resources
	}
	return out, nil
}

func (p httpPlacement) Consumer(ctx context.Context, consumer string) (ConsumerInfo, error) {
	var doc struct {
		Allocations map[string]struct {
			Resources map[string]int64 `json:"resources"`
		} `json:"allocations"`
		Project string `json:"project_id"`
		User    string `json:"user_id"`
		Type    string `json:"consumer_type"`
	}
	resp, err := p.get(ctx, "allocations/"+url.PathEscape(consumer), &doc)
	if err != nil {
		return ConsumerInfo{}, err
	}
	info := ConsumerInfo{Project: doc.Project, User: doc.User, Type: doc.Type, Providers: map[string]map[string]int64{}}
	for rp, a := range doc.Allocations {
		info.Providers[rp] = a.Resources
	}
	if lm := resp.Header.Get("Last-Modified"); lm != "" && len(doc.Allocations) > 0 {
		if t, err := http.ParseTime(lm); err == nil {
			info.Changed = t
		}
	}
	return info, nil
}

func (p httpPlacement) DeleteConsumer(ctx context.Context, consumer string) error {
	_, err := p.sc.Delete(ctx, p.sc.ServiceURL("allocations", url.PathEscape(consumer)), &gophercloud.RequestOpts{OkCodes: []int{http.StatusNoContent}})
	if gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
		return nil // gone meanwhile: what the deletion wanted
	}
	if err != nil {
		return fmt.Errorf("placement DELETE /allocations/%s: %w", consumer, err)
	}
	return nil
}

// ErrNoSource refuses an audit without a Nova source it can read
// instances from.
var ErrNoSource = errors.New("the audit needs Nova's compute API (reconciler.nova.endpoint or cloud) or its cell databases (reconciler.nova.api_database or cell_databases)")
