#!/usr/bin/env python3
"""Device health of `draplane up`, as an operator sees it with kubectl.

Starts `draplane up --nodes node-1=sim:3xH100` on a free loopback port and:
  1. a pod with a one-GPU claim runs; its container status lists the device as
     Healthy (allocatedResourcesStatus, KEP-4680) and its claim's
     status.devices[] has condition Healthy=True (KEP-4817);
  2. `draplane agent inject-xid --xid 79` on that GPU: the device gets the taint
     gpu.nvidia.com/xid=79:NoSchedule in its ResourceSlice, the pod shows it
     Unhealthy and the claim's condition turns False;
  3. a critical XID (48) on a free GPU too: a new claim is allocated the third
     GPU, not the free tainted one (which first fit would pick);
  4. an application XID (13) on the third GPU taints it with effect None and it
     stays Healthy;
  5. `inject-xid --recover`: the taint goes, the pod shows the device Healthy
     again; an unknown --gpu is an error naming the node's GPUs;
  6. deleting the pod deallocates and deletes its claim (the device status the
     agent wrote goes with the allocation).

Usage: up_health.py DRAPLANE_BINARY
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from up_cluster import UpCluster  # noqa: E402

BIN = sys.argv[1]

# A template of one whole GPU, and a pod whose container uses its request.
TEMPLATE = {'apiVersion': 'resource.k8s.io/v1', 'kind': 'ResourceClaimTemplate',
            'metadata': {'name': 'whole-gpu', 'namespace': 'default'},
            'spec': {'spec': {'devices': {'requests': [
                {'name': 'gpu', 'exactly': {'deviceClassName': 'gpu.nvidia.com'}}]}}}}


def pod(name):
    return {'apiVersion': 'v1', 'kind': 'Pod', 'metadata': {'name': name, 'namespace': 'default'},
            'spec': {'terminationGracePeriodSeconds': 1,
                     'containers': [{'name': 'main', 'image': 'busybox', 'command': ['sleep', '3600'],
                                     'resources': {'claims': [{'name': 'gpu', 'request': 'gpu'}]}}],
                     'resourceClaims': [{'name': 'gpu', 'resourceClaimTemplateName': 'whole-gpu'}]}}


class Health:
    def __init__(self, up):
        self.up = up
        self.data = os.path.join(up.dir, 'data')

    def claim_of(self, pod_name):
        for s in self.up.kjson('get', 'pod', pod_name).get('status', {}).get('resourceClaimStatuses', []):
            if s.get('resourceClaimName'):
                return s['resourceClaimName']
        return None

    def allocated_device(self, claim):
        alloc = self.up.kjson('get', 'resourceclaim', claim).get('status', {}).get('allocation', {})
        results = alloc.get('devices', {}).get('results', [])
        return results[0]['device'] if results else None

    def pod_health(self, pod_name):
        """[health] of the devices of claim:gpu/gpu in the pod's container status."""
        for c in self.up.kjson('get', 'pod', pod_name).get('status', {}).get('containerStatuses', []):
            for rs in c.get('allocatedResourcesStatus', []):
                if rs.get('name') == 'claim:gpu/gpu':
                    return [r['health'] for r in rs.get('resources', []) if r.get('resourceID')]
        return []

    def claim_condition(self, claim, device):
        for d in self.up.kjson('get', 'resourceclaim', claim).get('status', {}).get('devices', []):
            if d.get('driver') == 'gpu.nvidia.com' and d.get('device') == device:
                for c in d.get('conditions', []):
                    if c.get('type') == 'Healthy':
                        return c.get('status')
        return None

    def taints(self, device):
        for s in self.up.kjson('get', 'resourceslices')['items']:
            for d in s['spec'].get('devices', []):
                if d['name'] == device:
                    return [(t['key'], t.get('value', ''), t['effect']) for t in d.get('taints', [])]
        return None

    def inject(self, *args):
        return subprocess.run([BIN, 'agent', 'inject-xid', '--data-dir', self.data, '--node', 'node-1', *args],
                              capture_output=True, text=True, timeout=30)


def run(up):
    h = Health(up)
    check, wait = up.check, up.wait
    wait(lambda: up.kjson('get', 'resourceslices')['items'], 60, 'the node publishes its GPUs')

    # 1. A running pod sees its device Healthy.
    up.apply([TEMPLATE, pod('victim')])
    wait(lambda: up.kjson('get', 'pod', 'victim').get('status', {}).get('phase') == 'Running', 60, 'victim runs')
    claim = h.claim_of('victim')
    device = h.allocated_device(claim)
    check(device == 'gpu-0', 'the victim has the first GPU: %s' % device)
    health = wait(lambda: h.pod_health('victim'), 20, 'allocatedResourcesStatus of victim')
    check(health == ['Healthy'], 'victim shows its device Healthy: %s' % health)
    check(wait(lambda: h.claim_condition(claim, device) == 'True', 20, 'claim condition Healthy=True'),
          'the claim reports its device Healthy=True')

    # 2. A critical XID.
    r = h.inject('--gpu', device, '--xid', '79')
    check(r.returncode == 0, 'inject-xid --xid 79 succeeds: %s%s' % (r.stdout.strip(), r.stderr.strip()))
    check(wait(lambda: ('gpu.nvidia.com/xid', '79', 'NoSchedule') in (h.taints(device) or []), 20,
               'the XID taint in the slice'), 'the device is tainted gpu.nvidia.com/xid=79:NoSchedule')
    check(wait(lambda: h.pod_health('victim') == ['Unhealthy'], 20, 'victim Unhealthy'),
          'the pod shows its device Unhealthy')
    check(wait(lambda: h.claim_condition(claim, device) == 'False', 20, 'claim condition Healthy=False'),
          'the claim reports its device Healthy=False')

    # 3. A new claim avoids a free tainted GPU.
    r = h.inject('--gpu', 'gpu-1', '--xid', '48')
    check(r.returncode == 0, 'inject-xid --xid 48 succeeds')
    check(wait(lambda: ('gpu.nvidia.com/xid', '48', 'NoSchedule') in (h.taints('gpu-1') or []), 20,
               'the XID 48 taint'), 'the free gpu-1 is tainted gpu.nvidia.com/xid=48:NoSchedule')
    up.apply([pod('newcomer')])
    newclaim = wait(lambda: h.claim_of('newcomer'), 30, 'the newcomer has a claim')
    other = wait(lambda: h.allocated_device(newclaim), 30, 'the newcomer is allocated')
    check(other == 'gpu-2', 'the new claim gets the untainted gpu-2 (got %s)' % other)

    # 4. An application XID: informational only.
    r = h.inject('--gpu', other, '--xid', '13')
    check(r.returncode == 0, 'inject-xid --xid 13 succeeds')
    check(wait(lambda: ('gpu.nvidia.com/xid', '13', 'None') in (h.taints(other) or []), 20, 'the XID 13 taint'),
          'an application XID taints with effect None')
    wait(lambda: h.pod_health('newcomer'), 20, 'allocatedResourcesStatus of newcomer')
    check(h.pod_health('newcomer') == ['Healthy'], 'its pod still shows the device Healthy')

    # 5. Recovery.
    r = h.inject('--gpu', device, '--recover')
    check(r.returncode == 0, 'inject-xid --recover succeeds')
    check(wait(lambda: h.taints(device) == [], 20, 'the taint is gone'), 'recovery clears the taint')
    check(wait(lambda: h.pod_health('victim') == ['Healthy'], 20, 'victim Healthy again'),
          'the pod shows its device Healthy again')
    check(wait(lambda: h.claim_condition(claim, device) == 'True', 20, 'claim condition Healthy=True again'),
          'the claim reports its device Healthy=True again')
    r = h.inject('--gpu', 'gpu-7', '--xid', '79')
    check(r.returncode == 1 and 'no GPU "gpu-7"' in r.stderr and 'gpu-2' in r.stderr,
          'an unknown GPU is an error naming the GPUs: %s' % r.stderr.strip())

    # 6. The claim with device status is deallocated and deleted with its pod.
    up.kubectl('delete', 'pod', 'victim', '--wait=false')
    check(wait(lambda: claim not in up.kubectl('get', 'resourceclaims', '-o', 'name'), 30,
               'the claim of victim is gone'), 'the claim with device status is deleted with its pod')


def main():
    with UpCluster(BIN, nodes='node-1=sim:3xH100', prefix='draplane-health-e2e-') as up:
        run(up)
        return up.exit_code


if __name__ == '__main__':
    sys.exit(main())
