package placementsrv

import (
	"fmt"
	"net/http"

	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
	"github.com/placement-syncd/placement-syncd/placementsrv/policy"
)

// Policy rule names, as Placement 8.0.0 names them; a 403 names the rule.
const (
	policyRPList           = policy.RPList
	policyRPCreate         = policy.RPCreate
	policyRPShow           = policy.RPShow
	policyRPUpdate         = policy.RPUpdate
	policyRPDelete         = policy.RPDelete
	policyInventoryList    = policy.InventoryList
	policyInventoryCreate  = policy.InventoryCreate
	policyInventoryShow    = policy.InventoryShow
	policyInventoryUpdate  = policy.InventoryUpdate
	policyInventoryDelete  = policy.InventoryDelete
	policyAggregateList    = policy.AggregateList
	policyAggregateUpdate  = policy.AggregateUpdate
	policyRPAllocationList = policy.RPAllocationList
	policyRPTraitList      = policy.RPTraitList
	policyRPTraitUpdate    = policy.RPTraitUpdate
	policyRPTraitDelete    = policy.RPTraitDelete
	policyRPUsages         = policy.RPUsages
	policyTotalUsages      = policy.TotalUsages
	policyAllocList        = policy.AllocList
	policyAllocManage      = policy.AllocManage
	policyAllocUpdate      = policy.AllocUpdate
	policyAllocDelete      = policy.AllocDelete
	policyCandidatesList   = policy.CandidatesList
	policyReshape          = policy.Reshape
	policyClassList        = policy.ClassList
	policyClassCreate      = policy.ClassCreate
	policyClassShow        = policy.ClassShow
	policyClassUpdate      = policy.ClassUpdate
	policyClassDelete      = policy.ClassDelete
	policyTraitList        = policy.TraitList
	policyTraitShow        = policy.TraitShow
	policyTraitUpdate      = policy.TraitUpdate
	policyTraitDelete      = policy.TraitDelete
)

// authorize checks rule for the request's credentials against Placement's
// default target, the caller's own project and user.
func (r *request) authorize(rule string) error {
	t := policy.DefaultTarget(&r.creds)
	return r.authorizeTarget(rule, &t)
}

// authorizeTarget checks rule against an explicit target. A scope
// mismatch (enforce_scope) is a 403 whose detail is the bare rule name,
// as upstream turns InvalidScope into PolicyNotAuthorized(rule).
func (r *request) authorizeTarget(rule string, t *policy.Target) error {
	switch r.srv.policy.Enforce(rule, &r.creds, t) {
	case policy.Allowed:
		return nil
	case policy.ScopeDenied:
		return &apierror.Error{Status: http.StatusForbidden, Code: apierror.CodeDefault, Detail: rule}
	case policy.Denied:
		return &apierror.Error{Status: http.StatusForbidden, Code: apierror.CodeDefault, Detail: "Policy does not allow " + rule + " to be performed."}
	}
	return fmt.Errorf("policy rule %q is not registered", rule)
}
