package reconciler

import (
	"maps"
	"slices"

	"github.com/placement-syncd/placement-syncd/novaclient"
)

// AggregateInput is everything PlanAggregates needs: what Nova says,
// what the reconciler remembers, and what Placement holds.
type AggregateInput struct {
	Nova novaclient.State
	// Owned are aggregate uuids remembered as Nova's from earlier runs;
	// Nova's current aggregate uuids are added to them.
	Owned []string
	// Managed are provider uuids remembered as Nova compute nodes from
	// earlier runs; the current compute nodes are added to them. Only
	// these providers ever lose an association.
	Managed []string
	// Hosts maps remembered providers to the Nova host they were last
	// seen under.
	Hosts map[string]string
	// Existing holds the uuid of every provider in Placement.
	Existing map[string]bool
	// Observed maps providers to the aggregates they are in, restricted
	// to owned aggregate uuids (others may be present and are ignored).
	Observed map[string][]string
}

// AggregatePlan is the difference between Nova and Placement.
type AggregatePlan struct {
	// Changes are the providers to write, sorted by provider uuid.
	Changes []ProviderChange
	// Unmapped are hosts in some Nova aggregate that have no compute
	// node, or a compute node without a resource provider.
	Unmapped []UnmappedHost
	// InSync counts providers that were checked and need nothing;
	// Synced are they, with their hosts and aggregates (Desired).
	InSync int
	Synced []ProviderChange
	// Held are remembered providers whose host Nova still lists in an
	// aggregate but without any hypervisor (a cell that is down, say):
	// unknown, so nothing is removed from them.
	Held []HeldProvider
	// Owned and Managed are what to remember before applying: Nova's
	// aggregates and compute nodes now, plus remembered ones that still
	// have associations to remove or are held.
	Owned   []string
	Managed []string
}

// HeldProvider is a provider kept as it is because its host is unknown.
type HeldProvider struct {
	Provider string
	// Host is the remembered host, "" when the state did not record it
	// (then any host without hypervisors holds the provider).
	Host       string
	Aggregates []string
}

// Removals is the number of associations the plan removes.
func (p *AggregatePlan) Removals() int {
	n := 0
	for _, c := range p.Changes {
		n += len(c.Remove)
	}
	return n
}

// ProviderChange is the write planned for one provider.
type ProviderChange struct {
	Provider string
	// Hosts are the Nova hosts whose compute node this provider is; empty
	// for a provider Nova no longer knows.
	Hosts []string
	// Add and Remove are aggregate uuids, sorted.
	Add    []string
	Remove []string
	// Desired is the provider's full set of Nova aggregates, used to
	// re-plan after a generation conflict.
	Desired []string
}

// UnmappedHost is a host that could not be mirrored. It is reported, and
// does not stop the other hosts.
type UnmappedHost struct {
	Host       string
	Aggregates []string
	// MissingProviders are the host's compute node uuids that have no
	// resource provider; empty when Nova has no compute node at all.
	MissingProviders []string
}

// Reason says why the host could not be mirrored, for operators.
func (u UnmappedHost) Reason() string {
	if len(u.MissingProviders) == 0 {
		return "no compute node in Nova"
	}
	return "no resource provider for compute node(s)"
}

// Drift is the number of associations the plan adds or removes.
func (p *AggregatePlan) Drift() int {
	n := 0
	for _, c := range p.Changes {
		n += len(c.Add) + len(c.Remove)
	}
	return n
}

// PlanAggregates computes the associations to add and remove so that each
// Nova aggregate is on every compute-node provider of each of its hosts,
// and no managed provider keeps an owned aggregate Nova no longer puts
// there. It is pure: the same input gives the same plan.
func PlanAggregates(in AggregateInput) AggregatePlan {
	byHost := nodesByHost(in.Nova)
	managed := setOf(in.Managed)
	current := map[string]bool{}
	for _, nodes := range byHost {
		for _, n := range nodes {
			managed[n], current[n] = true, true
		}
	}
	want := desiredAssociations(in, byHost)

	plan := AggregatePlan{}
	candidates := map[string]bool{}
	for p := range want.aggregates {
		candidates[p] = true
	}
	for p := range in.Observed {
		if managed[p] && in.Existing[p] {
			candidates[p] = true
		}
	}
	owned := setOf(in.Owned, aggregateUUIDs(in.Nova))
	keepOwned := setOf(aggregateUUIDs(in.Nova))
	keepManaged := maps.Clone(current)
	hostless := hostsWithoutNodes(in.Nova, byHost)
	for _, p := range sortedKeys(candidates) {
		if host, held := heldBack(p, current, in.Hosts, hostless); held {
			h := HeldProvider{Provider: p, Host: host}
			for _, a := range in.Observed[p] {
				if owned[a] {
					h.Aggregates = append(h.Aggregates, a)
					keepOwned[a] = true
				}
			}
			slices.Sort(h.Aggregates)
			keepManaged[p] = true
			plan.Held = append(plan.Held, h)
			continue
		}
		c := providerChange(p, want, in.Observed[p], owned)
		if len(c.Hosts) == 0 {
			// It left its last aggregate: still some host's compute node.
			c.Hosts = nodeHost(in, p)
		}
		if len(c.Add) == 0 && len(c.Remove) == 0 {
			plan.InSync++
			plan.Synced = append(plan.Synced, c)
			continue
		}
		for _, a := range c.Remove {
			keepOwned[a] = true
		}
		keepManaged[p] = true
		plan.Changes = append(plan.Changes, c)
	}
	for _, h := range sortedKeys(want.unmapped) {
		u := want.unmapped[h]
		slices.Sort(u.Aggregates)
		slices.Sort(u.MissingProviders)
		plan.Unmapped = append(plan.Unmapped, *u)
	}
	plan.Owned = sortedKeys(keepOwned)
	plan.Managed = sortedKeys(keepManaged)
	return plan
}

// hostsWithoutNodes are the hosts Nova lists in some aggregate but
// reports no hypervisor for: Nova does not know them right now.
func hostsWithoutNodes(nova novaclient.State, byHost map[string][]string) map[string]bool {
	out := map[string]bool{}
	for _, a := range nova.Aggregates {
		for _, h := range a.Hosts {
			if len(byHost[h]) == 0 {
				out[h] = true
			}
		}
	}
	return out
}

// heldBack reports whether a remembered provider that is no current
// compute node must be left alone: its remembered host is one Nova lists
// without hypervisors, or its host was never recorded and some such host
// exists (it may be that one).
func heldBack(p string, current map[string]bool, hosts map[string]string, hostless map[string]bool) (string, bool) {
	if current[p] {
		return "", false
	}
	host, known := hosts[p]
	if !known {
		return "", len(hostless) > 0
	}
	return host, hostless[host]
}

// desired is where Nova puts its aggregates: by provider, with the hosts
// each provider is the compute node of, and the hosts that cannot be
// mirrored.
type desired struct {
	aggregates map[string]map[string]bool // provider -> aggregate uuids
	hostsOf    map[string][]string
	unmapped   map[string]*UnmappedHost
}

// desiredAssociations maps each Nova aggregate's hosts to their existing
// compute-node providers; a host with no compute node, or one without a
// provider, is unmapped.
func desiredAssociations(in AggregateInput, byHost map[string][]string) desired {
	d := desired{aggregates: map[string]map[string]bool{}, hostsOf: map[string][]string{}, unmapped: map[string]*UnmappedHost{}}
	for _, a := range in.Nova.Aggregates {
		for _, h := range a.Hosts {
			nodes := byHost[h]
			missing := false
			for _, n := range nodes {
				if !in.Existing[n] {
					u := unmappedFor(d.unmapped, h)
					u.MissingProviders = appendOnce(u.MissingProviders, n)
					missing = true
					continue
				}
				if d.aggregates[n] == nil {
					d.aggregates[n] = map[string]bool{}
				}
				d.aggregates[n][a.UUID] = true
				d.hostsOf[n] = appendOnce(d.hostsOf[n], h)
			}
			if len(nodes) == 0 || missing {
				u := unmappedFor(d.unmapped, h)
				u.Aggregates = appendOnce(u.Aggregates, a.UUID)
			}
		}
	}
	return d
}

// providerChange compares one provider's desired aggregates with the
// owned ones it is observed in.
func providerChange(p string, want desired, observed []string, owned map[string]bool) ProviderChange {
	have := map[string]bool{}
	for _, a := range observed {
		if owned[a] {
			have[a] = true
		}
	}
	return ProviderChange{
		Provider: p,
		Hosts:    want.hostsOf[p],
		Desired:  sortedKeys(want.aggregates[p]),
		Add:      minus(want.aggregates[p], have),
		Remove:   minus(have, want.aggregates[p]),
	}
}

// nodeHost is the host whose compute node p is, per Nova or as last
// remembered; nil when neither knows.
func nodeHost(in AggregateInput, p string) []string {
	for _, n := range in.Nova.Nodes {
		if n.UUID == p && n.Host != "" {
			return []string{n.Host}
		}
	}
	if h := in.Hosts[p]; h != "" {
		return []string{h}
	}
	return nil
}

func unmappedFor(m map[string]*UnmappedHost, host string) *UnmappedHost {
	u := m[host]
	if u == nil {
		u = &UnmappedHost{Host: host}
		m[host] = u
	}
	return u
}

// setOf builds a set from the given lists.
func setOf(lists ...[]string) map[string]bool {
	s := map[string]bool{}
	for _, l := range lists {
		for _, v := range l {
			s[v] = true
		}
	}
	return s
}

// minus returns the sorted members of a that are not in b.
func minus(a, b map[string]bool) []string {
	var out []string
	for v := range a {
		if !b[v] {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

func appendOnce(s []string, v string) []string {
	if slices.Contains(s, v) {
		return s
	}
	return append(s, v)
}
