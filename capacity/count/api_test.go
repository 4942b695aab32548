package count_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/uuid4"
)

// api speaks to a Placement server over HTTP as admin, keeping
// connections open.
type api struct {
	t     testing.TB
	url   string
	token string
	c     *http.Client
	calls int
}

func newAPI(t testing.TB, url, token string) *api {
	return &api{t: t, url: url, token: token, c: &http.Client{}}
}

func (a *api) do(method, path, mv string, body any) (int, []byte) {
	a.t.Helper()
	a.calls++
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			a.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, a.url+path, rd)
	if err != nil {
		a.t.Fatal(err)
	}
	req.Header.Set("X-Auth-Token", a.token)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("OpenStack-API-Version", "placement "+mv)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := a.c.Do(req)
	if err != nil {
		a.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		a.t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp.StatusCode, b
}

// must is do, failing unless the status is one of want.
func (a *api) must(method, path, mv string, body any, want ...int) []byte {
	a.t.Helper()
	status, b := a.do(method, path, mv, body)
	for _, w := range want {
		if status == w {
			return b
		}
	}
	a.t.Fatalf("%s %s: status %d, want %v: %s", method, path, status, want, b)
	return nil
}

func (a *api) decode(b []byte, v any) {
	a.t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		a.t.Fatalf("decode %.200s: %v", b, err)
	}
}

// generation reads a provider's generation.
func (a *api) generation(u string) int {
	var doc struct {
		Generation int `json:"generation"`
	}
	a.decode(a.must(http.MethodGet, "/resource_providers/"+u, "1.20", nil, http.StatusOK), &doc)
	return doc.Generation
}

// invDoc is an inventory as the API spells it.
func invDoc(x inv, permissive bool) map[string]any {
	doc := map[string]any{"total": x.total, "reserved": x.reserved, "min_unit": x.minUnit, "max_unit": x.maxUnit,
		"step_size": x.step, "allocation_ratio": x.ratio}
	if permissive {
		doc["reserved"], doc["min_unit"], doc["max_unit"], doc["step_size"] = 0, 1, x.total, 1
	}
	return doc
}

func (a *api) putInventories(p *prov, permissive bool) {
	invs := map[string]any{}
	for _, x := range p.invs {
		invs[x.class] = invDoc(x, permissive)
	}
	a.must(http.MethodPut, "/resource_providers/"+p.uuid+"/inventories", "1.26",
		map[string]any{"resource_provider_generation": a.generation(p.uuid), "inventories": invs}, http.StatusOK)
}

// create builds the cloud: custom names, providers in order, traits,
// aggregates, inventories; usage is allocated against permissive
// inventories (units of one, nothing reserved) before the real ones are
// set, as usage that predates a change of units would be.
func (a *api) create(c *cloud) {
	for _, rc := range []string{"CUSTOM_BAREMETAL_GOLD", "CUSTOM_PCI_X"} {
		a.must(http.MethodPut, "/resource_classes/"+rc, "1.7", nil, http.StatusCreated, http.StatusNoContent)
	}
	a.must(http.MethodPut, "/traits/CUSTOM_GOLD", "1.6", nil, http.StatusCreated, http.StatusNoContent)
	for i := range c.provs {
		p := &c.provs[i]
		a.createProvider(p)
		if len(p.traits) > 0 {
			a.must(http.MethodPut, "/resource_providers/"+p.uuid+"/traits", "1.6",
				map[string]any{"traits": p.traits, "resource_provider_generation": a.generation(p.uuid)}, http.StatusOK)
		}
		if len(p.aggs) > 0 {
			aggs := make([]string, len(p.aggs))
			for k, name := range p.aggs {
				aggs[k] = aggUUID(name)
			}
			a.must(http.MethodPut, "/resource_providers/"+p.uuid+"/aggregates", "1.19",
				map[string]any{"aggregates": aggs, "resource_provider_generation": a.generation(p.uuid)}, http.StatusOK)
		}
		if len(p.invs) == 0 {
			continue
		}
		a.putInventories(p, true)
		for _, x := range p.invs {
			for left := x.used; left > 0; left -= min(left, x.total) {
				a.claim(map[string]map[string]int64{p.uuid: {x.class: min(left, x.total)}})
			}
		}
		a.putInventories(p, false)
	}
}

// createProvider creates p, under its parent if it has one.
func (a *api) createProvider(p *prov) {
	body := map[string]any{"uuid": p.uuid, "name": p.name}
	if p.parent != "" {
		body["parent_provider_uuid"] = p.parent
	}
	a.must(http.MethodPost, "/resource_providers", "1.20", body, http.StatusOK)
}

// aggUUID is the uuid a test aggregate name stands for.
func aggUUID(name string) string {
	var h uint64 = 1469598103934665603
	for _, b := range []byte(name) {
		h = (h ^ uint64(b)) * 1099511628211
	}
	return fmt.Sprintf("a0000000-0000-4000-8000-%012x", h&0xffffffffffff)
}

// claim writes allocations for a new consumer and returns it.
func (a *api) claim(allocs map[string]map[string]int64) string {
	a.t.Helper()
	doc := map[string]any{}
	for u, res := range allocs {
		doc[u] = map[string]any{"resources": res}
	}
	consumer := uuid4.New()
	a.must(http.MethodPut, "/allocations/"+consumer, "1.36", map[string]any{"allocations": doc,
		"project_id": "7c9fd8c8-6a1b-4f5e-9e3b-000000000001", "user_id": "7c9fd8c8-6a1b-4f5e-9e3b-000000000002",
		"consumer_generation": nil}, http.StatusNoContent)
	return consumer
}

func (a *api) unclaim(consumers []string) {
	for _, c := range consumers {
		a.must(http.MethodDelete, "/allocations/"+c, "1.36", nil, http.StatusNoContent)
	}
}

// answer is GET /allocation_candidates' answer, in its order.
type answer struct {
	AllocationRequests []struct {
		Allocations map[string]struct {
			Resources map[string]int64 `json:"resources"`
		} `json:"allocations"`
	} `json:"allocation_requests"`
	ProviderSummaries map[string]struct {
		Resources map[string]struct {
			Capacity int64 `json:"capacity"`
			Used     int64 `json:"used"`
		} `json:"resources"`
	} `json:"provider_summaries"`
}

// candidates asks for the request's candidates, all of them, at the
// microversion Nova 26.2's scheduler asks at.
func (a *api) candidates(query string) answer {
	var ans answer
	a.decode(a.must(http.MethodGet, "/allocation_candidates?"+query, "1.36", nil, http.StatusOK), &ans)
	return ans
}

// setReserved changes the reserved amount of one inventory.
func (a *api) setReserved(u string, x inv, reserved int64) {
	x.reserved = reserved
	body := invDoc(x, false)
	body["resource_provider_generation"] = a.generation(u)
	a.must(http.MethodPut, "/resource_providers/"+u+"/inventories/"+x.class, "1.26", body, http.StatusOK)
}

// heldInvs lists root's tree's held-back inventories.
func (c *cloud) heldInvs(root string) (provs []string, invs []inv) {
	roots := c.rootOf()
	for _, p := range c.provs {
		for _, x := range p.invs {
			if roots[p.uuid] == root && x.total > 0 && x.reserved == x.total {
				provs, invs = append(provs, p.uuid), append(invs, x)
			}
		}
	}
	return provs, invs
}

// bruteForce counts a flavor through the API by the definition: roots in
// creation order; for each, the answer's first candidate whose
// non-sharing providers are the root's is claimed (PUT /allocations of a
// new consumer) until there is none. A held-back root is first counted
// with its held-back inventories released (reserved 0), then those claims
// are deleted and the inventories held back again. Every claim is deleted
// at the end.
func (a *api) bruteForce(c *cloud, query string) (counts, held map[string]int64) {
	counts, held = map[string]int64{}, map[string]int64{}
	var all []string
	for _, p := range c.provs {
		if p.parent != "" {
			continue
		}
		if provs, invs := c.heldInvs(p.uuid); len(provs) > 0 {
			for k := range provs {
				a.setReserved(provs[k], invs[k], 0)
			}
			released := a.claimRoot(c, query, p.uuid)
			a.unclaim(released)
			for k := range provs {
				a.setReserved(provs[k], invs[k], invs[k].total)
			}
			held[p.uuid] = int64(len(released))
		}
		mine := a.claimRoot(c, query, p.uuid)
		counts[p.uuid] = int64(len(mine))
		held[p.uuid] = max(held[p.uuid]-counts[p.uuid], 0)
		all = append(all, mine...)
	}
	a.unclaim(all)
	return counts, held
}

// claimRoot claims root's first candidate until it has none.
func (a *api) claimRoot(c *cloud, query, root string) []string {
	roots := c.rootOf()
	sharing := map[string]bool{}
	for _, p := range c.provs {
		sharing[p.uuid] = p.sharing()
	}
	var made []string
	for {
		ans := a.candidates(query)
		found := false
		for _, ar := range ans.AllocationRequests {
			host := ""
			for u := range ar.Allocations {
				if !sharing[u] {
					host = roots[u]
				}
			}
			if host != root {
				continue
			}
			allocs := map[string]map[string]int64{}
			for u, x := range ar.Allocations {
				allocs[u] = x.Resources
			}
			made = append(made, a.claim(allocs))
			found = true
			break
		}
		if !found {
			return made
		}
	}
}

// names lists provider uuids by name, for messages.
func (c *cloud) names() map[string]string {
	out := map[string]string{}
	for _, p := range c.provs {
		out[p.uuid] = p.name
	}
	return out
}

func joinLines(lines []string) string { return strings.Join(lines, "\n") }
