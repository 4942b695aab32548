package difftest

import (
	"encoding/json"
	"slices"
	"strings"
)

// inventory is one resource class's inventory on a provider.
type inventory struct {
	Total    int     `json:"total"`
	Reserved int     `json:"reserved"`
	MinUnit  int     `json:"min_unit"`
	MaxUnit  int     `json:"max_unit"`
	StepSize int     `json:"step_size"`
	Ratio    float64 `json:"allocation_ratio"`
}

// capacity is what can be allocated in all.
func (iv inventory) capacity() int { return int(float64(iv.Total-iv.Reserved) * iv.Ratio) }

// provider is the model's view of a resource provider, as the reference
// last reported it.
type provider struct {
	UUID   string
	Name   string
	Gen    int
	Parent string
	Root   string
	Inv    map[string]inventory
	Traits []string
	Aggs   []string
}

// consumer is the model's view of a consumer's allocations.
type consumer struct {
	UUID    string
	Project string
	User    string
	Gen     *int // nil: the consumer does not exist
	Type    string
	Allocs  map[string]map[string]int // provider -> class -> amount
}

// model is what the generator knows of the reference's state. Slices keep
// creation order so that picks are deterministic for a seed.
type model struct {
	rps       map[string]*provider
	rpOrder   []string
	consumers map[string]*consumer
	conOrder  []string
	classes   []string // custom resource classes that exist
	traits    []string // custom traits that exist
}

func newModel() *model {
	return &model{rps: map[string]*provider{}, consumers: map[string]*consumer{}}
}

func (m *model) addProvider(p *provider) {
	if _, ok := m.rps[p.UUID]; !ok {
		m.rpOrder = append(m.rpOrder, p.UUID)
	}
	if p.Inv == nil {
		p.Inv = map[string]inventory{}
	}
	if p.Root == "" {
		p.Root = p.UUID
	}
	m.rps[p.UUID] = p
}

func (m *model) dropProvider(u string) {
	delete(m.rps, u)
	m.rpOrder = slices.DeleteFunc(m.rpOrder, func(s string) bool { return s == u })
}

func (m *model) providers() []*provider {
	out := make([]*provider, 0, len(m.rpOrder))
	for _, u := range m.rpOrder {
		out = append(out, m.rps[u])
	}
	return out
}

func (m *model) consumerFor(u string) *consumer {
	c, ok := m.consumers[u]
	if !ok {
		c = &consumer{UUID: u, Allocs: map[string]map[string]int{}}
		m.consumers[u] = c
		m.conOrder = append(m.conOrder, u)
	}
	return c
}

// children lists providers whose parent is u.
func (m *model) children(u string) []*provider {
	var out []*provider
	for _, p := range m.providers() {
		if p.Parent == u {
			out = append(out, p)
		}
	}
	return out
}

// rpBody is the part of a provider answer the model reads.
type rpBody struct {
	UUID       string  `json:"uuid"`
	Name       string  `json:"name"`
	Generation int     `json:"generation"`
	Parent     *string `json:"parent_provider_uuid"`
	Root       *string `json:"root_provider_uuid"`
}

// learnProvider updates the model from a provider answer body.
func (m *model) learnProvider(body []byte) {
	var b rpBody
	if json.Unmarshal(body, &b) != nil || b.UUID == "" {
		return
	}
	p, ok := m.rps[b.UUID]
	if !ok {
		p = &provider{UUID: b.UUID}
		m.addProvider(p)
	}
	p.Name, p.Gen = b.Name, b.Generation
	if b.Parent != nil {
		p.Parent = *b.Parent
	}
	if b.Root != nil {
		p.Root = *b.Root
	}
}

// learnInventories reads GET/PUT inventories answers.
func (m *model) learnInventories(u string, body []byte) {
	var b struct {
		Gen *int                 `json:"resource_provider_generation"`
		Inv map[string]inventory `json:"inventories"`
	}
	p := m.rps[u]
	if p == nil || json.Unmarshal(body, &b) != nil || b.Gen == nil {
		return
	}
	p.Gen, p.Inv = *b.Gen, b.Inv
	if p.Inv == nil {
		p.Inv = map[string]inventory{}
	}
}

// learnGeneration reads resource_provider_generation and, when present,
// the traits or aggregates list of an answer.
func (m *model) learnGeneration(u string, body []byte) {
	var b struct {
		Gen    *int      `json:"resource_provider_generation"`
		Traits *[]string `json:"traits"`
		Aggs   *[]string `json:"aggregates"`
	}
	p := m.rps[u]
	if p == nil || json.Unmarshal(body, &b) != nil {
		return
	}
	if b.Gen != nil {
		p.Gen = *b.Gen
	}
	if b.Traits != nil {
		p.Traits = *b.Traits
	}
	if b.Aggs != nil {
		p.Aggs = *b.Aggs
	}
}

// learnConsumer reads GET /allocations/{consumer} at 1.28 or later.
func (m *model) learnConsumer(u string, body []byte) {
	var b struct {
		Allocs map[string]struct {
			Resources map[string]int `json:"resources"`
		} `json:"allocations"`
		Gen     *int   `json:"consumer_generation"`
		Project string `json:"project_id"`
		User    string `json:"user_id"`
		Type    string `json:"consumer_type"`
	}
	if json.Unmarshal(body, &b) != nil {
		return
	}
	c := m.consumerFor(u)
	c.Allocs = map[string]map[string]int{}
	for rp, a := range b.Allocs {
		c.Allocs[rp] = a.Resources
	}
	c.Gen, c.Project, c.User, c.Type = b.Gen, b.Project, b.User, b.Type
	if len(b.Allocs) == 0 {
		c.Gen = nil
	}
}

// used sums the model's allocations of class rc on provider u.
func (m *model) used(u, rc string) int {
	n := 0
	for _, c := range m.consumers {
		n += c.Allocs[u][rc]
	}
	return n
}

// uuidFromLocation takes the last path segment of a Location header.
func uuidFromLocation(loc string) string {
	if i := strings.LastIndex(loc, "/"); i >= 0 {
		return loc[i+1:]
	}
	return ""
}
