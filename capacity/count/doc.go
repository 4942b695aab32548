// Package count answers "how many more instances of each Nova flavor
// fit, and where" from the read model, exactly, without a request to
// anyone.
//
// The count is defined by behaviour: the number of claims a scheduler
// makes one after another, each taking a candidate GET
// /allocation_candidates returns for the flavor's request (flavorreq),
// until none is left. To make it one number, the claims go in a fixed
// order: roots in ascending provider index (creation) order; for each
// root, the root's first candidate in the API's answer order is claimed
// until the root has none, then the next root. Sharing providers are
// therefore consumed by the roots in that order. A candidate is a
// root's when its providers other than sharing providers are in the
// root's tree; one drawn from sharing providers only is no host's and is
// never claimed. A root's count is the claims made for it; the cloud's
// is their sum; an aggregate's and an availability zone's are the sums
// over their member roots (a root is in the Input's DefaultZone when
// none of its aggregates has a zone). The flavors are independent: each
// is counted from the snapshot as it is.
//
// Held-back capacity (an inventory with reserved == total, the agent's
// way of holding a node back) is counted apart: how many more claims a
// root would take, from the cloud as its turn found it, if its tree's
// held-back inventories were released (reserved 0), attributed to the
// reason the agent gave, else "reserved".
//
// The computation (fast.go, sim.go, trees.go): each flavor's request is
// parsed as the API parses its query string and interned once per Count;
// a root of one provider that no sharing provider serves has one
// candidate at most, the same after every claim, so a closed form counts
// it, in one pass over the roots for every flavor; a tree is counted by
// a small search that finds the engine's first candidate as the engine
// does and claims it as often as it fits. Where sharing providers take
// part, roots are counted in root order on a private draft of the
// snapshot (readmodel.Draft) that takes the claims: by the same search
// over the tree and the sharing providers, or, when Placement may offer
// an option of sharing providers only at one anchor chosen from every
// provider's usage, by the allocation candidates engine at the root
// (candidates.Query.Anchor). The tests hold it to the definition
// followed literally, in memory and through our Placement API over
// HTTP.
//
// It imports the read model, the engine and the request description
// only; no HTTP and no metrics.
package count
