package schema

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
	s.resourceClassCreate, s.resourceClassUpdate = mustCompile(post), mustCompile(clone(post))
}

// ResourceClassCreate is the POST /resource_classes body (1.2+).
func (s *Set) ResourceClassCreate() *Schema { return s.resourceClassCreate }

// ResourceClassUpdate is the PUT /resource_classes/{name} schema. Up to 1.6
// it validates the request body; from 1.7 upstream validates the name from
// the URL by running this schema over the text {"name": "<name>"} (so a
// name that breaks that JSON is a "Malformed JSON" error there).
func (s *Set) ResourceClassUpdate() *Schema { return s.resourceClassUpdate }
