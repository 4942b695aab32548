package schema

import "github.com/placement-syncd/placement-syncd/placementsrv/jsonschema"

// Resource class schemas (placement/schemas/resource_class.py).

func (s *Set) addResourceClasses() {
	post := obj(
		"type", "object",
		"properties", obj(
			"name", obj("type", "string", "pattern", customPattern, "maxLength", 255),
		),
		"required", []string{"name"},
		"additionalProperties", false,
	)
	s.resourceClassCreate, s.resourceClassUpdate = mustCompile(post), mustCompile(post.Clone())
}

// ResourceClassCreate is the POST /resource_classes body (from microversion.ResourceClasses).
func (s *Set) ResourceClassCreate() *jsonschema.Schema { return s.resourceClassCreate }

// ResourceClassUpdate is the PUT /resource_classes/{name} schema. Before
// microversion.ResourceClassPut it validates the request body; from it
// upstream validates the name from the URL by running this schema over the text {"name": "<name>"} (so a
// name that breaks that JSON is a "Malformed JSON" error there).
func (s *Set) ResourceClassUpdate() *jsonschema.Schema { return s.resourceClassUpdate }
