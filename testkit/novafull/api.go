package novafull

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/placement-syncd/placement-syncd/testkit/computeapi"
)

// The identity of every API request: an admin of project admin, passed
// as the headers Keystone's middleware would set (see writePaste).
const (
	Token   = "novafull-admin"
	Project = "admin"
)

// Microversion is the compute microversion the helpers ask for: networks
// "none" needs 2.37; 2.79 is within Nova 26.2's range.
const Microversion = "2.79"

// client calls the compute API as the admin of project admin, with the
// keep-alive connections nova-api's own server keeps well.
func client() computeapi.Client {
	return computeapi.Client{Microversion: Microversion, Project: Project, Identity: SetIdentity, Timeout: 60 * time.Second}
}

// SetIdentity sets the headers Keystone's middleware would set for an
// admin of project (see writePaste), for the client and others.
func SetIdentity(h http.Header, project string) {
	h.Set("X-Auth-Token", Token)
	h.Set("X-Identity-Status", "Confirmed")
	h.Set("X-User-Id", "admin")
	h.Set("X-Project-Id", project)
	h.Set("X-Roles", "admin,member,reader")
}

// Flavor returns the id of the public flavor named name, creating it
// with these sizes when there is none (a test run again in the same
// binary finds its flavors there).
func (n *Nova) Flavor(ctx context.Context, name string, vcpus, ramMB, diskGB int) (string, error) {
	var list struct {
		Flavors []struct {
			ID    string `json:"id"`
			Name  string `json:"name"`
			VCPUs int    `json:"vcpus"`
			RAM   int    `json:"ram"`
			Disk  int    `json:"disk"`
		} `json:"flavors"`
	}
	if err := n.Call(ctx, http.StatusOK, http.MethodGet, "/flavors/detail", nil, &list); err != nil {
		return "", err
	}
	for _, f := range list.Flavors {
		if f.Name != name {
			continue
		}
		if f.VCPUs != vcpus || f.RAM != ramMB || f.Disk != diskGB {
			return "", fmt.Errorf("novafull: flavor %s exists with %d VCPU, %d MB, %d GB", name, f.VCPUs, f.RAM, f.Disk)
		}
		return f.ID, nil
	}
	var out struct {
		Flavor struct {
			ID string `json:"id"`
		} `json:"flavor"`
	}
	body := map[string]any{"flavor": map[string]any{"name": name, "vcpus": vcpus, "ram": ramMB, "disk": diskGB}}
	err := n.Call(ctx, http.StatusOK, http.MethodPost, "/flavors", body, &out)
	return out.Flavor.ID, err
}

// Server is what the helpers read of a server.
type Server struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Status string `json:"status"`
	Host   string `json:"OS-EXT-SRV-ATTR:host"`
	// Node is the compute node's name: an Ironic node's uuid under the
	// ironic driver.
	Node   string `json:"OS-EXT-SRV-ATTR:hypervisor_hostname"`
	Flavor struct {
		Name string `json:"original_name"`
	} `json:"flavor"`
	Fault *struct {
		Message string `json:"message"`
	} `json:"fault"`
}

// FaultMessage is the message of the server's fault, "" when it has none.
func (s Server) FaultMessage() string {
	if s.Fault == nil {
		return ""
	}
	return s.Fault.Message
}

// NoValidHost says whether the server's fault is the scheduler finding
// no host for it.
func (s Server) NoValidHost() bool { return strings.Contains(s.FaultMessage(), "No valid host") }

// Boot asks for a server of flavor from the Glance double's image, with
// no network, and returns its id.
func (n *Nova) Boot(ctx context.Context, name, flavor string) (string, error) {
	return n.BootIn(ctx, Project, "", name, flavor)
}

// BootIn is Boot on behalf of project, into availability zone az ("":
// none asked for).
func (n *Nova) BootIn(ctx context.Context, project, az, name, flavor string) (string, error) {
	var out struct {
		Server struct {
			ID string `json:"id"`
		} `json:"server"`
	}
	srv := map[string]any{"name": name, "flavorRef": flavor, "imageRef": ImageID, "networks": "none"}
	if az != "" {
		srv["availability_zone"] = az
	}
	code, data, err := n.DoAs(ctx, project, http.MethodPost, "/servers", map[string]any{"server": srv}, &out)
	if err == nil && code != http.StatusAccepted {
		err = fmt.Errorf("novafull: boot %s as %s in %q: %d: %s", name, project, az, code, data)
	}
	return out.Server.ID, err
}

// WaitServer waits until the server's status is one of want, and no task
// is under way, failing early on ERROR when ERROR is not wanted.
func (n *Nova) WaitServer(ctx context.Context, id string, limit time.Duration, want ...string) (Server, error) {
	deadline := time.Now().Add(limit)
	for {
		var out struct {
			Server struct {
				Server
				Task *string `json:"OS-EXT-STS:task_state"`
			} `json:"server"`
		}
		err := n.Call(ctx, http.StatusOK, http.MethodGet, "/servers/"+id, nil, &out)
		if err != nil {
			return Server{}, err
		}
		s := out.Server
		if slices.Contains(want, s.Status) && s.Task == nil {
			return s.Server, nil
		}
		if s.Status == "ERROR" {
			return s.Server, fmt.Errorf("novafull: server %s in ERROR, want %v: %+v", id, want, s.Fault)
		}
		if time.Now().After(deadline) {
			return s.Server, fmt.Errorf("novafull: server %s is %s (task %v) after %s, want %v", id, s.Status, s.Task, limit, want)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// Action posts a server action such as {"migrate": null}: 202, or 204
// for confirmResize.
func (n *Nova) Action(ctx context.Context, id string, action map[string]any) error {
	code, data, err := n.Do(ctx, http.MethodPost, "/servers/"+id+"/action", action, nil)
	if err == nil && code != http.StatusAccepted && code != http.StatusNoContent {
		err = fmt.Errorf("novafull: action %v on %s: %d: %s", slices.Collect(maps.Keys(action)), id, code, data)
	}
	return err
}

// Delete deletes a server and waits until the API no longer knows it.
func (n *Nova) Delete(ctx context.Context, id string, limit time.Duration) error {
	if err := n.Call(ctx, http.StatusNoContent, http.MethodDelete, "/servers/"+id, nil, nil); err != nil {
		return err
	}
	deadline := time.Now().Add(limit)
	for {
		code, _, err := n.Do(ctx, http.MethodGet, "/servers/"+id, nil, nil)
		if err != nil {
			return err
		}
		if code == http.StatusNotFound {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("novafull: server %s still there %s after its delete", id, limit)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// ServerIDs lists the ids of every server, deleted ones left out.
func (n *Nova) ServerIDs(ctx context.Context) ([]string, error) {
	var out struct {
		Servers []struct {
			ID string `json:"id"`
		} `json:"servers"`
	}
	if err := n.Call(ctx, http.StatusOK, http.MethodGet, "/servers?all_tenants=1", nil, &out); err != nil {
		return nil, err
	}
	var ids []string
	for _, s := range out.Servers {
		ids = append(ids, s.ID)
	}
	return ids, nil
}
