package schema

import (
	mv "github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/jsonschema"
	"github.com/placement-syncd/placement-syncd/placementsrv/release"
)

// Resource provider schemas (placement/schemas/resource_provider.py).

func (s *Set) addProviders() {
	post := map[mv.Version]*object{mv.Min: obj(
		"type", "object",
		"properties", obj(
			"name", obj("type", "string", "maxLength", 200),
			"uuid", uuidString(),
		),
		"required", []string{"name"},
		"additionalProperties", false,
	)}
	post[mv.Nested] = post[mv.Min].Clone()
	post[mv.Nested].At("properties").Put("parent_provider_uuid", obj(
		"anyOf", []any{
			uuidString(),
			obj("type", "null"),
		},
	))
	put := make(map[mv.Version]*object, len(post))
	for v, body := range post {
		put[v] = body.Clone()
		put[v].At("properties").Del("uuid")
	}
	s.providerCreate, s.providerUpdate = mustCompileAll(post, formats()), mustCompileAll(put, formats())
	s.providerList = mustCompileAll(providerListQueries(), formats())
	s.providerListV15 = mustCompileAll(providerListQueries(), queryFormatsV15())
}

// providerListQueries are the GET /resource_providers query schemas keyed
// by the microversion that introduced them.
func providerListQueries() map[mv.Version]*object {
	list := map[mv.Version]*object{mv.Min: obj(
		"type", "object",
		"properties", obj(
			"name", obj("type", "string"),
			"uuid", uuidString(),
		),
		"additionalProperties", false,
	)}
	list[mv.MemberOf] = list[mv.Min].Clone()
	list[mv.MemberOf].At("properties").Put("member_of", obj("type", "string"))
	list[mv.ResourcesQuery] = list[mv.MemberOf].Clone()
	list[mv.ResourcesQuery].At("properties").Put("resources", obj("type", "string"))
	list[mv.Nested] = list[mv.ResourcesQuery].Clone()
	list[mv.Nested].At("properties").Put("in_tree", uuidString())
	list[mv.ProvidersRequired] = list[mv.Nested].Clone()
	list[mv.ProvidersRequired].At("properties").Put("required", obj("type", "string"))
	return list
}

// ProviderCreate is the POST /resource_providers body: name and uuid, plus
// parent_provider_uuid (a uuid or null) from Nested.
func (s *Set) ProviderCreate(v mv.Version) *jsonschema.Schema { return s.providerCreate.at(v) }

// ProviderUpdate is the PUT /resource_providers/{uuid} body: name, plus
// parent_provider_uuid from Nested.
func (s *Set) ProviderUpdate(v mv.Version) *jsonschema.Schema { return s.providerUpdate.at(v) }

// ProviderListQuery is the GET /resource_providers query: name and uuid;
// member_of from MemberOf, resources from ResourcesQuery, in_tree from
// Nested, required from ProvidersRequired. Its uuid and in_tree are
// checked as Placement 8.0.0 does.
func (s *Set) ProviderListQuery(v mv.Version) *jsonschema.Schema { return s.providerList.at(v) }

// ProviderListQueryOf is ProviderListQuery as release r validates it:
// 15.0.0 wants uuid and in_tree in the hyphenated form.
func (s *Set) ProviderListQueryOf(r release.Release, v mv.Version) *jsonschema.Schema {
	if r == release.V8 {
		return s.ProviderListQuery(v)
	}
	return s.providerListV15.at(v)
}
