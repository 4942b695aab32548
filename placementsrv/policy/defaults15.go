package policy

const (
	adminOrService       = "rule:admin_or_service_api"
	service              = "rule:service_api"
	adminReaderOrService = "rule:admin_or_project_reader_or_service_api"
)

// defaults15 is the rule set of Placement 9.0.0 to 15.0.0: every API is
// for a project-scoped admin or the service role, the reshaper for the
// service role alone, and total usages also for a reader of the project.
func defaults15() []Default {
	base := func(name, check, desc string, scope []string) Default {
		return Default{Name: name, Check: check, Description: desc, ScopeTypes: scope,
			DeprecatedName: deprecatedAdminName, DeprecatedCheck: deprecatedAdminCheck}
	}
	api := func(name, check, desc string) Default {
		return Default{Name: name, Check: check, Description: desc, ScopeTypes: []string{"project"}}
	}
	return []Default{
		{Name: AdminAPI, Check: "role:admin", Description: "Default rule for most placement APIs.", ScopeTypes: []string{"project"}},
		base(ServiceAPI, "role:service", "Default rule for service-to-service placement APIs.", []string{"project"}),
		base(AdminOrServiceAPI, "role:admin or role:service", "Default rule for most placement APIs.", []string{"project"}),
		base(ProjectReaderAPI, "role:reader and project_id:%(project_id)s", "Default rule for Project level reader APIs.", nil),
		base(AdminOrProjectReaderOrService, "role:admin or rule:project_reader_api or role:service", "Default rule for project level reader APIs.", []string{"project"}),

		api(RPList, adminOrService, "List resource providers."),
		api(RPCreate, adminOrService, "Create resource provider."),
		api(RPShow, adminOrService, "Show resource provider."),
		api(RPUpdate, adminOrService, "Update resource provider."),
		api(RPDelete, adminOrService, "Delete resource provider."),

		api(ClassList, adminOrService, "List resource classes."),
		api(ClassCreate, adminOrService, "Create resource class."),
		api(ClassShow, adminOrService, "Show resource class."),
		api(ClassUpdate, adminOrService, "Update resource class."),
		api(ClassDelete, adminOrService, "Delete resource class."),

		api(InventoryList, adminOrService, "List resource provider inventories."),
		api(InventoryCreate, adminOrService, "Create one resource provider inventory."),
		api(InventoryShow, adminOrService, "Show resource provider inventory."),
		api(InventoryUpdate, adminOrService, "Update resource provider inventory."),
		api(InventoryDelete, adminOrService, "Delete resource provider inventory."),

		api(AggregateList, adminOrService, "List resource provider aggregates."),
		api(AggregateUpdate, adminOrService, "Update resource provider aggregates."),

		api(RPUsages, adminOrService, "List resource provider usages."),
		api(TotalUsages, adminReaderOrService, "List total resource usages for a given project."),

		api(TraitList, adminOrService, "List traits."),
		api(TraitShow, adminOrService, "Show trait."),
		api(TraitUpdate, adminOrService, "Update trait."),
		api(TraitDelete, adminOrService, "Delete trait."),
		api(RPTraitList, adminOrService, "List resource provider traits."),
		api(RPTraitUpdate, adminOrService, "Update resource provider traits."),
		api(RPTraitDelete, adminOrService, "Delete resource provider traits."),

		api(AllocManage, adminOrService, "Manage allocations."),
		api(AllocList, adminOrService, "List allocations."),
		api(AllocUpdate, adminOrService, "Update allocations."),
		api(AllocDelete, adminOrService, "Delete allocations."),
		api(RPAllocationList, adminOrService, "List resource provider allocations."),

		api(CandidatesList, adminOrService, "List allocation candidates."),

		api(Reshape, service, "Reshape Inventory and Allocations."),

		explainDefault(),
		capacityDefault(),
	}
}
