#!/usr/bin/env python3
"""An 8-pod gang against `draplane up` (issue 27), with kubectl.

Starts `draplane up --nodes node-1=sim:8xH100` (tests/e2e/up_cluster.py) and:
  1. a pod with a claim for one GPU runs ("other"), leaving 7 GPUs free;
  2. eight pods of one gang (annotation draplane.io/gang: train with
     draplane.io/gang-min-member: 8, the shorthand docs/compat.md describes),
     each with a claim for one GPU, stay pending: no pod bound, no claim
     allocated, PodScheduled=False naming the gang;
  3. "other" is deleted: its GPU frees and the whole gang runs.

Usage: up_gang.py DRAPLANE_BINARY
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from up_cluster import UpCluster  # noqa: E402

BIN = sys.argv[1]
up = UpCluster(BIN, 'node-1=sim:8xH100', prefix='draplane-gang-e2e-')  # started by main()
kubectl, kjson, check, wait, create = up.kubectl, up.kjson, up.check, up.wait, up.apply

MEMBERS = ['w%d' % i for i in range(8)]


def claim_and_pod(name, gang=None):
    meta = {'name': name, 'namespace': 'default'}
    if gang:
        meta['annotations'] = {'draplane.io/gang': gang, 'draplane.io/gang-min-member': '8'}
    return [{'apiVersion': 'resource.k8s.io/v1', 'kind': 'ResourceClaim',
             'metadata': {'name': name, 'namespace': 'default'},
             'spec': {'devices': {'requests': [{'name': 'gpu', 'exactly': {'deviceClassName': 'gpu.nvidia.com'}}]}}},
            {'apiVersion': 'v1', 'kind': 'Pod', 'metadata': meta,
             'spec': {'terminationGracePeriodSeconds': 1,
                      'containers': [{'name': 'main', 'image': 'busybox', 'command': ['sleep', '3600'],
                                      'resources': {'claims': [{'name': 'gpu'}]}}],
                      'resourceClaims': [{'name': 'gpu', 'resourceClaimName': name}]}}]


def pods():
    return {p['metadata']['name']: p for p in kjson('get', 'pods')['items']}


def scheduled_message(pod):
    for c in pod.get('status', {}).get('conditions', []):
        if c['type'] == 'PodScheduled' and c['status'] == 'False':
            return c.get('message', '')
    return None


def main():
    with up:
        create(claim_and_pod('other'))
        wait(lambda: pods().get('other', {}).get('spec', {}).get('nodeName'), 30, 'pod other bound')
        create([o for m in MEMBERS for o in claim_and_pod(m, 'train')])
        # Every member tried and told why: none bound, no claim allocated.
        msgs = wait(lambda: (lambda ps: [scheduled_message(ps.get(m, {})) for m in MEMBERS]
                             if all(scheduled_message(ps.get(m, {})) for m in MEMBERS) else None)(pods()),
                    30, 'every member has PodScheduled=False')
        if msgs:
            check(all('gang default/train: only 7 of 8 pods fit' in m for m in msgs),
                  'the members say the gang does not fit: %s' % msgs[0])
        ps = pods()
        check(not any(ps[m]['spec'].get('nodeName') for m in MEMBERS), 'no member is bound')
        claims = {c['metadata']['name']: c for c in kjson('get', 'resourceclaims')['items']}
        check(not any(claims[m].get('status', {}).get('allocation') for m in MEMBERS),
              'no member claim holds a device')
        kubectl('delete', 'pod', 'other', '--wait=false')
        bound = wait(lambda: (lambda ps: all(ps.get(m, {}).get('spec', {}).get('nodeName') for m in MEMBERS))(pods()),
                     60, 'the whole gang bound once the eighth GPU is free')
        check(bool(bound), 'all 8 members run on node-1')
    sys.exit(up.exit_code)


if __name__ == '__main__':
    main()
