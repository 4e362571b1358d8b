#!/usr/bin/env python3
"""`--policy` of `draplane scheduler` and `draplane up` (issue 26).

  1. an unknown name: `draplane scheduler --policy fastest` and `draplane up
     --policy fastest` exit 2 naming the flag and listing the valid names;
  2. `draplane up --policy best-fit` with node-1 of 2 H100s and node-2 of 1:
     a pod with a one-GPU claim lands on node-2 (best-fit: the node left with
     the least GPU), not on node-1, the first by name (first-fit's choice).

Usage: up_policy.py DRAPLANE_BINARY
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from up_cluster import UpCluster  # noqa: E402

BIN = sys.argv[1]
VALID = 'valid names: first-fit, random, dot-product, gpu-clustering, gpu-packing, best-fit, fgd, draplane, packing'


def rejected(args):
    with tempfile.TemporaryDirectory(prefix='draplane-policy-e2e-') as d:
        p = subprocess.run([BIN, *args, '--data-dir', os.path.join(d, 'data')] if args[0] == 'up' else [BIN, *args],
                           capture_output=True, text=True, timeout=60)
    return p.returncode, p.stderr


up = UpCluster(BIN, 'node-1=sim:2xH100;node-2=sim:1xH100', prefix='draplane-policy-e2e-')
up.args += ['--policy', 'best-fit']


def main():
    for args in (['scheduler', '--kubeconfig', '/nonexistent', '--policy', 'fastest'],
                 ['up', '--listen', '127.0.0.1:0', '--policy', 'fastest']):
        code, err = rejected(args)
        up.check(code == 2 and '--policy: unknown policy "fastest"' in err and VALID in err,
                 'draplane %s --policy fastest: exit 2 naming the flag and the valid names (%d: %s)' %
                 (args[0], code, err.strip()))
    with up:
        up.apply([{'apiVersion': 'resource.k8s.io/v1', 'kind': 'ResourceClaim',
                   'metadata': {'name': 'one', 'namespace': 'default'},
                   'spec': {'devices': {'requests': [{'name': 'gpu', 'exactly': {'deviceClassName': 'gpu.nvidia.com'}}]}}},
                  {'apiVersion': 'v1', 'kind': 'Pod', 'metadata': {'name': 'one', 'namespace': 'default'},
                   'spec': {'containers': [{'name': 'main', 'image': 'busybox', 'command': ['sleep', '3600'],
                                            'resources': {'claims': [{'name': 'gpu'}]}}],
                            'resourceClaims': [{'name': 'gpu', 'resourceClaimName': 'one'}]}}])
        node = up.wait(lambda: up.kjson('get', 'pod', 'one')['spec'].get('nodeName'), 60, 'pod one bound')
        up.check(node == 'node-2', 'best-fit puts the one-GPU pod on node-2, the node left with least GPU (got %s)' % node)
    sys.exit(up.exit_code)


if __name__ == '__main__':
    main()
