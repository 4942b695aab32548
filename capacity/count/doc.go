// Package count answers "how many more instances of each Nova flavor
// fit, and where" from the read model, exactly.
//
// The count is defined by behaviour: the number of claims a scheduler
// makes one after another, each taking a candidate GET
// /allocation_candidates returns for the flavor's request (flavorreq),
// until none is left. To make it one number, the claims go in a fixed
// order: roots in ascending provider index (creation) order; for each
// root, the root's first candidate in the API's answer order is claimed
// until the root has none, then the next root. Sharing providers are
// therefore consumed by the roots in that order. A root's count is the
// claims made for it; the cloud's is their sum; an aggregate's and an
// availability zone's are the sums over their member roots (a root is
// in the Input's DefaultZone when none of its aggregates has a zone).
//
// Held-back capacity (an inventory with reserved == total, the agent's
// way of holding a node back) is counted apart: how many more would fit
// on a root if its held-back inventories were released (reserved 0),
// attributed to the reason the agent gave, else "reserved". The counts
// of different flavors are independent: each starts from the snapshot.
//
// It imports the read model and the request description only; no HTTP
// and no metrics.
package count
