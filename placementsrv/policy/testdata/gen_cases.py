#!/usr/bin/python3
"""Generate differential cases for the policy parser and evaluator from
oslo.policy itself: random rule strings, what oslo.policy parses them to
(str of the check tree, or null when it cannot understand them) and how
they evaluate for a set of credentials and targets.

Run with the system Python that has oslo.policy:
    /usr/bin/python3 gen_cases.py > cases.json
"""
import json
import random

from oslo_policy import _checks, _parser

failed = []
_parser.LOG.exception = lambda *a, **k: failed.append(True)
_parser.LOG.error = lambda *a, **k: failed.append(True)

ATOMS = [
    "role:admin", "role:reader", "role:Member", "role:%(project_id)s",
    "project_id:%(project_id)s", "user_id:%(user_id)s", "system_scope:all",
    "domain_id:d1", "@", "!", "True:%(flag)s", "'p1':%(project_id)s",
    "20:%(project_id)s", "None:%(missing)s", "roles:reader", "system:all",
    "project_id:None", "is_admin_project:True", "user_id:u%%1",
    "role:%(missing)s", "foo.bar:x", "project_id:p%(project_id)s",
]

def expr(rng, depth):
    r = rng.random()
    if depth > 3 or r < 0.35:
        return rng.choice(ATOMS)
    if r < 0.5:
        return rng.choice(["not ", "NOT ", "not("]) + expr(rng, depth + 1) + ("" if "(" not in "" else "")
    if r < 0.7:
        return "(" + expr(rng, depth + 1) + ")"
    op = rng.choice([" and ", " or ", " AND ", " Or ", "\tand\n"])
    return expr(rng, depth + 1) + op + expr(rng, depth + 1)

def mangle(rng, s):
    # Occasionally break the rule to exercise failures.
    r = rng.random()
    if r < 0.05:
        return s + " and"
    if r < 0.08:
        return "(" + s
    if r < 0.11:
        return s + ")"
    if r < 0.13:
        return "or " + s
    if r < 0.15:
        return s + " 'quoted'"
    if r < 0.17:
        return s.replace(":", "", 1)
    return s

CREDS = [
    {"roles": ["admin"], "project_id": "p1", "user_id": "u1", "system_scope": None, "domain_id": None, "is_admin_project": True},
    {"roles": ["reader", "member"], "project_id": "p1", "user_id": "u%1", "system_scope": "all", "domain_id": None, "is_admin_project": False},
    {"roles": ["Admin"], "project_id": None, "user_id": "u2", "system_scope": None, "domain_id": "d1", "is_admin_project": True},
    {"roles": [], "project_id": "p2", "user_id": "u1", "system_scope": None, "domain_id": None, "is_admin_project": True},
    {"roles": ["p1"], "project_id": "pp1", "user_id": "u1", "system_scope": None, "domain_id": None, "is_admin_project": True},
]
TARGETS = [
    {"project_id": "p1", "user_id": "u1"},
    {"project_id": "p2"},
    {"project_id": None, "user_id": None},
    {"project_id": "p1", "user_id": "u1", "flag": True},
]

class Enf:
    rules = {}

def evaluate(check, creds, target):
    c = dict(creds)
    if c.get("system_scope"):
        c["system"] = c["system_scope"]
    try:
        return bool(_checks._check(check, target, c, Enf(), None))
    except Exception:
        return None

def main():
    rng = random.Random(20240501)
    cases = []
    seen = set()
    while len(cases) < 1500:
        s = mangle(rng, expr(rng, 0))
        if rng.random() < 0.2:
            s = "  " + s.replace(" ", "  ") + " "
        if s in seen:
            continue
        seen.add(s)
        del failed[:]
        check = _parser.parse_rule(s)
        if failed or not isinstance(check, _checks.BaseCheck):
            cases.append({"rule": s, "parsed": None})
            continue
        results = [[evaluate(check, c, t) for t in TARGETS] for c in CREDS]
        cases.append({"rule": s, "parsed": str(check), "results": results})
    json.dump({"creds": CREDS, "targets": TARGETS, "cases": cases}, __import__("sys").stdout, indent=0)

main()
