package novaclient

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// The JSON shapes of Nova's GET /os-aggregates and
// GET /os-hypervisors/detail answers, reduced to the fields the
// reconciler uses. Both the API source and the file source decode them,
// so a file is simply those two answers merged into one object.

type novaAggregateJSON struct {
	UUID     string            `json:"uuid"`
	Name     string            `json:"name"`
	Hosts    []string          `json:"hosts"`
	Metadata map[string]string `json:"metadata"`
}

type novaHypervisorJSON struct {
	// ID is the compute node uuid at >= 2.53, an integer before.
	ID       json.RawMessage `json:"id"`
	Hostname string          `json:"hypervisor_hostname"`
	Service  struct {
		Host string `json:"host"`
	} `json:"service"`
}

// novaFileJSON is the file source: {"aggregates": [...], "hypervisors": [...]}.
type novaFileJSON struct {
	Aggregates  []novaAggregateJSON  `json:"aggregates"`
	Hypervisors []novaHypervisorJSON `json:"hypervisors"`
}

// novaStateFromJSON converts decoded answers, refusing what cannot be
// mirrored safely: aggregates without uuid (Nova older than 2.41) and
// integer hypervisor ids (older than 2.53), which are not provider uuids.
func novaStateFromJSON(aggs []novaAggregateJSON, hvs []novaHypervisorJSON) (State, error) {
	var st State
	for _, a := range aggs {
		if a.UUID == "" {
			return State{}, fmt.Errorf("aggregate %q has no uuid (Nova compute API microversion >= 2.41 is needed)", a.Name)
		}
		st.Aggregates = append(st.Aggregates, Aggregate(a))
	}
	for _, h := range hvs {
		var id string
		if err := json.Unmarshal(h.ID, &id); err != nil {
			if _, nerr := strconv.Atoi(string(h.ID)); nerr == nil {
				return State{}, fmt.Errorf("hypervisor %q has integer id %s (Nova compute API microversion >= 2.53 is needed)", h.Hostname, h.ID)
			}
			return State{}, fmt.Errorf("hypervisor %q: bad id %s", h.Hostname, h.ID)
		}
		st.Nodes = append(st.Nodes, ComputeNode{UUID: id, Hostname: h.Hostname, Host: h.Service.Host})
	}
	return st, nil
}
