package policy

import "github.com/placement-syncd/placement-syncd/placementsrv/release"

// Default is a rule Placement registers, with its default check and, for
// the base rules, the deprecated check that legacy mode ORs in.
type Default struct {
	Name        string
	Check       string
	Description string
	// ScopeTypes are the token scopes the rule is meant for; with
	// enforce_scope a token of another scope is refused.
	ScopeTypes []string
	// DeprecatedName and DeprecatedCheck describe the rule this one
	// replaces (oslo.policy's DeprecatedRule).
	DeprecatedName  string
	DeprecatedCheck string
}

// Base rule names: Placement 8.0.0's system-scoped ones, and since 9.0.0
// the project-scoped admin and service ones.
const (
	AdminAPI              = "admin_api"
	SystemAdminAPI        = "system_admin_api"
	SystemReaderAPI       = "system_reader_api"
	ProjectReaderAPI      = "project_reader_api"
	SystemOrProjectReader = "system_or_project_reader"

	ServiceAPI                    = "service_api"
	AdminOrServiceAPI             = "admin_or_service_api"
	AdminOrProjectReaderOrService = "admin_or_project_reader_or_service_api"
)

// API rule names, the same in every release.
const (
	RPList           = "placement:resource_providers:list"
	RPCreate         = "placement:resource_providers:create"
	RPShow           = "placement:resource_providers:show"
	RPUpdate         = "placement:resource_providers:update"
	RPDelete         = "placement:resource_providers:delete"
	ClassList        = "placement:resource_classes:list"
	ClassCreate      = "placement:resource_classes:create"
	ClassShow        = "placement:resource_classes:show"
	ClassUpdate      = "placement:resource_classes:update"
	ClassDelete      = "placement:resource_classes:delete"
	InventoryList    = "placement:resource_providers:inventories:list"
	InventoryCreate  = "placement:resource_providers:inventories:create"
	InventoryShow    = "placement:resource_providers:inventories:show"
	InventoryUpdate  = "placement:resource_providers:inventories:update"
	InventoryDelete  = "placement:resource_providers:inventories:delete"
	AggregateList    = "placement:resource_providers:aggregates:list"
	AggregateUpdate  = "placement:resource_providers:aggregates:update"
	RPUsages         = "placement:resource_providers:usages"
	TotalUsages      = "placement:usages"
	TraitList        = "placement:traits:list"
	TraitShow        = "placement:traits:show"
	TraitUpdate      = "placement:traits:update"
	TraitDelete      = "placement:traits:delete"
	RPTraitList      = "placement:resource_providers:traits:list"
	RPTraitUpdate    = "placement:resource_providers:traits:update"
	RPTraitDelete    = "placement:resource_providers:traits:delete"
	AllocManage      = "placement:allocations:manage"
	AllocList        = "placement:allocations:list"
	AllocUpdate      = "placement:allocations:update"
	AllocDelete      = "placement:allocations:delete"
	RPAllocationList = "placement:resource_providers:allocations:list"
	CandidatesList   = "placement:allocation_candidates:list"
	Reshape          = "placement:reshaper:reshape"
)

// Explain guards GET /_placement-syncd/explain/allocation_candidates, our
// own diagnostic route (not Placement's): it reveals every provider's
// usage and traits, so it is for admins only, in every release.
const Explain = "placement-syncd:allocation_candidates:explain"

// explainDefault is the Explain rule, registered after Placement's own.
func explainDefault() Default {
	return Default{Name: Explain, Check: "role:admin", Description: "Explain an allocation candidates query (placement-syncd's own route)."}
}

// Capacity guards GET /_placement-syncd/capacity, our own route: it
// shows every host's free room by flavor, so it is for admins only, in
// every release.
const Capacity = "placement-syncd:capacity"

// capacityDefault is the Capacity rule, registered after Explain.
func capacityDefault() Default {
	return Default{Name: Capacity, Check: "role:admin", Description: "Show how many more of each Nova flavor fit (placement-syncd's own route)."}
}

const (
	systemAdmin    = "rule:system_admin_api"
	systemReader   = "rule:system_reader_api"
	systemOrReader = "rule:system_or_project_reader"
	// The base rules all replace "admin_api"; upstream names the
	// deprecated rule "rule:admin_api", and so must we, because a policy
	// file entry of that name takes part in the deprecation handling.
	deprecatedAdminName  = "rule:admin_api"
	deprecatedAdminCheck = "role:admin"
)

// Defaults returns the registered rules of Placement release r, in
// registration order (placement/policies/__init__.py).
func Defaults(r release.Release) []Default {
	if r == release.V8 {
		return defaults8()
	}
	return defaults15()
}

// defaults8 is Placement 8.0.0's rule set: system-scoped admin and reader.
func defaults8() []Default {
	base := func(name, check, desc string) Default {
		return Default{Name: name, Check: check, Description: desc, DeprecatedName: deprecatedAdminName, DeprecatedCheck: deprecatedAdminCheck}
	}
	api := func(name, check, desc string) Default {
		return Default{Name: name, Check: check, Description: desc, ScopeTypes: []string{"system"}}
	}
	return []Default{
		{Name: AdminAPI, Check: "role:admin", Description: "Default rule for most placement APIs.", ScopeTypes: []string{"system"}},
		base(SystemAdminAPI, "role:admin and system_scope:all", "Default rule for System Admin APIs."),
		base(SystemReaderAPI, "role:reader and system_scope:all", "Default rule for System level read only APIs."),
		base(ProjectReaderAPI, "role:reader and project_id:%(project_id)s", "Default rule for Project level read only APIs."),
		base(SystemOrProjectReader, "rule:system_reader_api or rule:project_reader_api", "Default rule for System+Project read only APIs."),

		api(RPList, systemReader, "List resource providers."),
		api(RPCreate, systemAdmin, "Create resource provider."),
		api(RPShow, systemReader, "Show resource provider."),
		api(RPUpdate, systemAdmin, "Update resource provider."),
		api(RPDelete, systemAdmin, "Delete resource provider."),

		api(ClassList, systemReader, "List resource classes."),
		api(ClassCreate, systemAdmin, "Create resource class."),
		api(ClassShow, systemReader, "Show resource class."),
		api(ClassUpdate, systemAdmin, "Update resource class."),
		api(ClassDelete, systemAdmin, "Delete resource class."),

		api(InventoryList, systemReader, "List resource provider inventories."),
		api(InventoryCreate, systemAdmin, "Create one resource provider inventory."),
		api(InventoryShow, systemReader, "Show resource provider inventory."),
		api(InventoryUpdate, systemAdmin, "Update resource provider inventory."),
		api(InventoryDelete, systemAdmin, "Delete resource provider inventory."),

		api(AggregateList, systemReader, "List resource provider aggregates."),
		api(AggregateUpdate, systemAdmin, "Update resource provider aggregates."),

		api(RPUsages, systemReader, "List resource provider usages."),
		{Name: TotalUsages, Check: systemOrReader, Description: "List total resource usages for a given project.", ScopeTypes: []string{"system", "project"}},

		api(TraitList, systemReader, "List traits."),
		api(TraitShow, systemReader, "Show trait."),
		api(TraitUpdate, systemAdmin, "Update trait."),
		api(TraitDelete, systemAdmin, "Delete trait."),
		api(RPTraitList, systemReader, "List resource provider traits."),
		api(RPTraitUpdate, systemAdmin, "Update resource provider traits."),
		api(RPTraitDelete, systemAdmin, "Delete resource provider traits."),

		api(AllocManage, systemAdmin, "Manage allocations."),
		api(AllocList, systemReader, "List allocations."),
		api(AllocUpdate, systemAdmin, "Update allocations."),
		api(AllocDelete, systemAdmin, "Delete allocations."),
		api(RPAllocationList, systemReader, "List resource provider allocations."),

		api(CandidatesList, systemReader, "List allocation candidates."),

		api(Reshape, systemAdmin, "Reshape Inventory and Allocations."),

		explainDefault(),
		capacityDefault(),
	}
}
