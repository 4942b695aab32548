package config

import "github.com/placement-syncd/placement-syncd/internal/cloudsyaml"

// cloudRef is a key naming a clouds.yaml entry, the service (catalog
// type) its client reaches, and the key naming its file ("" when the
// section has none: the usual places).
type cloudRef struct {
	key, cloud, service string
	fileKey, file       string
}

// cloudRefs are the clouds.yaml entries the configuration uses; a
// disabled driver's are not used.
func cloudRefs(c *Config) []cloudRef {
	refs := []cloudRef{
		{"agent.placement.cloud", c.Agent.Placement.Cloud, "placement", "agent.placement.clouds_file", c.Agent.Placement.CloudsFile},
		{"reconciler.placement.cloud", c.Reconciler.Placement.Cloud, "placement", "", ""},
		{"reconciler.nova.cloud", c.Reconciler.Nova.Cloud, "compute", "reconciler.nova.clouds_file", c.Reconciler.Nova.CloudsFile},
	}
	if c.Agent.Ironic.Enabled {
		refs = append(refs, cloudRef{"agent.ironic.cloud", c.Agent.Ironic.Cloud, "baremetal", "agent.ironic.clouds_file", c.Agent.Ironic.CloudsFile})
	}
	return refs
}

// checkClouds reads every clouds.yaml entry the configuration names, as
// its client will but without a network (cloudsyaml.Read and
// CheckService), so that an entry the client cannot use is a
// configuration error before anything is opened. The error names our
// key and clouds.yaml's file, line and key. A clouds_file without a
// cloud would be silently unused.
func checkClouds(c *Config, p *problems) {
	for _, r := range cloudRefs(c) {
		if r.cloud == "" {
			if r.file != "" {
				p.bad(r.fileKey, "set without %s, which names the entry to read from it", r.key)
			}
			continue
		}
		e, err := cloudsyaml.Read(cloudsyaml.Source{File: r.file, Cloud: r.cloud})
		if err == nil {
			err = e.CheckService(r.service)
		}
		if err != nil {
			p.bad(r.key, "%v", err)
		}
	}
}
