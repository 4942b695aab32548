// Package feed is the change feed's payload: the row-level operations one
// write transaction made, with the ids the backend assigned, recorded by
// wrapping the transaction (Recorder) and encoded into the one change row
// the transaction adds before it commits (store.FeedTx). Replicas decode
// the changes of other replicas and apply them to their in-memory state
// (package ledger). It knows no SQL and no Placement rule.
package feed

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// Kind names the store.Tx method an Op records.
type Kind uint8

// The kinds, one per store.Tx write method.
const (
	InsertProvider Kind = iota + 1
	UpdateProvider
	DeleteProvider
	BumpProviderGeneration
	InsertInventory
	UpdateInventory
	DeleteInventory
	InsertResourceClass
	UpdateResourceClass
	DeleteResourceClass
	InsertTrait
	DeleteTrait
	AddProviderTrait
	RemoveProviderTrait
	InsertAggregate
	AddProviderAggregate
	RemoveProviderAggregate
	InsertProject
	InsertUser
	InsertConsumerType
	InsertConsumer
	UpdateConsumer
	BumpConsumerGeneration
	DeleteConsumer
	InsertAllocation
	DeleteConsumerAllocations
	lastKind = DeleteConsumerAllocations
)

// Op is one operation of a transaction. Which fields are set depends on
// Kind:
//   - a row insert or update carries the row, its ID the assigned one
//     (Provider, Inventory, Class, Trait, ConsumerType, Consumer,
//     Allocation);
//   - a delete carries the row's ID (for an inventory, ID is the
//     provider's and Ref the class's);
//   - a link carries the provider's ID and the trait's or aggregate's Ref;
//   - a generation bump carries the ID, the expected generation in Ref
//     and the new UpdatedAt in At;
//   - an aggregate, project or user insert carries ID and its uuid or
//     external id in Name.
type Op struct {
	Kind         Kind                    `json:"k"`
	ID           int64                   `json:"i,omitempty"`
	Ref          int64                   `json:"r,omitempty"`
	Name         string                  `json:"n,omitempty"`
	At           *time.Time              `json:"a,omitempty"`
	Provider     *store.ProviderRow      `json:"p,omitempty"`
	Inventory    *store.InventoryRow     `json:"v,omitempty"`
	Class        *store.ResourceClassRow `json:"c,omitempty"`
	Trait        *store.TraitRow         `json:"t,omitempty"`
	ConsumerType *store.ConsumerTypeRow  `json:"y,omitempty"`
	Consumer     *store.ConsumerRow      `json:"o,omitempty"`
	Allocation   *store.AllocationRow    `json:"l,omitempty"`
}

// UsageOnly reports whether the operation changes nothing a provider's
// read model holds besides its usage and generation: allocations,
// consumers and their names.
func (o Op) UsageOnly() bool {
	switch o.Kind {
	case BumpProviderGeneration, InsertProject, InsertUser, InsertConsumerType, InsertConsumer,
		UpdateConsumer, BumpConsumerGeneration, DeleteConsumer, InsertAllocation, DeleteConsumerAllocations:
		return true
	}
	return false
}

// Encode serializes the operations of one transaction.
func Encode(ops []Op) ([]byte, error) {
	b, err := json.Marshal(ops)
	if err != nil {
		return nil, fmt.Errorf("encode change: %w", err)
	}
	return b, nil
}

// Decode parses what Encode wrote and checks every kind is known, so a
// change written by a newer version is refused rather than half applied.
func Decode(b []byte) ([]Op, error) {
	var ops []Op
	if err := json.Unmarshal(b, &ops); err != nil {
		return nil, fmt.Errorf("decode change: %w", err)
	}
	for i, o := range ops {
		if o.Kind == 0 || o.Kind > lastKind {
			return nil, fmt.Errorf("decode change: operation %d: unknown kind %d", i, o.Kind)
		}
	}
	return ops, nil
}
