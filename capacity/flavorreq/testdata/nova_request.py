"""Ask Nova's own scheduler code for each flavor's allocation candidates query.

Reads a JSON list of flavors (the novaclient.Flavor form) on stdin and
writes a JSON list with, for each, the query Nova's ResourceRequest renders
after the flavor-reading pre-filters, or "ERR <exception>" when Nova's API
check of the flavor (numa_get_constraints) or the translation refuses it.
"""
import json
import sys

import nova.conf
from nova import objects
from nova.scheduler import request_filter
from nova.scheduler import utils
from nova.virt import hardware

objects.register_all()
nova.conf.CONF([], project='nova', default_config_files=[])
nova.conf.CONF.set_override('max_placement_results', 1000, group='scheduler')

answers = []
for f in json.load(sys.stdin):
    flavor = objects.Flavor(
        vcpus=f['vcpus'], memory_mb=f['ram'], root_gb=f['disk'],
        ephemeral_gb=f['ephemeral'], swap=f['swap'],
        extra_specs=f['extra_specs'] or {})
    image = objects.ImageMeta(properties=objects.ImageMetaProps())
    try:
        hardware.numa_get_constraints(flavor, image)
        spec = objects.RequestSpec(flavor=flavor, image=image, is_bfv=False,
                                   num_instances=1)
        spec.request_level_params = objects.RequestLevelParams(
            root_required=set(), root_forbidden=set(), same_subtree=[])
        request_filter.compute_status_filter(None, spec)
        request_filter.ephemeral_encryption_filter(None, spec)
        answers.append(
            utils.ResourceRequest.from_request_spec(spec).to_querystring())
    except Exception as e:  # any refusal is an answer to compare
        answers.append('ERR %s: %s' % (type(e).__name__, e))
json.dump(answers, sys.stdout)
