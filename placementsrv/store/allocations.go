package store

import (
	"context"
	"fmt"
	"time"
)

// ErrConsumerGeneration is the kind of a consumer generation mismatch
// (1.28); it is an ErrConcurrentUpdate.
var ErrConsumerGeneration = fmt.Errorf("consumer generation conflict: %w", ErrConcurrentUpdate)

// IncompleteConsumerID is the project and user id Placement records for
// consumers written before microversion 1.8, which did not carry them
// (placement.conf incomplete_consumer_{project,user}_id defaults).
const IncompleteConsumerID = "00000000-0000-0000-0000-000000000000"

// UnknownConsumerType is how a consumer without a type is shown (1.38).
const UnknownConsumerType = "unknown"

// Allocation is an amount of one resource class a consumer holds on a
// provider.
type Allocation struct {
	ProviderUUID  string
	ResourceClass string
	Used          int64
	// ProviderGeneration is the provider's current generation; it is
	// filled by ConsumerAllocations, which shows it per provider.
	ProviderGeneration int64
	CreatedAt          time.Time
	UpdatedAt          time.Time
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

// HeldAllocations is one consumer and the allocations it holds (on one
// provider, or everywhere, depending on the query).
type HeldAllocations struct {
	Consumer    Consumer
	Allocations []Allocation
}

// ConsumerAllocations is the desired full set of one consumer's
// allocations, as in one entry of POST /allocations. An empty Allocations
// list removes the consumer's allocations (and the consumer).
type ConsumerAllocations struct {
	ConsumerUUID string
	// ProjectID and UserID replace the consumer's when they differ
	// (IncompleteConsumerID before microversion 1.8).
	ProjectID string
	UserID    string
	// ConsumerType, when not empty (1.38), is set on the consumer and
	// created when new.
	ConsumerType string
	// CheckGeneration enables the consumer generation check (1.28);
	// Generation nil then means "the consumer must not exist yet".
	CheckGeneration bool
	Generation      *int64
	// Allocations in request order: errors name the first offender in
	// that order, as upstream does.
	Allocations []Allocation
}

// AllocationStore manages allocations and consumers.
//
// ReplaceAllocations and Reshape report errors in the order upstream
// checks them, with these kinds (Detail is upstream's message without the
// handler's prefix):
//   - ErrConsumerGeneration: a consumer generation mismatch;
//   - ErrConcurrentUpdate otherwise: a generation moved under the write;
//   - ErrInvalid: an allocation names a provider that does not exist;
//   - ErrNotFound: an allocation names an unknown resource class;
//   - ErrCapacityExceeded: a provider lacks the inventory, or the amount
//     violates min_unit/max_unit/step_size or exceeds the capacity.
type AllocationStore interface {
	// ConsumerAllocations returns the consumer and its allocations, each
	// with its provider's generation; a consumer without allocations is
	// ErrNotFound.
	ConsumerAllocations(ctx context.Context, consumerUUID string) (HeldAllocations, error)
	// ProviderAllocations returns the provider and the allocations on it
	// grouped by consumer, oldest allocation first.
	ProviderAllocations(ctx context.Context, uuid string) (Provider, []HeldAllocations, error)
	// ReplaceAllocations atomically sets the allocations of one or more
	// consumers, checking generations and capacity; every provider named
	// gets its generation incremented, and so does every consumer whose
	// allocations were written.
	ReplaceAllocations(ctx context.Context, reqs []ConsumerAllocations) error
	// DeleteConsumerAllocations removes a consumer's allocations and the
	// consumer; ErrNotFound when it has none. Generations do not change.
	DeleteConsumerAllocations(ctx context.Context, consumerUUID string) error
	// ReplaceAllocationsUnder is ReplaceAllocations under the capacity
	// rule of the caller's release (ReplaceAllocations is CapacityStrict).
	ReplaceAllocationsUnder(ctx context.Context, rule CapacityRule, reqs []ConsumerAllocations) error
}

// CapacityRule is how an allocation write treats a (provider, class) that
// the write leaves over capacity. The release the API follows chooses it,
// per write, so that one store serves either.
type CapacityRule uint8

const (
	// CapacityStrict refuses the write (Placement 8.0.0).
	CapacityStrict CapacityRule = iota
	// CapacityNoWorse allows it when the write leaves the (provider,
	// class) using no more than it did before (bug 2104040, Placement
	// 15.0.0): an over-capacity provider, after a ratio or reserved
	// change, can still have its allocations shrunk or moved. A class
	// that had no usage has no such allowance.
	CapacityNoWorse
)
