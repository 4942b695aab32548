package novatest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/placement-syncd/placement-syncd/testkit/novaconf"
	"github.com/placement-syncd/placement-syncd/testkit/svcproc"
)

// Instance is one Nova instance to seed into a cell. There is no
// nova-compute and no scheduler here: the instance is written by Nova's
// own objects (Instance.create, InstanceMapping.create), as the conductor
// would, so that nova-api lists it exactly as a real one.
type Instance struct {
	UUID, Cell    string
	Project, User string
	// Host and Node are the compute it runs on; empty for none.
	Host, Node string
	// Deleted destroys it after creating it (Nova's soft delete:
	// deleted = id), its mapping queued for delete.
	Deleted bool
}

// Migration is one migration record of an instance, written by Nova's
// Migration.create in the instance's cell.
type Migration struct {
	UUID, Instance, Cell string
	// Status is Nova's, e.g. migrating, pre-migrating or confirmed.
	Status       string
	Source, Dest string
}

// seedScript writes the instances and migrations read as JSON on stdin
// through Nova's objects, each in its cell.
const seedScript = `
import sys, json
from nova import config, context, objects
from nova.network import model as network_model
config.parse_args(['novatest-seed', '--config-file', sys.argv[1]])
objects.register_all()
ctx = context.get_admin_context()
spec = json.load(sys.stdin)
cells = {c.name: c for c in objects.CellMappingList.get_all(ctx)}
def flavor():
    return objects.Flavor(id=1, flavorid='novatest', name='novatest', memory_mb=512, vcpus=1,
        root_gb=1, ephemeral_gb=0, swap=0, rxtx_factor=1.0, vcpu_weight=0, disabled=False,
        is_public=True, extra_specs={}, description=None)
for i in spec['instances']:
    cell = cells[i['cell']]
    with context.target_cell(ctx, cell) as cctx:
        inst = objects.Instance(cctx, uuid=i['uuid'], project_id=i['project'], user_id=i['user'],
            host=i['host'] or None, node=i['node'] or None, vm_state='active', power_state=1,
            task_state=None, flavor=flavor(), old_flavor=None, new_flavor=None, instance_type_id=1,
            memory_mb=512, vcpus=1, root_gb=1, ephemeral_gb=0, display_name='novatest-' + i['uuid'][:8],
            info_cache=objects.InstanceInfoCache(network_info=network_model.NetworkInfo()))
        inst.create()
        objects.InstanceMapping(ctx, instance_uuid=i['uuid'], cell_mapping=cell, project_id=i['project'],
            user_id=i['user'], queued_for_delete=i['deleted']).create()
        if i['deleted']:
            inst.destroy()
for m in spec['migrations']:
    with context.target_cell(ctx, cells[m['cell']]) as cctx:
        objects.Migration(cctx, uuid=m['uuid'], instance_uuid=m['instance'], status=m['status'],
            source_compute=m['source'], dest_compute=m['dest'], source_node=m['source'], dest_node=m['dest'],
            migration_type='migration', old_instance_type_id=1, new_instance_type_id=1).create()
print('NOVATEST-SEED done')
`

// AddInstances writes instances, then migrations, with Nova's own
// objects in one run of Nova's Python.
func (n *Nova) AddInstances(ctx context.Context, instances []Instance, migrations []Migration) error {
	type inst struct {
		UUID    string `json:"uuid"`
		Cell    string `json:"cell"`
		Project string `json:"project"`
		User    string `json:"user"`
		Host    string `json:"host"`
		Node    string `json:"node"`
		Deleted bool   `json:"deleted"`
	}
	type mig struct {
		UUID     string `json:"uuid"`
		Instance string `json:"instance"`
		Cell     string `json:"cell"`
		Status   string `json:"status"`
		Source   string `json:"source"`
		Dest     string `json:"dest"`
	}
	spec := struct {
		Instances  []inst `json:"instances"`
		Migrations []mig  `json:"migrations"`
	}{Instances: []inst{}, Migrations: []mig{}}
	for _, i := range instances {
		if n.cells[i.Cell] == nil {
			return fmt.Errorf("novatest: instance %s: no cell %q", i.UUID, i.Cell)
		}
		spec.Instances = append(spec.Instances, inst(i))
	}
	for _, m := range migrations {
		if n.cells[m.Cell] == nil {
			return fmt.Errorf("novatest: migration %s: no cell %q", m.UUID, m.Cell)
		}
		spec.Migrations = append(spec.Migrations, mig(m))
	}
	body, err := json.Marshal(spec)
	if err != nil {
		return fmt.Errorf("novatest: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, novaconf.Python, "-c", seedScript, n.Conf)
	cmd.Env, cmd.Dir, cmd.Stdin = n.env(), n.dir, bytes.NewReader(body)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "NOVATEST-SEED done") {
		return fmt.Errorf("novatest: seed instances: %v\n%s", err, svcproc.Tail(string(out), 3000))
	}
	return nil
}
