package schema

import (
	mv "github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/jsonschema"
)

// Usage schemas (placement/schemas/usage.py).

func (s *Set) addUsages() {
	usages := map[mv.Version]*object{mv.Usages: obj(
		"type", "object",
		"properties", obj(
			"project_id", idString(),
			"user_id", idString(),
		),
		"required", []string{"project_id"},
		"additionalProperties", false,
	)}
	usages[mv.ConsumerTypes] = usages[mv.Usages].Clone()
	usages[mv.ConsumerTypes].At("properties").Put("consumer_type", consumerType(consumerTypeGetPattern))
	s.usages = mustCompileAll(usages, formats())
}

// UsagesQuery is the GET /usages query: project_id, user_id (Usages), and
// consumer_type (ConsumerTypes). It is nil before Usages.
func (s *Set) UsagesQuery(v mv.Version) *jsonschema.Schema { return s.usages.at(v) }
