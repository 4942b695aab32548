package verify

import (
	"context"
	"net/url"
	"sort"
)

func (w *walker) run(ctx context.Context) error {
	lists, err := w.compareAll(ctx, "resource providers", []string{"/resource_providers", "/traits", "/resource_classes"})
	if err != nil {
		return err
	}
	list := lists["/resource_providers"]
	uuids := union(field(list.ref, "resource_providers", "uuid"), field(list.ours, "resource_providers", "uuid"))
	w.rep.Providers = len(uuids)
	var paths []string
	for _, u := range uuids {
		base := "/resource_providers/" + u
		paths = append(paths, base, base+"/inventories", base+"/usages", base+"/traits", base+"/aggregates", base+"/allocations")
	}
	provs, err := w.compareAll(ctx, "provider details", paths)
	if err != nil {
		return err
	}
	var consumers []string
	for _, u := range uuids {
		b := provs["/resource_providers/"+u+"/allocations"]
		consumers = append(consumers, keys(b.ref, "allocations")...)
		consumers = append(consumers, keys(b.ours, "allocations")...)
	}
	consumers = union(consumers)
	w.rep.Consumers = len(consumers)
	paths = paths[:0]
	for _, c := range consumers {
		paths = append(paths, "/allocations/"+c)
	}
	cons, err := w.compareAll(ctx, "consumers", paths)
	if err != nil {
		return err
	}
	if _, err := w.compareAll(ctx, "usages", w.usagePaths(cons)); err != nil {
		return err
	}
	queries := candidateQueries(indexOf(uuids, provs))
	w.rep.CandidateQueries = len(queries)
	_, err = w.compareAll(ctx, "allocation candidates", queries)
	return err
}

// usagePaths are the usage queries of every project, project and user,
// and project and consumer type the consumers name.
func (w *walker) usagePaths(cons map[string]bodies) []string {
	set := map[string]bool{}
	projects := map[string]bool{}
	for _, b := range cons {
		for _, body := range []any{b.ref, b.ours} {
			m, _ := body.(map[string]any)
			p, _ := m["project_id"].(string)
			u, _ := m["user_id"].(string)
			if p == "" {
				continue
			}
			projects[p] = true
			q := url.Values{"project_id": {p}}
			set["/usages?"+q.Encode()] = true
			if u != "" {
				set["/usages?"+url.Values{"project_id": {p}, "user_id": {u}}.Encode()] = true
			}
			if t, _ := m["consumer_type"].(string); t != "" {
				set["/usages?"+url.Values{"project_id": {p}, "consumer_type": {t}}.Encode()] = true
			}
		}
	}
	w.rep.Projects = len(projects)
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// field collects key of every object in body[list].
func field(body any, list, key string) []string {
	m, _ := body.(map[string]any)
	items, _ := m[list].([]any)
	var out []string
	for _, it := range items {
		o, _ := it.(map[string]any)
		if s, ok := o[key].(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// keys lists the keys of the object body[name].
func keys(body any, name string) []string {
	m, _ := body.(map[string]any)
	o, _ := m[name].(map[string]any)
	out := make([]string, 0, len(o))
	for k := range o {
		out = append(out, k)
	}
	return out
}

// union is the sorted set of every given string.
func union(lists ...[]string) []string {
	set := map[string]bool{}
	for _, l := range lists {
		for _, s := range l {
			set[s] = true
		}
	}
	out := make([]string, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}
