package novafull

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/placement-syncd/placement-syncd/testkit/novaconf"
	"github.com/placement-syncd/placement-syncd/testkit/svcproc"
)

// Compute is one nova-compute with the fake driver (MediumFakeDriver:
// 10 VCPU, 8192 MB, 1028 GB, one node named as its host).
type Compute struct {
	Host string
	// ReservedMemoryMB is [DEFAULT] reserved_host_memory_mb: the
	// MEMORY_MB reserved in its inventory, which sets how many servers
	// of a flavor fit.
	ReservedMemoryMB int
}

// computeMain runs nova-compute from python3-nova's entry point: Debian's
// nova-compute package would bring libvirt and QEMU for nothing.
const computeMain = "import sys; sys.argv[0] = 'nova-compute'; from nova.cmd.compute import main; sys.exit(main())"

// UsePlacement points every Nova service at the Placement at base (its
// URL); computes started before keep the providers they made elsewhere,
// so it is called with none running.
func (n *Nova) UsePlacement(base string) error {
	if err := n.router.use(base); err != nil {
		return fmt.Errorf("novafull: %w", err)
	}
	return nil
}

// StartComputes starts the computes and waits until each is up, mapped to
// cell1 and has its provider with inventory in the current Placement.
// A host started again (after StopComputes) keeps its compute node and
// its uuid, and makes its provider anew in the Placement now in use.
func (n *Nova) StartComputes(ctx context.Context, computes ...Compute) error {
	var hosts []string
	for _, c := range computes {
		if err := n.startCompute(c); err != nil {
			return err
		}
		hosts = append(hosts, c.Host)
	}
	if err := n.waitServices(ctx, nil, hosts, 180*time.Second); err != nil {
		return err
	}
	if err := n.discover(ctx, hosts); err != nil {
		return err
	}
	return n.waitProviders(ctx, hosts, 120*time.Second)
}

// startCompute starts one compute's process and returns at once.
func (n *Nova) startCompute(c Compute) error {
	conf, err := n.computeConf(c)
	if err != nil {
		return err
	}
	return n.launchCompute(c.Host, conf)
}

// launchCompute starts one nova-compute reading nova.conf then conf;
// StopComputes stops it.
func (n *Nova) launchCompute(host, conf string) error {
	cmd := exec.Command(novaconf.Python, "-c", computeMain, "--config-file", n.Conf, "--config-file", conf)
	cmd.Env, cmd.Dir = n.env(), filepath.Dir(conf)
	p, err := svcproc.Start(cmd, filepath.Join(filepath.Dir(conf), "nova-compute.log"))
	if err != nil {
		return fmt.Errorf("novafull: start nova-compute %s: %w", host, err)
	}
	n.mu.Lock()
	n.computes = append(n.computes, p)
	n.mu.Unlock()
	return nil
}

// StopCompute kills the compute of host alone, as a host that fails
// does: its service is seen up until service_down_time has passed or it
// is forced down through os-services.
func (n *Nova) StopCompute(host string) error {
	log := filepath.Join(n.dir, "compute-"+host, "nova-compute.log")
	n.mu.Lock()
	i := slices.IndexFunc(n.computes, func(p *svcproc.Proc) bool { return p.Log == log })
	var p *svcproc.Proc
	if i >= 0 {
		p = n.computes[i]
		n.computes = slices.Delete(n.computes, i, i+1)
	}
	n.mu.Unlock()
	if p == nil {
		return fmt.Errorf("novafull: no compute running on %s", host)
	}
	return p.Stop(syscall.SIGKILL, 15*time.Second)
}

// discover maps hosts not mapped before to cell1.
func (n *Nova) discover(ctx context.Context, hosts []string) error {
	n.mu.Lock()
	fresh := slices.ContainsFunc(hosts, func(h string) bool { return !n.mapped[h] })
	n.mu.Unlock()
	if !fresh {
		return nil
	}
	if _, err := n.Manage(ctx, "cell_v2", "discover_hosts"); err != nil {
		return err
	}
	n.mu.Lock()
	for _, h := range hosts {
		n.mapped[h] = true
	}
	n.mu.Unlock()
	return nil
}

// StopComputes stops every compute, all at once (each takes its
// graceful_shutdown_timeout); their services stay in the cell, and are
// seen down until started again.
func (n *Nova) StopComputes() {
	n.mu.Lock()
	procs := n.computes
	n.computes = nil
	n.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = p.Stop(syscall.SIGTERM, 15*time.Second)
		}()
	}
	wg.Wait()
}

// waitServices waits until os-services lists every binary and every
// nova-compute on hosts as up, failing early when a service exits.
func (n *Nova) waitServices(ctx context.Context, binaries, hosts []string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	var last string
	for {
		if err := n.exited(); err != nil {
			return err
		}
		var ans struct {
			Services []struct {
				Binary, Host, State, Status string
			} `json:"services"`
		}
		code, body, err := n.Do(ctx, http.MethodGet, "/os-services", nil, &ans)
		if err == nil && code == http.StatusOK {
			up := map[string]bool{}
			for _, s := range ans.Services {
				if s.State == "up" {
					up[s.Binary] = true
					up[s.Binary+"/"+s.Host] = true
				}
			}
			missing := slices.DeleteFunc(slices.Clone(binaries), func(b string) bool { return up[b] })
			for _, h := range hosts {
				if !up["nova-compute/"+h] {
					missing = append(missing, "nova-compute/"+h)
				}
			}
			if len(missing) == 0 {
				return nil
			}
			last = "not up: " + strings.Join(missing, ", ")
		} else {
			last = fmt.Sprintf("%d %v %s", code, err, body)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("novafull: services not ready after %s (%s)\n%s", limit, last, n.Logs())
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// exited is an error naming the first service that has exited.
func (n *Nova) exited() error {
	n.mu.Lock()
	procs := append(append([]*svcproc.Proc{}, n.procs...), n.computes...)
	n.mu.Unlock()
	for _, p := range procs {
		if done, err := p.Exited(); done {
			return fmt.Errorf("novafull: %s exited: %v\n%s", p.Log, err, p.LogTail(4000))
		}
	}
	return nil
}

// waitProviders waits until the current Placement has a provider named
// after each host, with inventory.
func (n *Nova) waitProviders(ctx context.Context, hosts []string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for _, h := range hosts {
		for {
			ok, err := n.hasInventory(ctx, h)
			if ok {
				break
			}
			if err == nil {
				err = n.exited()
			}
			if time.Now().After(deadline) || err != nil {
				return fmt.Errorf("novafull: no provider with inventory for %s after %s: %v\n%s", h, limit, err, n.Logs())
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
	return nil
}

func (n *Nova) hasInventory(ctx context.Context, host string) (bool, error) {
	var rps struct {
		ResourceProviders []struct {
			UUID string `json:"uuid"`
		} `json:"resource_providers"`
	}
	if code, err := n.placementGet(ctx, "/resource_providers?name="+url.QueryEscape(host), &rps); err != nil || code != http.StatusOK || len(rps.ResourceProviders) != 1 {
		return false, err
	}
	var inv struct {
		Inventories map[string]any `json:"inventories"`
	}
	code, err := n.placementGet(ctx, "/resource_providers/"+rps.ResourceProviders[0].UUID+"/inventories", &inv)
	return err == nil && code == http.StatusOK && len(inv.Inventories) > 0, err
}

// placementGet reads the current Placement through the router.
func (n *Nova) placementGet(ctx context.Context, path string, out any) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, n.router.URL+path, nil)
	if err != nil {
		return 0, fmt.Errorf("novafull: %w", err)
	}
	req.Header.Set("OpenStack-API-Version", "placement 1.39")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("novafull: placement %s: %w", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return resp.StatusCode, err
	}
	if err := json.Unmarshal(b, out); err != nil {
		return resp.StatusCode, fmt.Errorf("novafull: placement %s: %w", path, err)
	}
	return resp.StatusCode, nil
}
