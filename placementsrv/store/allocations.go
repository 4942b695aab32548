package store

import "time"

// Allocation is an amount of one resource class a consumer holds on a
// provider.
type Allocation struct {
	ProviderUUID  string
	ResourceClass string
	Used          int64
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// Consumer is who holds allocations.
type Consumer struct {
	UUID         string
	ProjectID    string
	UserID       string
	ConsumerType string // empty when unknown
	Generation   int64
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// ConsumerAllocations is the desired full set of one consumer's
// allocations. An empty Allocations list removes the consumer's
// allocations (and the consumer).
type ConsumerAllocations struct {
	ConsumerUUID string
	ProjectID    string
	UserID       string
	ConsumerType string
	// CheckGeneration enables the consumer generation check (1.28);
	// Generation nil then means "the consumer must not exist yet".
	CheckGeneration bool
	Generation      *int64
	Allocations     []Allocation
}

// AllocationStore manages allocations and consumers.
type AllocationStore interface {
	// ConsumerAllocations returns the consumer and its allocations; a
	// consumer without allocations is ErrNotFound.
	ConsumerAllocations(ctx Ctx, consumerUUID string) (Consumer, []Allocation, error)
	// ProviderAllocations returns the provider and its allocations by
	// consumer uuid.
	ProviderAllocations(ctx Ctx, uuid string) (Provider, map[string][]Allocation, error)
	// ReplaceAllocations atomically sets the allocations of one or more
	// consumers, checking capacity and generations.
	ReplaceAllocations(ctx Ctx, reqs []ConsumerAllocations) error
	// DeleteConsumerAllocations removes a consumer's allocations.
	DeleteConsumerAllocations(ctx Ctx, consumerUUID string) error
}
