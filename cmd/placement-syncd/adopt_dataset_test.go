package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/placement-syncd/placement-syncd/testkit/daemontest"
)

// placementAPI sends requests to a Placement service and fails the test
// on an unexpected status.
type placementAPI struct {
	t *testing.T
	c daemontest.Client
}

// newPlacementAPI is a placementAPI of base with token. Each request has
// a connection of its own: uWSGI's http-socket may close a kept-alive
// connection under a write.
func newPlacementAPI(t *testing.T, base, token string) placementAPI {
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	return placementAPI{t: t, c: daemontest.Client{Base: base, Token: token, HTTP: hc}}
}

func (p placementAPI) do(method, path, version string, body any, want int) map[string]any {
	p.t.Helper()
	var out map[string]any
	_ = json.Unmarshal(p.c.At(version).MustDo(p.t, want, method, path, body).Body, &out)
	return out
}

// provider creates a provider (a root when parent is "").
func (p placementAPI) provider(uuid, name, parent string) {
	p.t.Helper()
	body := map[string]any{"uuid": uuid, "name": name}
	if parent != "" {
		body["parent_provider_uuid"] = parent
	}
	p.do("POST", "/resource_providers", "1.20", body, 200)
}

// inventories sets a provider's inventories (generation 0 or as given).
func (p placementAPI) inventories(uuid string, gen int, inv map[string]any) {
	p.t.Helper()
	p.do("PUT", "/resource_providers/"+uuid+"/inventories", "1.39", map[string]any{"resource_provider_generation": gen, "inventories": inv}, 200)
}

func (p placementAPI) generation(uuid string) int {
	p.t.Helper()
	return int(p.do("GET", "/resource_providers/"+uuid, "1.39", nil, 200)["generation"].(float64))
}

// allocate writes a consumer's allocations at 1.38 (consumer types).
func (p placementAPI) allocate(consumer, project, user, ctype string, gen any, allocs map[string]map[string]int) {
	p.t.Helper()
	a := map[string]any{}
	for rp, res := range allocs {
		a[rp] = map[string]any{"resources": res}
	}
	p.do("PUT", "/allocations/"+consumer, "1.38", map[string]any{"allocations": a, "project_id": project, "user_id": user,
		"consumer_generation": gen, "consumer_type": ctype}, 204)
}

func uuidN(kind, n int) string { return fmt.Sprintf("%08x-0000-4000-8000-%012x", kind, n) }

// fillRich builds, through the API, a dataset that touches every table:
// nested trees, a sharing provider in an aggregate, custom classes and
// traits, a provider moved under a newer one, consumers of several
// projects, users and types, a reshape, and deletions that leave id gaps.
func fillRich(t *testing.T, p placementAPI) {
	t.Helper()
	for _, c := range []string{"CUSTOM_GPU", "CUSTOM_SCRATCH", "CUSTOM_GONE"} {
		p.do("PUT", "/resource_classes/"+c, "1.7", nil, 201)
	}
	p.do("DELETE", "/resource_classes/CUSTOM_GONE", "1.7", nil, 204)
	for _, tr := range []string{"CUSTOM_RACK_A", "CUSTOM_SSD", "CUSTOM_GONE"} {
		p.do("PUT", "/traits/"+tr, "1.6", nil, 201)
	}
	p.do("DELETE", "/traits/CUSTOM_GONE", "1.6", nil, 204)
	cn1, numa0, numa1, gpu := uuidN(1, 1), uuidN(1, 2), uuidN(1, 3), uuidN(1, 4)
	cn2, shared, moved, rack, gone := uuidN(2, 1), uuidN(3, 1), uuidN(4, 1), uuidN(5, 1), uuidN(6, 1)
	p.provider(cn1, "cn1", "")
	p.provider(numa0, "cn1-numa0", cn1)
	p.provider(numa1, "cn1-numa1", cn1)
	p.provider(gpu, "cn1-numa0-gpu", numa0)
	p.provider(gone, "gone", "")
	p.provider(cn2, "cn2", "")
	p.provider(shared, "shared-disk", "")
	p.provider(moved, "moved", "")
	p.provider(rack, "rack", "")
	p.do("DELETE", "/resource_providers/"+gone, "1.39", nil, 204)
	// moved goes under rack, which is newer: its parent has the larger id.
	p.do("PUT", "/resource_providers/"+moved, "1.37", map[string]any{"name": "moved", "parent_provider_uuid": rack}, 200)

	p.inventories(cn1, 0, map[string]any{"VCPU": map[string]any{"total": 8}, "MEMORY_MB": map[string]any{"total": 4096, "reserved": 512}})
	p.inventories(numa0, 0, map[string]any{"VCPU": map[string]any{"total": 4, "allocation_ratio": 2.5}, "MEMORY_MB": map[string]any{"total": 2048, "step_size": 256}})
	p.inventories(numa1, 0, map[string]any{"VCPU": map[string]any{"total": 4}, "MEMORY_MB": map[string]any{"total": 2048}})
	p.inventories(gpu, 0, map[string]any{"CUSTOM_GPU": map[string]any{"total": 2, "max_unit": 1}})
	p.inventories(cn2, 0, map[string]any{"VCPU": map[string]any{"total": 16, "allocation_ratio": 16.0}, "MEMORY_MB": map[string]any{"total": 8192, "allocation_ratio": 1.5}})
	p.inventories(shared, 0, map[string]any{"DISK_GB": map[string]any{"total": 1000, "reserved": 100, "min_unit": 10}})
	p.inventories(moved, 0, map[string]any{"CUSTOM_SCRATCH": map[string]any{"total": 50}})

	p.do("PUT", "/resource_providers/"+cn1+"/traits", "1.39", map[string]any{"resource_provider_generation": p.generation(cn1), "traits": []string{"HW_CPU_X86_AVX2", "CUSTOM_RACK_A"}}, 200)
	p.do("PUT", "/resource_providers/"+gpu+"/traits", "1.39", map[string]any{"resource_provider_generation": p.generation(gpu), "traits": []string{"CUSTOM_SSD"}}, 200)
	p.do("PUT", "/resource_providers/"+shared+"/traits", "1.39", map[string]any{"resource_provider_generation": p.generation(shared), "traits": []string{"MISC_SHARES_VIA_AGGREGATE", "CUSTOM_SSD"}}, 200)
	agg1, agg2 := uuidN(9, 1), uuidN(9, 2)
	for _, rp := range []string{cn1, cn2, shared} {
		p.do("PUT", "/resource_providers/"+rp+"/aggregates", "1.39", map[string]any{"resource_provider_generation": p.generation(rp), "aggregates": []string{agg1}}, 200)
	}
	p.do("PUT", "/resource_providers/"+rack+"/aggregates", "1.39", map[string]any{"resource_provider_generation": p.generation(rack), "aggregates": []string{agg2, agg1}}, 200)

	p.allocate(uuidN(7, 1), "proj-a", "user-1", "INSTANCE", nil, map[string]map[string]int{cn1: {"VCPU": 2, "MEMORY_MB": 1024}, shared: {"DISK_GB": 20}})
	p.allocate(uuidN(7, 2), "proj-a", "user-2", "INSTANCE", nil, map[string]map[string]int{numa0: {"VCPU": 1}, gpu: {"CUSTOM_GPU": 1}})
	p.allocate(uuidN(7, 3), "proj-b", "user-1", "MIGRATION", nil, map[string]map[string]int{cn2: {"VCPU": 4, "MEMORY_MB": 2048}})
	p.allocate(uuidN(7, 4), "proj-c", "user-3", "INSTANCE", nil, map[string]map[string]int{moved: {"CUSTOM_SCRATCH": 5}})
	// a consumer rewritten (generation 1), and one emptied (deleted).
	p.allocate(uuidN(7, 3), "proj-b", "user-1", "MIGRATION", 1, map[string]map[string]int{cn2: {"VCPU": 6, "MEMORY_MB": 2048}})
	p.allocate(uuidN(7, 5), "proj-d", "user-4", "INSTANCE", nil, map[string]map[string]int{cn2: {"VCPU": 1}})
	p.do("DELETE", "/allocations/"+uuidN(7, 5), "1.39", nil, 204)
	reshapeCN1(t, p, cn1, numa0, numa1)
}

// reshapeCN1 moves cn1's VCPU inventory and its allocation onto its NUMA
// children (POST /reshaper, 1.30), as Nova does on an upgrade.
func reshapeCN1(t *testing.T, p placementAPI, cn1, numa0, numa1 string) {
	t.Helper()
	inv := func(rp string, res map[string]any) map[string]any {
		return map[string]any{"resource_provider_generation": p.generation(rp), "inventories": res}
	}
	body := map[string]any{
		"inventories": map[string]any{
			cn1:   inv(cn1, map[string]any{"MEMORY_MB": map[string]any{"total": 4096, "reserved": 512}}),
			numa0: inv(numa0, map[string]any{"VCPU": map[string]any{"total": 8, "allocation_ratio": 2.5}, "MEMORY_MB": map[string]any{"total": 2048, "step_size": 256}}),
			numa1: inv(numa1, map[string]any{"VCPU": map[string]any{"total": 4}, "MEMORY_MB": map[string]any{"total": 2048}}),
		},
		"allocations": map[string]any{
			uuidN(7, 1): map[string]any{"allocations": map[string]any{
				cn1: map[string]any{"resources": map[string]int{"MEMORY_MB": 1024}}, numa1: map[string]any{"resources": map[string]int{"VCPU": 2}},
				uuidN(3, 1): map[string]any{"resources": map[string]int{"DISK_GB": 20}}},
				"project_id": "proj-a", "user_id": "user-1", "consumer_generation": 1, "consumer_type": "INSTANCE"},
		},
	}
	p.do("POST", "/reshaper", "1.38", body, 204)
}
