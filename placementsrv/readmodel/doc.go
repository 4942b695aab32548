// Package readmodel is what allocation candidates and resource gauges are
// computed from: the Snapshot, an immutable, versioned copy of providers,
// inventories, usage, traits and aggregates with names interned; its
// builder, which the ledger feeds from the store; and patching, which
// applies a usage-only write by copying the state chunks it touched;
// and drafts, private copies whose usage a what-if search changes in
// place and undoes (capacity counts).
// It is plain data shared by the store side (store, ledger, storetest,
// inventorymetrics) and the search engine (candidates), so that neither
// imports the other to name it.
package readmodel
