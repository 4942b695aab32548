#!/usr/bin/python3
"""Regenerate cases.json: expected jsonschema 4.10.3 results for schema_test.go.

Run with the system interpreter that has placement and jsonschema installed:
    /usr/bin/python3 testdata/gen_cases.py > testdata/cases.json
"""
import json
import sys

import jsonschema
import placement.util  # noqa: F401  (registers the "uuid" format checker)
from placement.schemas import aggregate, allocation, allocation_candidate
from placement.schemas import inventory, reshaper, resource_class
from placement.schemas import resource_provider as rp, trait, usage

# Accessor name/minor (as used by the Go test) -> upstream schema.
NAMED = {
    "ProviderCreate/0": rp.POST_RESOURCE_PROVIDER_SCHEMA,
    "ProviderCreate/14": rp.POST_RP_SCHEMA_V1_14,
    "ProviderUpdate/0": rp.PUT_RESOURCE_PROVIDER_SCHEMA,
    "ProviderUpdate/14": rp.PUT_RP_SCHEMA_V1_14,
    "ProviderListQuery/0": rp.GET_RPS_SCHEMA_1_0,
    "ProviderListQuery/3": rp.GET_RPS_SCHEMA_1_3,
    "ProviderListQuery/4": rp.GET_RPS_SCHEMA_1_4,
    "ProviderListQuery/14": rp.GET_RPS_SCHEMA_1_14,
    "ProviderListQuery/18": rp.GET_RPS_SCHEMA_1_18,
    "InventoryCreate": inventory.POST_INVENTORY_SCHEMA,
    "InventoryUpdate": inventory.BASE_INVENTORY_SCHEMA,
    "InventoriesReplace": inventory.PUT_INVENTORY_SCHEMA,
    "ResourceClassCreate": resource_class.POST_RC_SCHEMA_V1_2,
    "ResourceClassUpdate": resource_class.PUT_RC_SCHEMA_V1_2,
    "CustomTrait": trait.CUSTOM_TRAIT,
    "TraitsPut": trait.PUT_TRAITS_SCHEMA,
    "ProviderTraitsSet": trait.SET_TRAITS_FOR_RP_SCHEMA,
    "TraitListQuery": trait.LIST_TRAIT_SCHEMA,
    "AggregatesPut/1": aggregate.PUT_AGGREGATES_SCHEMA_V1_1,
    "AggregatesPut/19": aggregate.PUT_AGGREGATES_SCHEMA_V1_19,
    "AllocationsPut/0": allocation.ALLOCATION_SCHEMA,
    "AllocationsPut/8": allocation.ALLOCATION_SCHEMA_V1_8,
    "AllocationsPut/12": allocation.ALLOCATION_SCHEMA_V1_12,
    "AllocationsPut/28": allocation.ALLOCATION_SCHEMA_V1_28,
    "AllocationsPut/34": allocation.ALLOCATION_SCHEMA_V1_34,
    "AllocationsPut/38": allocation.ALLOCATION_SCHEMA_V1_38,
    "AllocationsPost/13": allocation.POST_ALLOCATIONS_V1_13,
    "AllocationsPost/28": allocation.POST_ALLOCATIONS_V1_28,
    "AllocationsPost/34": allocation.POST_ALLOCATIONS_V1_34,
    "AllocationsPost/38": allocation.POST_ALLOCATIONS_V1_38,
    "ReshaperPost/30": reshaper.POST_RESHAPER_SCHEMA,
    "ReshaperPost/34": reshaper.POST_RESHAPER_SCHEMA_V1_34,
    "ReshaperPost/38": reshaper.POST_RESHAPER_SCHEMA_V1_38,
    "UsagesQuery/9": usage.GET_USAGES_SCHEMA_1_9,
    "UsagesQuery/38": usage.GET_USAGES_SCHEMA_V1_38,
}
for _mv in (10, 16, 17, 21, 25, 31, 33, 35, 36):
    NAMED["AllocationCandidatesQuery/%d" % _mv] = getattr(
        allocation_candidate, "GET_SCHEMA_1_%d" % _mv)

U1 = "1f2b3c4d-0000-4000-8000-00000000000a"
U2 = "2f2b3c4d-0000-4000-8000-00000000000b"
U3 = "3f2b3c4d-0000-4000-8000-00000000000c"
LONG = "x" * 300


def j(v):
    return json.dumps(v)


CASES = []


def body(schema, *instances):
    for inst in instances:
        CASES.append({"schema": schema, "kind": "json",
                      "instance": inst if isinstance(inst, str) else j(inst)})


def query(schema, *pair_lists):
    for pairs in pair_lists:
        CASES.append({"schema": schema, "kind": "query", "query": pairs})


def inline(schema, *instances):
    for inst in instances:
        CASES.append({"schema": "inline", "inline": j(schema), "kind": "json",
                      "instance": inst if isinstance(inst, str) else j(inst)})


# ---- keyword coverage with small schemas ----
inline({"type": "integer"}, "1", "1.0", "1.5", "true", "false", '"1"', "null",
       "123456789012345678901234567890", "1e400", "-1e400", "-0.0", "1E2",
       "[]", "{}", '{"b": 1, "a": [1, 2.5, null, true]}')
inline({"type": "number"}, "1", "0.1", "true", '"x"', "1e16", "1e15",
       "12345678901234567.0", "1e-5", "0.0001", "123456789.123", "-2.5e-7",
       "5e-324", "1.7976931348623157e308")
inline({"type": ["integer", "null"]}, "null", "1", '"a"', "2.5")
inline({"type": "string"}, '"ok"', "1", '"it\'s"', '"say \\"hi\\""',
       '"both \' and \\""', '"back\\\\slash"', '"new\\nline\\ttab\\r"',
       '"caf\\u00e9"', '"nb\\u00a0sp"', '"ls\\u2028ps"', '"\\ud83d\\ude00"',
       '"ctl\\u0001\\u007f\\u0085"', '"zw\\u200bj"', '"pua\\ue000"',
       '"\\u00ad soft"')
inline({"type": "array"}, '{"b": 1, "a": 2}', '{"a": {"y": 1, "x": 2}}')
inline({"type": "object"}, "[1, [2, []], {}]")
inline({"type": "boolean"}, "0", "true")
inline({"type": "null"}, "0", "null", '""')
inline({"properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
        "required": ["z", "a", "y"]},
       {}, {"a": 1, "b": "x"}, {"b": "x", "a": 1}, [], {"a": "s", "y": 1, "z": 1})
inline({"type": "object", "properties": {"a": {}},
        "additionalProperties": False},
       {"a": 1}, {"a": 1, "zz": 1}, {"q": 1, "b": 2, "a": 3}, {"it's": 1})
inline({"type": "object", "patternProperties": {"^[a-z]+$": {"type": "integer"},
                                               "^x": {"minimum": 3}},
        "additionalProperties": False},
       {"abc": 1}, {"abc": "s"}, {"ABC": 1}, {"ABC": 1, "A1": 2},
       {"xa": 1}, {"xa": "s"}, {"b": "s", "a": "t"})
inline({"type": "object", "additionalProperties": {"type": "string"},
        "properties": {"k": {"type": "integer"}}},
       {"k": 1, "a": "s"}, {"k": 1, "b": 1}, {"k": "x", "b": 1})
inline({"type": "object", "patternProperties": {}, "additionalProperties": False},
       {"a": 1})
inline({"minProperties": 2, "maxProperties": 3},
       {}, {"a": 1}, {"a": 1, "b": 2}, {"d": 1, "c": 2, "b": 3, "a": 4}, "[]")
inline({"items": {"type": "integer", "minimum": 0}, "minItems": 1, "maxItems": 3},
       [], [1], [1, 2, 3, 4], [1, -1], [-1, "a"], "{}")
inline({"uniqueItems": True},
       [1, 2], [1, 1], [1, True], [1, 1.0], [0, False], ["a", "a"],
       [{"a": 1}, {"a": 1}], [{"a": 1}, {"a": 2}], [[1], [1]], [None, None],
       [[1, "a"], [1, 2]], [{"a": True}, {"a": 1}])
inline({"minimum": 1, "maximum": 10},
       0, 1, 10, 11, 0.5, 10.5, "true", "false", "-123456789012345678901234567890",
       "1e400", "\"0\"")
inline({"maximum": 3.40282e+38, "minimum": -0.5},
       "1e39", "340282000000000000000000000000000000001", "-1", "3.40282e+38")
inline({"minLength": 2, "maxLength": 3},
       '"a"', '"ab"', '"abcd"', '"\\u00e9\\u00e9"', '"\\ud83d\\ude00\\ud83d\\ude00"',
       '"\\ud83d\\ude00\\ud83d\\ude00\\ud83d\\ude00\\ud83d\\ude00"', "1")
inline({"pattern": "^[A-Z0-9_]+$"},
       '"ABC"', '"abc"', '"ABC\\n"', '"ABC\\n\\n"', '"\\nABC"', '""', "5",
       '"A B"')
inline({"pattern": "[a-z]{2}"}, '"XXabXX"', '"XaX"')
inline({"pattern": "^[A-Z0-9_]+$|^all|^unknown$"},
       '"all"', '"allx"', '"unknown"', '"unknownx"', '"unknown\\n"', '"x"')
inline({"enum": ["none", "isolate"]}, '"none"', '"x"', "1", "null")
inline({"enum": [1, "a", None, [1, 2], {"a": 1}]},
       "1", "1.0", "true", '"a"', "null", "[1, 2]", '{"a": 1}', '{"a": 2}', "false")
inline({"enum": [0, True]}, "false", "0", "1", "true")
inline({"type": "string", "format": "uuid"},
       j(U1), '"' + U1.replace("-", "") + '"', '"' + U1.upper() + '"',
       '"{' + U1 + '}"', '"urn:uuid:' + U1 + '"', '"' + U1[:-1] + '"',
       '"' + U1 + '-"', '"-' + U1.replace("-", "") + '"',
       '"' + U1.replace("-", "") + '0"', '"' + U1[:-1] + 'g"', '"x"', "5",
       '"{{' + U1 + '}}"', '"uuid:urn:' + U1 + '"', '"' + U1 + ' "',
       '"+' + U1.replace("-", "")[1:] + '"', '"0x' + U1.replace("-", "")[2:] + '"',
       '"' + U1.replace("-", "")[:30] + '_0"')
inline({"format": "uuid"}, "5", "null", "[]")
inline({"format": "unknown-format"}, '"x"')
inline({"anyOf": [{"type": "string", "format": "uuid"}, {"type": "null"}]},
       "null", j(U1), '"abc"', "5", "[]", "{}")
inline({"anyOf": [{"type": "integer", "minimum": 5},
                  {"type": "string", "maxLength": 2}]},
       "1", '"abc"', "null", "7")
inline({"anyOf": [{"properties": {"a": {"type": "integer"}}},
                  {"required": ["b"]}]},
       {"a": "x"}, {"a": "x", "b": 1})
inline({"oneOf": [{"type": "integer"}, {"minimum": 2}]},
       "1", "3", "1.5", '"x"', "0.5")
inline({"oneOf": [{"type": "string"}, {"type": "integer"}]}, "null", "2")
inline({"properties": {"a": {"anyOf": [{"type": "string"},
                                       {"properties": {"b": {"type": "integer"}}}]}},
        "required": ["c"]},
       {"a": {"b": "x"}}, {"a": {"b": "x"}, "c": 1})
# best_match: deeper errors lose to shallower; weak anyOf loses at same depth
inline({"type": "object",
        "properties": {"a": {"properties": {"b": {"type": "integer"}}},
                       "c": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
                       "d": {"type": "string", "maxLength": 1}},
        "required": ["r"]},
       {"a": {"b": "x"}}, {"r": 1, "a": {"b": "x"}, "d": "long"},
       {"r": 1, "a": {"b": "x"}, "c": "s"}, {"r": 1, "c": "s", "d": 1})
inline({"type": ["integer", "null"], "additionalProperties": False}, {"a": 1})
inline({"minimum": 3, "type": "integer"}, "\"x\"", "1")
inline({"type": "integer", "minimum": 3, "maximum": 1}, "2")
# pprint wrapping of long values in the error tail
inline({"type": "string"},
       j(list(range(40))), j({"k%02d" % i: "v" * i for i in range(12)}),
       j([{"name": "n" * 30, "uuid": U1, "more": [U2, U3]}] * 2))
inline({"maxLength": 5},
       j(LONG), j("word " * 30), j("line one\nline two " + "y" * 80 + "\nend"),
       j("a" * 70), j("a" * 69), j("a" * 71), j("z" * 100 + " " + "w" * 10))
inline({"properties": {"n": {"maxLength": 5}}},
       {"n": "word " * 30}, {"n": LONG})
inline({"items": {"maxLength": 5}}, ["word " * 30, "abcdefg"])

# ---- Placement schemas ----
body("ProviderCreate/0", {"name": "rp"}, {"name": "rp", "uuid": U1}, {},
     {"name": LONG}, {"name": 1}, {"name": "rp", "uuid": "bad"},
     {"name": "rp", "parent_provider_uuid": U1}, {"name": "rp", "uuid": None},
     "[]", '"rp"', "null", {"uuid": "bad"}, {"name": "x" * 201},
     {"name": "\u00e9" * 200}, {"name": "\u00e9" * 201})
body("ProviderCreate/14", {"name": "rp", "parent_provider_uuid": None},
     {"name": "rp", "parent_provider_uuid": "abc"},
     {"name": "rp", "parent_provider_uuid": 5},
     {"name": "rp", "parent_provider_uuid": U1.replace("-", "")},
     {"name": "rp", "parent_provider_uuid": {"a": 1}},
     {"name": "rp", "parent_provider_uuid": [U1]},
     {"name": "rp", "parent_provider_uuid": "abc", "bogus": 1},
     {"parent_provider_uuid": "abc"})
body("ProviderUpdate/0", {"name": "rp"}, {"name": "rp", "uuid": U1}, {})
body("ProviderUpdate/14", {"name": "rp", "parent_provider_uuid": U1},
     {"name": "rp", "uuid": U1}, {"name": "rp", "parent_provider_uuid": ""})
query("ProviderListQuery/0", [], [["name", "x"]], [["uuid", "bad"]],
      [["member_of", "x"]], [["name", "a"], ["name", "b"], ["uuid", "x"]])
query("ProviderListQuery/3", [["member_of", "in:x"]], [["resources", "VCPU:1"]])
query("ProviderListQuery/4", [["resources", "VCPU:1"]], [["in_tree", "x"]])
query("ProviderListQuery/14", [["in_tree", "x"]], [["in_tree", U1]],
      [["required", "X"]], [["in_tree", U1], ["in_tree", "bad"]])
query("ProviderListQuery/18", [["required", "X"]], [["foo", "1"], ["bar", "2"]])
inv = {"resource_class": "VCPU", "total": 8}
body("InventoryCreate", inv, {"total": 8}, {"resource_class": "vcpu", "total": 8},
     {"resource_class": "VCPU", "total": 0}, dict(inv, reserved=-1),
     dict(inv, total=2147483648), dict(inv, allocation_ratio=1e39),
     dict(inv, allocation_ratio="1.0"), dict(inv, total=1.0),
     dict(inv, total=1.5), dict(inv, total=True), dict(inv, foo=1),
     dict(inv, min_unit=0, max_unit=0), dict(inv, step_size=2 ** 40),
     '{"resource_class": "VCPU", "total": 8, "allocation_ratio": 3.5e38}',
     '{"resource_class": "VCPU", "total": 99999999999999999999999}',
     dict(inv, resource_provider_generation="1"),
     {"resource_class": "VCPU\n", "total": 8})
body("InventoryUpdate", {"total": 8, "resource_provider_generation": 1},
     {"total": 8}, {"resource_provider_generation": 1},
     {"total": 8, "resource_provider_generation": 1, "resource_class": "X"},
     {"total": -5, "resource_provider_generation": 1, "reserved": -1})
body("InventoriesReplace",
     {"resource_provider_generation": 1, "inventories": {"VCPU": {"total": 1}}},
     {"resource_provider_generation": 1, "inventories": {"vcpu": {"total": 1}}},
     {"resource_provider_generation": 1, "inventories": {"VCPU": {}}},
     {"resource_provider_generation": 1,
      "inventories": {"VCPU": {"total": 0}, "DISK_GB": {"total": "x"}}},
     {"resource_provider_generation": 1, "inventories": []},
     {"inventories": {}}, {"resource_provider_generation": 1, "inventories": {},
                           "x": 1},
     {"resource_provider_generation": 1,
      "inventories": {"VCPU": {"total": 1, "resource_provider_generation": 5,
                               "foo": 1}}})
body("ResourceClassCreate", {"name": "CUSTOM_A"}, {"name": "A"},
     {"name": "CUSTOM_" + "A" * 250}, {"name": "CUSTOM_a"}, {}, {"name": 1},
     {"name": "CUSTOM_A", "x": 1}, {"name": "CUSTOM_A\n"})
body("ResourceClassUpdate", {"name": "CUSTOM_A"}, {"name": "VCPU"})
body("CustomTrait", '"CUSTOM_X"', '"X"', '""', j("CUSTOM_" + "X" * 250), "1")
body("TraitsPut", {"traits": ["CUSTOM_A"]}, {"traits": ["A"]}, {"traits": "x"})
body("ProviderTraitsSet", {"traits": ["A"], "resource_provider_generation": 1},
     {"traits": []}, {"traits": [""], "resource_provider_generation": 1},
     {"traits": ["A" * 256], "resource_provider_generation": 1},
     {"traits": [1], "resource_provider_generation": None},
     {"resource_provider_generation": 1})
query("TraitListQuery", [["name", "in:A"]], [["associated", "true"]],
      [["foo", "x"]])
body("AggregatesPut/1", [U1, U2], [], [U1, U1], ["x"], [1], {"aggregates": []},
     [U1, "x", U1], [None], "{}")
body("AggregatesPut/19", {"aggregates": [U1], "resource_provider_generation": 1},
     [U1], {"aggregates": [U1]}, {"aggregates": [U1, U1],
                                  "resource_provider_generation": 1},
     {"aggregates": ["x"], "resource_provider_generation": "1"})
alloc0 = {"allocations": [{"resource_provider": {"uuid": U1},
                           "resources": {"VCPU": 1}}]}
body("AllocationsPut/0", alloc0, {"allocations": []}, {},
     {"allocations": [{"resource_provider": {"uuid": "x"},
                       "resources": {"VCPU": 0}}]},
     {"allocations": [{"resource_provider": {"uuid": U1},
                       "resources": {"VCPU": 0}}]},
     {"allocations": [{"resource_provider": {"uuid": U1}, "resources": {}}]},
     {"allocations": [{"resource_provider": {"uuid": U1},
                       "resources": {"vcpu": 1}}]},
     {"allocations": [{"resource_provider": {}, "resources": {"VCPU": 1}}]},
     {"allocations": [{"resources": {"VCPU": 1}}]},
     {"allocations": [{"resource_provider": {"uuid": U1, "x": 1},
                       "resources": {"VCPU": 1}}]},
     {"allocations": [{"resource_provider": {"uuid": U1},
                       "resources": {"VCPU": 1}}], "project_id": "p"},
     {"allocations": [{"resource_provider": {"uuid": U1},
                       "resources": {"VCPU": 1}},
                      {"resource_provider": {"uuid": U2},
                       "resources": {"VCPU": -1}}]},
     {"allocations": [{"resource_provider": {"uuid": U1},
                       "resources": {"VCPU": 1.0, "MEMORY_MB": "1"}}]},
     {"allocations": "x"}, "[]")
body("AllocationsPut/8", dict(alloc0, project_id="p", user_id="u"), alloc0,
     dict(alloc0, project_id="", user_id="u"),
     dict(alloc0, project_id="p" * 256, user_id="u"),
     dict(alloc0, project_id=1, user_id=None))
a12 = {"allocations": {U1: {"resources": {"VCPU": 1}}},
       "project_id": "p", "user_id": "u"}
body("AllocationsPut/12", a12, dict(a12, allocations={}),
     dict(a12, allocations={"x": {"resources": {"VCPU": 1}}}),
     dict(a12, allocations={U1: {"resources": {"VCPU": 1}, "generation": "1"}}),
     dict(a12, allocations={U1: {}}), dict(a12, allocations={U1: {"resources": {}}}),
     dict(a12, allocations={U1: {"resources": {"VCPU": 0}},
                            U2: {"resources": {"vcpu": 1}}}),
     dict(a12, allocations={U1.replace("-", "") + "abcd": {"resources": {"VCPU": 1}}}),
     dict(a12, allocations={"a" * 36: {"resources": {"VCPU": 1}}}),
     dict(a12, consumer_generation=1),
     {"allocations": {U1: {"resources": {"VCPU": 1}}}})
a28 = dict(a12, consumer_generation=None)
body("AllocationsPut/28", a28, dict(a28, allocations={}), a12,
     dict(a28, consumer_generation="1"), dict(a28, consumer_generation=1.5),
     dict(a28, consumer_generation={"a": 1}), dict(a28, consumer_generation=True),
     dict(a28, mappings={}))
a34 = dict(a28, mappings={"group1": [U1]})
body("AllocationsPut/34", a34, dict(a28, mappings={}),
     dict(a28, mappings={"g": []}), dict(a28, mappings={"g": ["x"]}),
     dict(a28, mappings={"g" * 65: [U1]}), dict(a28, mappings={"!": [U1]}),
     dict(a28, mappings={"a!": "x"}), dict(a28, mappings=[]),
     dict(a28, consumer_type="X"))
a38 = dict(a34, consumer_type="INSTANCE")
body("AllocationsPut/38", a38, a34, dict(a38, consumer_type=""),
     dict(a38, consumer_type="instance"), dict(a38, consumer_type="A" * 256),
     dict(a38, consumer_type="all"), dict(a38, consumer_type=None))
p13 = {U3: {"allocations": {U1: {"resources": {"VCPU": 1}}},
            "project_id": "p", "user_id": "u"}}
body("AllocationsPost/13", p13, {}, {"x": p13[U3]},
     {U3: dict(p13[U3], allocations={})}, {U3: {}},
     {U3: dict(p13[U3], consumer_generation=1)}, [p13])
p28 = {U3: dict(p13[U3], consumer_generation=None)}
body("AllocationsPost/28", p28, p13, {U3: dict(p28[U3], consumer_generation="x")},
     {U3: dict(p28[U3], allocations={U1: {"resources": {"VCPU": 0}}})})
p34 = {U3: dict(p28[U3], mappings={"1": [U1]})}
body("AllocationsPost/34", p34, {U3: dict(p28[U3], mappings={"1": []})})
p38 = {U3: dict(p34[U3], consumer_type="A")}
body("AllocationsPost/38", p38, p34, {U3: dict(p34[U3], consumer_type="a")},
     dict(p38, **{U2: {}}))
inv_put = {"resource_provider_generation": 1, "inventories": {"VCPU": {"total": 1}}}
r30 = {"inventories": {U1: inv_put}, "allocations": {}}
body("ReshaperPost/30", r30, dict(r30, inventories={}), {"inventories": {U1: inv_put}},
     dict(r30, allocations=p28), dict(r30, allocations=p13),
     dict(r30, inventories={"x": inv_put}),
     dict(r30, inventories={U1: {"inventories": {}}}),
     dict(r30, allocations=p34))
body("ReshaperPost/34", dict(r30, allocations=p34), dict(r30, allocations=p38))
body("ReshaperPost/38", dict(r30, allocations=p38), dict(r30, allocations=p34))
query("UsagesQuery/9", [["project_id", "p"]], [], [["project_id", ""]],
      [["project_id", "p" * 256]], [["project_id", "p"], ["consumer_type", "X"]])
query("UsagesQuery/38", [["project_id", "p"], ["consumer_type", "INSTANCE"]],
      [["project_id", "p"], ["consumer_type", "all"]],
      [["project_id", "p"], ["consumer_type", "allfoo"]],
      [["project_id", "p"], ["consumer_type", "unknown"]],
      [["project_id", "p"], ["consumer_type", "unknownx"]],
      [["project_id", "p"], ["consumer_type", "lower"]],
      [["project_id", "p"], ["consumer_type", ""]])
query("AllocationCandidatesQuery/10", [["resources", "VCPU:1"]], [],
      [["resources", "VCPU:1"], ["limit", "1"]])
query("AllocationCandidatesQuery/16", [["resources", "VCPU:1"], ["limit", "1"]],
      [["resources", "VCPU:1"], ["limit", "0"]],
      [["resources", "VCPU:1"], ["limit", ""]],
      [["resources", "VCPU:1"], ["limit", "a"]],
      [["resources", "VCPU:1"], ["limit", "-1"]],
      [["resources", "VCPU:1"], ["required", "X"]])
query("AllocationCandidatesQuery/17", [["resources", "VCPU:1"], ["required", "X"]],
      [["resources", "VCPU:1"], ["member_of", "X"]])
query("AllocationCandidatesQuery/21", [["resources", "VCPU:1"], ["member_of", "X"]],
      [["resources1", "VCPU:1"]])
query("AllocationCandidatesQuery/25", [["resources1", "VCPU:1"]],
      [["resources", "VCPU:1"], ["group_policy", "x"]],
      [["resources", "VCPU:1"], ["group_policy", "none"]],
      [["resources0", "VCPU:1"]], [["resources_a", "VCPU:1"], ["in_tree", "x"]],
      [["in_tree1", "x"]])
query("AllocationCandidatesQuery/31", [["in_tree1", "x"]], [["resources_a", "x"]])
query("AllocationCandidatesQuery/33", [["resources_a-b", "x"]],
      [["resources" + "a" * 65, "x"]], [["root_required", "x"]],
      [["resources_!", "x"], ["zz", "y"]])
query("AllocationCandidatesQuery/35", [["root_required", "x"]],
      [["same_subtree", "x"]])
query("AllocationCandidatesQuery/36", [["same_subtree", "x"], ["limit", "10"]],
      [["same_subtree", "x"], ["limit", "010"]])

# odd JSON shapes
inline({"type": "array"}, '{"a": 1, "b": 2, "a": 3}', j({"": 1, "it's": {'q"': []}}),
       j({"k" * 80: [1, 2, {"z": "v" * 60, "a": None}]}),
       j([[["deep " * 10] * 2] * 2]), j({"a": "multi\nline\n" + "w " * 40}),
       j(["\u00e9" * 70]), j({"\u00e9" * 40: "\u00e9" * 40}),
       j([1.5, 1e20, -0.0, 10 ** 30, True, None]))
inline({"properties": {"a": {"items": {"properties": {"b": {"maxItems": 0}}}}}},
       j({"a": [{"b": [1]}, {"b": [{"x": "y" * 70}]}]}))


# Random mutations of valid bodies, to cross-check error selection.
def _mutations(rng, doc, depth=0):
    """Yield a randomly damaged deep copy of doc."""
    doc = json.loads(json.dumps(doc))
    junk = [None, True, 0, -1, 1.5, "", "x", "VCPU", [], {}, [U1], {"a": 1},
            U1, 2 ** 31, "CUSTOM_X", "a" * 300]
    for _ in range(rng.randint(1, 3)):
        # pick a random container on a random path
        node = doc
        path = []
        while isinstance(node, (dict, list)) and node and rng.random() < 0.7:
            k = rng.choice(list(node.keys()) if isinstance(node, dict)
                           else list(range(len(node))))
            if not isinstance(node[k], (dict, list)):
                break
            path.append(k)
            node = node[k]
        if isinstance(node, dict):
            op = rng.randrange(3)
            if op == 0 and node:
                del node[rng.choice(list(node))]
            elif op == 1 and node:
                node[rng.choice(list(node))] = rng.choice(junk)
            else:
                node[rng.choice(["extra", "zz", "VCPU", "a-b", U2, "1"])] = \
                    rng.choice(junk)
        elif isinstance(node, list):
            if node and rng.random() < 0.5:
                node[rng.randrange(len(node))] = rng.choice(junk)
            else:
                node.append(rng.choice(junk))
    return doc


def _random_cases():
    import random
    rng = random.Random(20240601)
    bases = [
        ("AllocationsPut/0", alloc0), ("AllocationsPut/8",
                                       dict(alloc0, project_id="p", user_id="u")),
        ("AllocationsPut/12", a12), ("AllocationsPut/28", a28),
        ("AllocationsPut/34", a34), ("AllocationsPut/38", a38),
        ("AllocationsPost/13", p13), ("AllocationsPost/28", p28),
        ("AllocationsPost/34", p34), ("AllocationsPost/38", p38),
        ("ReshaperPost/30", dict(r30, allocations=p28)),
        ("ReshaperPost/38", dict(r30, allocations=p38)),
        ("InventoriesReplace", {"resource_provider_generation": 1, "inventories": {
            "VCPU": {"total": 8, "reserved": 0, "allocation_ratio": 1.0},
            "DISK_GB": {"total": 8, "min_unit": 1, "step_size": 1}}}),
        ("ProviderTraitsSet", {"traits": ["A", "B"], "resource_provider_generation": 1}),
        ("AggregatesPut/19", {"aggregates": [U1, U2], "resource_provider_generation": 1}),
        ("ProviderCreate/14", {"name": "n", "uuid": U1, "parent_provider_uuid": U2}),
    ]
    for name, base in bases:
        for _ in range(25):
            body(name, _mutations(rng, base))


_random_cases()


def run():
    fc = jsonschema.FormatChecker()
    out = []
    for c in CASES:
        if c["schema"] == "inline":
            schema = json.loads(c["inline"])
        else:
            schema = NAMED[c["schema"]]
        if c["kind"] == "query":
            inst = {}
            for k, v in c["query"]:
                inst[k] = v
        else:
            inst = json.loads(c["instance"])
        try:
            jsonschema.validate(inst, schema, format_checker=fc)
            c["valid"] = True
        except jsonschema.ValidationError as e:
            c["valid"] = False
            c["message"] = e.message
            c["error"] = str(e)
        out.append(c)
    json.dump(out, sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")


run()
