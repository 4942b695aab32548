package schema

import "github.com/placement-syncd/placement-syncd/placementsrv/release"

// Resource provider schemas (placement/schemas/resource_provider.py).

func (s *Set) addProviders() {
	post := obj(
		"type", "object",
		"properties", obj(
			"name", obj("type", "string", "maxLength", 200),
			"uuid", uuidString(),
		),
		"required", []string{"name"},
		"additionalProperties", false,
	)
	put := clone(post)
	at(put, "properties").del("uuid")
	post14 := clone(post)
	at(post14, "properties").put("parent_provider_uuid", obj(
		"anyOf", []any{
			uuidString(),
			obj("type", "null"),
		},
	))
	put14 := clone(post14)
	at(put14, "properties").del("uuid")
	s.providerCreate, s.providerCreate14 = mustCompile(post), mustCompile(post14)
	s.providerUpdate, s.providerUpdate14 = mustCompile(put), mustCompile(put14)
	s.providerList = mustCompileAll(providerListQueries())
	s.providerListV15 = mustCompileAll(providerListQueries())
	for _, sc := range s.providerListV15 {
		withFormat(sc.root, "uuid", isHyphenatedUUID)
	}
}

// providerListQueries are the GET /resource_providers query schemas keyed
// by the minor that introduced them.
func providerListQueries() map[int]*object {
	list := map[int]*object{0: obj(
		"type", "object",
		"properties", obj(
			"name", obj("type", "string"),
			"uuid", uuidString(),
		),
		"additionalProperties", false,
	)}
	list[3] = clone(list[0])
	at(list[3], "properties").put("member_of", obj("type", "string"))
	list[4] = clone(list[3])
	at(list[4], "properties").put("resources", obj("type", "string"))
	list[14] = clone(list[4])
	at(list[14], "properties").put("in_tree", uuidString())
	list[18] = clone(list[14])
	at(list[18], "properties").put("required", obj("type", "string"))
	return list
}

// ProviderCreate is the POST /resource_providers body: name and uuid, plus
// parent_provider_uuid (a uuid or null) from 1.14.
func (s *Set) ProviderCreate(minor int) *Schema {
	if minor >= 14 {
		return s.providerCreate14
	}
	return s.providerCreate
}

// ProviderUpdate is the PUT /resource_providers/{uuid} body: name, plus
// parent_provider_uuid from 1.14.
func (s *Set) ProviderUpdate(minor int) *Schema {
	if minor >= 14 {
		return s.providerUpdate14
	}
	return s.providerUpdate
}

// ProviderListQuery is the GET /resource_providers query: name and uuid;
// member_of from 1.3, resources from 1.4, in_tree from 1.14, required from
// 1.18. Its uuid and in_tree are checked as Placement 8.0.0 does.
func (s *Set) ProviderListQuery(minor int) *Schema { return pick(s.providerList, minor) }

// ProviderListQueryOf is ProviderListQuery as release r validates it:
// 15.0.0 wants uuid and in_tree in the hyphenated form.
func (s *Set) ProviderListQueryOf(r release.Release, minor int) *Schema {
	if r == release.V8 {
		return s.ProviderListQuery(minor)
	}
	return pick(s.providerListV15, minor)
}
