package policy

// Value is one credential or target attribute as Python sees it: a
// string, None, or (for a target) absent.
type Value struct {
	s     string
	state uint8
}

const (
	valueMissing uint8 = iota
	valueNone
	valueString
)

// Str is a string value.
func Str(s string) Value { return Value{s: s, state: valueString} }

// None is Python's None.
func None() Value { return Value{state: valueNone} }

// OptStr is Str(s) when set, else None.
func OptStr(s string, set bool) Value {
	if set {
		return Str(s)
	}
	return None()
}

// Truthy is Python truthiness: a non-empty string.
func (v Value) Truthy() bool { return v.state == valueString && v.s != "" }

// Get returns the string, "" for None.
func (v Value) Get() string { return v.s }

// String is Python's str(): "None" for None.
func (v Value) String() string {
	if v.state != valueString {
		return "None"
	}
	return v.s
}

// Credentials are the request's policy values, as oslo.context's
// to_policy_values presents them to oslo.policy.
type Credentials struct {
	UserID, UserDomainID, ProjectID, ProjectDomainID, DomainID Value
	// SystemScope is "all" for a system-scoped token.
	SystemScope Value
	Roles       []string
	// IsAdminProject defaults to true, as oslo.context assumes when
	// Keystone says nothing.
	IsAdminProject bool

	ServiceUserID, ServiceUserDomainID, ServiceProjectID, ServiceProjectDomainID Value
	ServiceRoles                                                                 []string
}

// Scope is the token's scope as oslo.policy derives it: "system" when
// system_scope is set, "domain" when domain_id is, else "project".
func (c *Credentials) Scope() string {
	switch {
	case c.SystemScope.Truthy():
		return "system"
	case c.DomainID.Truthy():
		return "domain"
	}
	return "project"
}

// credValue is a credential found by name: a scalar or a list.
type credValue struct {
	Value
	list   []string
	isList bool
}

// lookup finds a credential by its policy name. "system" exists only
// for system-scoped tokens, as oslo.policy adds it.
func (c *Credentials) lookup(name string) (credValue, bool) {
	switch name {
	case "user_id":
		return credValue{Value: none(c.UserID)}, true
	case "user_domain_id":
		return credValue{Value: none(c.UserDomainID)}, true
	case "system_scope":
		return credValue{Value: none(c.SystemScope)}, true
	case "system":
		if c.SystemScope.Truthy() {
			return credValue{Value: c.SystemScope}, true
		}
		return credValue{}, false
	case "domain_id":
		return credValue{Value: none(c.DomainID)}, true
	case "project_id":
		return credValue{Value: none(c.ProjectID)}, true
	case "project_domain_id":
		return credValue{Value: none(c.ProjectDomainID)}, true
	case "roles":
		return credValue{list: c.Roles, isList: true}, true
	case "is_admin_project":
		if c.IsAdminProject {
			return credValue{Value: Str("True")}, true
		}
		return credValue{Value: Str("False")}, true
	case "service_user_id":
		return credValue{Value: none(c.ServiceUserID)}, true
	case "service_user_domain_id":
		return credValue{Value: none(c.ServiceUserDomainID)}, true
	case "service_project_id":
		return credValue{Value: none(c.ServiceProjectID)}, true
	case "service_project_domain_id":
		return credValue{Value: none(c.ServiceProjectDomainID)}, true
	case "service_roles":
		return credValue{list: c.ServiceRoles, isList: true}, true
	}
	return credValue{}, false
}

// none maps an unset credential to None: every standard key exists.
func none(v Value) Value {
	if v.state == valueMissing {
		return None()
	}
	return v
}

// Target is what an action applies to. Placement passes either the
// default {project_id, user_id} of the caller or, for total usages,
// {project_id} of the query; absent keys make %(key)s checks deny.
type Target struct {
	ProjectID Value
	UserID    Value
}

// DefaultTarget is Placement's target when a handler passes none: the
// caller's own project and user.
func DefaultTarget(c *Credentials) Target {
	return Target{ProjectID: none(c.ProjectID), UserID: none(c.UserID)}
}

func (t *Target) lookup(key string) (Value, bool) {
	switch key {
	case "project_id":
		return t.ProjectID, t.ProjectID.state != valueMissing
	case "user_id":
		return t.UserID, t.UserID.state != valueMissing
	}
	return Value{}, false
}
