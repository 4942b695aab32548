package novafull

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// boot boots one server as project into az ("": none asked for) and
// checks it lands on one of allowed, or fails with NoValidHost when
// allowed is empty. Which of several allowed hosts it lands on is the
// weighers' tie-break: logged in the table, not compared.
func (s *aggScenario) boot(phase, project, az string, allowed ...string) {
	t := s.t
	t.Helper()
	label := fmt.Sprintf("%s: %s in %s → %s", phase, project, cmpOr(az, "any zone"), cmpOr(strings.Join(allowed, ","), "NoValidHost"))
	id, err := s.n.BootIn(s.ctx, project, az, fmt.Sprintf("ag-%d", len(s.rows)+1), s.flavor)
	if err != nil {
		t.Fatal(err)
	}
	srv := s.wait(id, "ACTIVE", "ERROR")
	landed := srv.Host
	switch {
	case srv.Status == "ERROR":
		if len(allowed) != 0 || !srv.NoValidHost() {
			t.Fatalf("%s: ERROR with fault %q\n%s", label, srv.FaultMessage(), s.n.Logs())
		}
		s.check(label, id, "none", s.usages())
		landed = "NoValidHost"
		s.delete(id)
	case !slices.Contains(allowed, srv.Host):
		t.Fatalf("%s: landed on %s", label, srv.Host)
	default:
		s.check(label, id, srv.Host+":512/1/1", s.usages())
	}
	s.record = append(s.record, fmt.Sprintf("%s: ok", label))
	s.rows = append(s.rows, label+"\t"+landed)
}

// createAggregate makes a host aggregate through Nova's API.
func (s *aggScenario) createAggregate(key, name string, extra map[string]any) {
	s.t.Helper()
	body := map[string]any{"name": name}
	for k, v := range extra {
		body[k] = v
	}
	var out struct {
		Aggregate aggregate `json:"aggregate"`
	}
	if err := s.n.Call(s.ctx, http.StatusOK, http.MethodPost, "/os-aggregates", map[string]any{"aggregate": body}, &out); err != nil {
		s.t.Fatal(err)
	}
	out.Aggregate.name = key
	s.aggs[key] = out.Aggregate
}

func (s *aggScenario) aggAction(key string, action map[string]any) {
	s.t.Helper()
	path := "/os-aggregates/" + strconv.Itoa(s.aggs[key].ID) + "/action"
	if err := s.n.Call(s.ctx, http.StatusOK, http.MethodPost, path, action, nil); err != nil {
		s.t.Fatal(err)
	}
}

func (s *aggScenario) addHost(key, host string) {
	s.t.Helper()
	s.aggAction(key, map[string]any{"add_host": map[string]any{"host": host}})
	s.member[host][key] = true
}

func (s *aggScenario) removeHost(key, host string) {
	s.t.Helper()
	s.aggAction(key, map[string]any{"remove_host": map[string]any{"host": host}})
	delete(s.member[host], key)
}

// deleteAggregates empties and deletes the run's aggregates, so that the
// next scenario sees none (a tenant aggregate left would confine its
// project, an availability zone would stay listed).
func (s *aggScenario) deleteAggregates() {
	for key, a := range s.aggs {
		for _, h := range aggHosts {
			if s.member[h][key] {
				path := "/os-aggregates/" + strconv.Itoa(a.ID) + "/action"
				if err := s.n.Call(s.ctx, http.StatusOK, http.MethodPost, path, map[string]any{"remove_host": map[string]any{"host": h}}, nil); err != nil {
					s.t.Error(err)
				}
			}
		}
		if err := s.n.Call(s.ctx, http.StatusOK, http.MethodDelete, "/os-aggregates/"+strconv.Itoa(a.ID), nil, nil); err != nil {
			s.t.Error(err)
		}
	}
}
