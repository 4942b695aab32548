#!/usr/bin/python3
"""Generate enforcer cases from oslo.policy with the rules of the Placement
that `from placement import policies` finds: for each mode (enforce_scope,
enforce_new_defaults), with and without every-form.yaml, the decision for
each rule and set of credentials, on the caller's own target and on
{"project_id": "p1"}: two letters, a(llow), d(eny) or s(cope). The
registered rules themselves are listed too, so that the test can compare
them with its own defaults.
Run from the repository's root, with Debian's packaged 8.0.0:
  /usr/bin/python3 placementsrv/policy/testdata/gen_enforce.py \
    > placementsrv/policy/testdata/enforce.json
and with 15.0.0's source:
  PYTHONPATH=../shared/anchors/openstack-placement-15/src /usr/bin/python3 \
    placementsrv/policy/testdata/gen_enforce.py > placementsrv/policy/testdata/enforce15.json"""
import json
import os
import sys
import warnings

from oslo_config import cfg
from oslo_policy import policy as oslo_policy
from placement import policies

warnings.simplefilter("ignore")
HERE = os.path.dirname(os.path.abspath(__file__))

CREDS = {
    "legacy-admin": {"roles": ["admin"], "project_id": "p1", "user_id": "u1"},
    "system-admin": {"roles": ["admin", "member", "reader"], "system_scope": "all", "user_id": "u1"},
    "system-reader": {"roles": ["reader"], "system_scope": "all", "user_id": "u1"},
    "project-admin": {"roles": ["admin", "member", "reader"], "project_id": "p1", "user_id": "u1"},
    "project-member": {"roles": ["member", "reader"], "project_id": "p1", "user_id": "u1"},
    "project-reader": {"roles": ["reader"], "project_id": "p1", "user_id": "u1"},
    "service": {"roles": ["service"], "project_id": "p3", "user_id": "u3"},
    "system-service": {"roles": ["service"], "system_scope": "all", "user_id": "u3"},
    "other-reader": {"roles": ["reader"], "project_id": "p2", "user_id": "u2"},
    "blocked": {"roles": ["reader", "blocked"], "project_id": "p1", "user_id": "u1"},
    "operator": {"roles": ["operator"], "project_id": "p1", "user_id": "u1"},
    "domain-admin": {"roles": ["admin"], "domain_id": "d1", "user_id": "u1"},
    "none": {"roles": [], "project_id": "p1", "user_id": "u1"},
}
KEYS = ["user_id", "user_domain_id", "system_scope", "domain_id", "project_id",
        "project_domain_id", "service_user_id", "service_user_domain_id",
        "service_project_id", "service_project_domain_id"]


def creds_dict(c):
    d = {k: c.get(k) for k in KEYS}
    d["roles"] = c["roles"]
    d["service_roles"] = []
    d["is_admin_project"] = True
    return d


def main():
    out = []
    names = [r.name for r in policies.list_rules()]
    for scope in (False, True):
        for new in (False, True):
            for pfile in (None, "every-form.yaml"):
                conf = cfg.ConfigOpts()
                conf([], project="x")
                enf = oslo_policy.Enforcer(conf, policy_file=os.path.join(HERE, pfile) if pfile else "nonexistent.yaml")
                conf.set_override("enforce_scope", scope, "oslo_policy")
                conf.set_override("enforce_new_defaults", new, "oslo_policy")
                enf.register_defaults(policies.list_rules())
                enf.load_rules()
                mode = {"scope": scope, "new": new, "file": pfile or "", "results": {}}
                out.append(mode)
                for name in names:
                    row = mode["results"][name] = {}
                    for cname, c in CREDS.items():
                        row[cname] = ""
                        for tname, target in (("own", {"project_id": c.get("project_id"), "user_id": c.get("user_id")}),
                                              ("p1", {"project_id": "p1"})):
                            try:
                                ok = enf.authorize(name, target, creds_dict(c), do_raise=True)
                                res = "allow" if ok else "deny"
                            except oslo_policy.InvalidScope:
                                res = "scope"
                            except oslo_policy.PolicyNotAuthorized:
                                res = "deny"
                            row[cname] += res[0]
    rules = [{"name": r.name, "check": r.check_str, "description": r.description, "scope_types": r.scope_types,
              "deprecated": r.deprecated_rule and [r.deprecated_rule.name, r.deprecated_rule.check_str]}
             for r in policies.list_rules()]
    json.dump({"creds": CREDS, "rules": rules, "modes": out}, sys.stdout, indent=1, sort_keys=True)


main()
