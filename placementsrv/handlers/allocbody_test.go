package handlers

import (
	"testing"

	"github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/middleware"
	"github.com/placement-syncd/placement-syncd/placementsrv/schema"
)

const (
	alRP       = "11111111-1111-4111-8111-111111111111"
	alConsumer = "cccccccc-cccc-4ccc-8ccc-cccccccccccc"
)

// FuzzDecodeAllocations feeds arbitrary bodies through validation and
// decoding for every allocation body form; nothing may panic, and a body
// that validates must decode. Besides the seeds below,
// testdata/fuzz/FuzzDecodeAllocations holds every body of the HTTP tests'
// bad-input table (placementsrv's alBadInputs) as a PUT at 1.38 and a POST
// at 1.12.
func FuzzDecodeAllocations(f *testing.F) {
	f.Add(uint8(38), uint8(0), `{"allocations": {"`+alRP+`": {"resources": {"VCPU": 1.0}}}, "project_id": "p", "user_id": "u", "consumer_generation": 1e300, "consumer_type": "X", "mappings": {"a": ["`+alRP+`"]}}`)
	f.Add(uint8(7), uint8(0), `{"allocations": [{"resource_provider": {"uuid": "`+alRP+`"}, "resources": {"VCPU": 99999999999999999999999}}]}`)
	f.Add(uint8(30), uint8(2), `{"inventories": {"`+alRP+`": {"resource_provider_generation": 0, "inventories": {"VCPU": {"total": 1, "allocation_ratio": 1.5}}}}, "allocations": {}}`)
	schemas := schema.New()
	f.Fuzz(func(t *testing.T, minor, kind uint8, body string) {
		minor %= 40
		mv := microversion.Version{Major: 1, Minor: int(minor)}
		switch kind % 3 {
		case 0:
			if b, err := middleware.ValidateBody([]byte(body), schemas.AllocationsPut(mv)); err == nil {
				if _, err := decodeConsumerAllocations(alConsumer, b, mv); err != nil {
					t.Fatalf("valid PUT body does not decode: %v: %s", err, body)
				}
			}
		case 1:
			if mv.Less(microversion.AllocationsPost) {
				return
			}
			if b, err := middleware.ValidateBody([]byte(body), schemas.AllocationsPost(mv)); err == nil {
				if _, err := decodeConsumersDict(b, mv); err != nil {
					t.Fatalf("valid POST body does not decode: %v: %s", err, body)
				}
			}
		case 2:
			if mv.Less(microversion.Reshaper) {
				return
			}
			if b, err := middleware.ValidateBody([]byte(body), schemas.ReshaperPost(mv)); err == nil {
				if _, err := decodeReshape(b, mv); err != nil {
					t.Fatalf("valid reshaper body does not decode: %v: %s", err, body)
				}
			}
		}
	})
}
