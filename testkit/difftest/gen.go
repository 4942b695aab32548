package difftest

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"slices"

	"github.com/placement-syncd/placement-syncd/microversion"
)

// builder makes one request from the model as it is when the request is
// due (nil when it no longer applies), so that a multi-request step reads
// generations its earlier requests changed.
type builder func() *Request

// kind is one family of generated requests and its weight.
type kind struct {
	name   string
	weight int
	make   func(g *Generator) []builder
}

// Generator makes a seeded sequence of requests. It learns the
// reference's state from the answers passed to Observe.
type Generator struct {
	rng   *rand.Rand
	m     *model
	kinds []kind
	total int
	queue []builder
	step  int
	names int
	aggs  []string // the pool of aggregate uuids, fixed per seed
	// made holds the uuids the generator chose; only those may be
	// respelled, as the runner maps the servers' own by their text.
	made map[string]bool
}

// NewGenerator makes the generator of a seed.
func NewGenerator(seed uint64) *Generator {
	g := &Generator{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), m: newModel(), made: map[string]bool{}}
	for range 6 {
		g.aggs = append(g.aggs, g.uuid())
	}
	g.kinds = append(g.kinds, validKinds()...)
	g.kinds = append(g.kinds, badKinds()...)
	for _, k := range g.kinds {
		g.total += k.weight
	}
	return g
}

// Next returns the next request and the step it belongs to (a step is one
// pick of a kind; scenarios span several requests).
func (g *Generator) Next() (*Request, int) {
	for {
		for len(g.queue) > 0 {
			b := g.queue[0]
			g.queue = g.queue[1:]
			if r := b(); r != nil {
				return r, g.step
			}
		}
		g.step++
		k := g.pickKind()
		g.queue = append(g.queue, k.make(g)...)
	}
}

// Observe passes the reference's answer to r back to the model.
func (g *Generator) Observe(r *Request, a *Answer) {
	if r.observe != nil {
		r.observe(a)
	}
}

func (g *Generator) pickKind() kind {
	n := g.rng.IntN(g.total)
	for _, k := range g.kinds {
		if n < k.weight {
			return k
		}
		n -= k.weight
	}
	return g.kinds[len(g.kinds)-1]
}

func (g *Generator) chance(p float64) bool { return g.rng.Float64() < p }
func (g *Generator) intn(n int) int        { return g.rng.IntN(n) }

func pick[T any](g *Generator, xs []T) T { return xs[g.rng.IntN(len(xs))] }

// some picks up to n distinct elements of xs (at least one when xs is not
// empty and min1).
func some[T any](g *Generator, xs []T, n int, min1 bool) []T {
	if len(xs) == 0 {
		return nil
	}
	k := g.intn(n + 1)
	if min1 && k == 0 {
		k = 1
	}
	k = min(k, len(xs))
	idx := g.rng.Perm(len(xs))[:k]
	slices.Sort(idx)
	out := make([]T, 0, k)
	for _, i := range idx {
		out = append(out, xs[i])
	}
	return out
}

// mv picks a microversion for a route that exists from 1.lo: mostly in
// range, sometimes anywhere (below lo the route or field is unknown), and
// now and then no header at all.
func (g *Generator) mv(lo int) int {
	switch r := g.rng.Float64(); {
	case r < 0.05:
		return -1
	case r < 0.15:
		return g.intn(microversion.Max.Minor + 1)
	default:
		return lo + g.intn(microversion.Max.Minor-lo+1)
	}
}

// mvAtLeast picks a microversion in [lo, microversion.Max] only.
func (g *Generator) mvAtLeast(lo int) int { return lo + g.intn(microversion.Max.Minor-lo+1) }

func (g *Generator) uuid() string {
	var b [16]byte
	for i := range b {
		b[i] = byte(g.rng.UintN(256))
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	u := fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
	g.made[u] = true
	return u
}

func (g *Generator) name(prefix string) string {
	g.names++
	return fmt.Sprintf("%s-%d", prefix, g.names)
}

// req builds a request with a JSON body (nil for none).
func req(gen, method, path string, mv int, body any) *Request {
	r := &Request{Gen: gen, Method: method, Path: path, MV: mv}
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			panic(fmt.Sprintf("difftest: marshal %T: %v", body, err)) // generator bodies are plain maps
		}
		r.Body = string(b)
	}
	return r
}

// query encodes ordered query parameters; values are escaped as a client
// library would, commas and colons included.
func query(kv ...string) string {
	s := ""
	for i := 0; i+1 < len(kv); i += 2 {
		if s != "" {
			s += "&"
		}
		s += url.QueryEscape(kv[i]) + "=" + url.QueryEscape(kv[i+1])
	}
	return s
}

func once(r *Request) []builder { return []builder{func() *Request { return r }} }

// rp picks an existing provider (nil when there is none).
func (g *Generator) rp() *provider {
	ps := g.m.providers()
	if len(ps) == 0 {
		return nil
	}
	return pick(g, ps)
}

// rpOrRandom is an existing provider's uuid, or now and then an unknown one.
func (g *Generator) rpOrRandom() string {
	if p := g.rp(); p != nil && g.chance(0.9) {
		return p.UUID
	}
	return g.uuid()
}
