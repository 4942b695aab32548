package placementsrv

import "net/http"

// Policy rule names, as Placement 8.0.0 names them; a 403 names the rule.
const (
	policyRPList           = "placement:resource_providers:list"
	policyRPCreate         = "placement:resource_providers:create"
	policyRPShow           = "placement:resource_providers:show"
	policyRPUpdate         = "placement:resource_providers:update"
	policyRPDelete         = "placement:resource_providers:delete"
	policyInventoryList    = "placement:resource_providers:inventories:list"
	policyInventoryCreate  = "placement:resource_providers:inventories:create"
	policyInventoryShow    = "placement:resource_providers:inventories:show"
	policyInventoryUpdate  = "placement:resource_providers:inventories:update"
	policyInventoryDelete  = "placement:resource_providers:inventories:delete"
	policyAggregateList    = "placement:resource_providers:aggregates:list"
	policyAggregateUpdate  = "placement:resource_providers:aggregates:update"
	policyRPAllocationList = "placement:resource_providers:allocations:list"
	policyRPTraitList      = "placement:resource_providers:traits:list"
	policyRPTraitUpdate    = "placement:resource_providers:traits:update"
	policyRPTraitDelete    = "placement:resource_providers:traits:delete"
	policyRPUsages         = "placement:resource_providers:usages"
	policyTotalUsages      = "placement:usages"
	policyAllocList        = "placement:allocations:list"
	policyAllocManage      = "placement:allocations:manage"
	policyAllocUpdate      = "placement:allocations:update"
	policyAllocDelete      = "placement:allocations:delete"
	policyCandidatesList   = "placement:allocation_candidates:list"
	policyReshape          = "placement:reshaper:reshape"
	policyClassList        = "placement:resource_classes:list"
	policyClassCreate      = "placement:resource_classes:create"
	policyClassShow        = "placement:resource_classes:show"
	policyClassUpdate      = "placement:resource_classes:update"
	policyClassDelete      = "placement:resource_classes:delete"
	policyTraitList        = "placement:traits:list"
	policyTraitShow        = "placement:traits:show"
	policyTraitUpdate      = "placement:traits:update"
	policyTraitDelete      = "placement:traits:delete"
)

// authorize checks rule for the request's credentials. Under Placement's
// default policy every rule requires the admin role; operator policy files
// and scoped (secure RBAC) rules are not supported yet.
func (r *request) authorize(rule string) error {
	for _, role := range r.roles {
		if role == "admin" {
			return nil
		}
	}
	return &httpError{
		Status: http.StatusForbidden,
		Code:   CodeDefault,
		Detail: "Policy does not allow " + rule + " to be performed.",
	}
}
