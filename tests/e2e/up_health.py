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
from up_cluster import (FAILURES, ONE_GPU_TEMPLATE, UpCluster, check, kjson, kubectl,  # noqa: E402
                        pod_with_claim, wait)

BIN = sys.argv[1]


def pod(name):
    return pod_with_claim(name, 'one-gpu', request='gpu')


def claim_of(pod_name):
    p = kjson('get', 'pod', pod_name)
    for s in p.get('status', {}).get('resourceClaimStatuses', []):
        if s.get('resourceClaimName'):
            return s['resourceClaimName']
    return None


def allocated_device(claim):
    results = kjson('get', 'resourceclaim', claim).get('status', {}).get('allocation', {}).get('devices', {}).get(
        'results', [])
    return results[0]['device'] if results else None


def pod_health(pod_name):
    """{resourceID: health} of the pod's container for claim:gpu/gpu."""
    cs = kjson('get', 'pod', pod_name).get('status', {}).get('containerStatuses', [])
    for c in cs:
        for rs in c.get('allocatedResourcesStatus', []):
            if rs.get('name') == 'claim:gpu/gpu':
                return {r['resourceID']: r['health'] for r in rs.get('resources', [])}
    return {}


def claim_condition(claim, device):
    for d in kjson('get', 'resourceclaim', claim).get('status', {}).get('devices', []):
        if d.get('driver') == 'gpu.nvidia.com' and d.get('device') == device:
            for c in d.get('conditions', []):
                if c.get('type') == 'Healthy':
                    return c.get('status')
    return None


def taints(device):
    for s in kjson('get', 'resourceslices')['items']:
        for d in s['spec'].get('devices', []):
            if d['name'] == device:
                return [(t['key'], t.get('value', ''), t['effect']) for t in d.get('taints', [])]
    return None


def main():
    with UpCluster(BIN, 'node-1=sim:3xH100') as up:
        run(up.data)
    return 1 if FAILURES else 0


def inject(data, *args):
    return subprocess.run([BIN, 'agent', 'inject-xid', '--data-dir', data, '--node', 'node-1', *args],
                          capture_output=True, text=True, timeout=30)


def run(data):
    wait(lambda: kjson('get', 'resourceslices')['items'], 60, 'the node publishes its GPUs')

    # 1. A running pod sees its device Healthy.
    kubectl('apply', '-f', '-', stdin=ONE_GPU_TEMPLATE + '---' + pod('victim'))
    wait(lambda: kjson('get', 'pod', 'victim').get('status', {}).get('phase') == 'Running', 60, 'victim runs')
    claim = claim_of('victim')
    device = allocated_device(claim)
    check(device == 'gpu-0', 'the victim has the first GPU: %s' % device)
    health = wait(lambda: pod_health('victim'), 20, 'allocatedResourcesStatus of victim')
    check(list(health.values()) == ['Healthy'], 'victim shows its device Healthy: %s' % health)
    check(wait(lambda: claim_condition(claim, device) == 'True', 20, 'claim condition Healthy=True'),
          'the claim reports its device Healthy=True')

    # 2. A critical XID.
    r = inject(data, '--gpu', device, '--xid', '79')
    check(r.returncode == 0, 'inject-xid --xid 79 succeeds: %s%s' % (r.stdout.strip(), r.stderr.strip()))
    check(wait(lambda: ('gpu.nvidia.com/xid', '79', 'NoSchedule') in (taints(device) or []), 20,
               'the XID taint in the slice'), 'the device is tainted gpu.nvidia.com/xid=79:NoSchedule')
    check(wait(lambda: list(pod_health('victim').values()) == ['Unhealthy'], 20, 'victim Unhealthy'),
          'the pod shows its device Unhealthy')
    check(wait(lambda: claim_condition(claim, device) == 'False', 20, 'claim condition Healthy=False'),
          'the claim reports its device Healthy=False')

    # 3. A new claim avoids a free tainted GPU.
    r = inject(data, '--gpu', 'gpu-1', '--xid', '48')
    check(r.returncode == 0, 'inject-xid --xid 48 succeeds')
    check(wait(lambda: ('gpu.nvidia.com/xid', '48', 'NoSchedule') in (taints('gpu-1') or []), 20,
               'the XID 48 taint'), 'the free gpu-1 is tainted gpu.nvidia.com/xid=48:NoSchedule')
    kubectl('apply', '-f', '-', stdin=pod('newcomer'))
    newclaim = wait(lambda: claim_of('newcomer'), 30, 'the newcomer has a claim')
    other = wait(lambda: allocated_device(newclaim), 30, 'the newcomer is allocated')
    check(other == 'gpu-2', 'the new claim gets the untainted gpu-2 (got %s)' % other)

    # 4. An application XID on the other GPU: informational only.
    r = inject(data, '--gpu', other, '--xid', '13')
    check(r.returncode == 0, 'inject-xid --xid 13 succeeds')
    check(wait(lambda: ('gpu.nvidia.com/xid', '13', 'None') in (taints(other) or []), 20, 'the XID 13 taint'),
          'an application XID taints with effect None')
    check(list(pod_health('newcomer').values()) == ['Healthy'], 'its pod still shows the device Healthy')

    # 5. Recovery.
    r = inject(data, '--gpu', device, '--recover')
    check(r.returncode == 0, 'inject-xid --recover succeeds')
    check(wait(lambda: taints(device) == [], 20, 'the taint is gone'), 'recovery clears the taint')
    check(wait(lambda: list(pod_health('victim').values()) == ['Healthy'], 20, 'victim Healthy again'),
          'the pod shows its device Healthy again')
    check(wait(lambda: claim_condition(claim, device) == 'True', 20, 'claim condition Healthy=True again'),
          'the claim reports its device Healthy=True again')
    r = inject(data, '--gpu', 'gpu-7', '--xid', '79')
    check(r.returncode == 1 and 'no GPU "gpu-7"' in r.stderr and 'gpu-2' in r.stderr,
          'an unknown GPU is an error naming the GPUs: %s' % r.stderr.strip())

    # 6. The claim with device status is deallocated and deleted with its pod.
    kubectl('delete', 'pod', 'victim', '--wait=false')
    check(wait(lambda: not kubectl('get', 'resourceclaims', '-o', 'name').stdout.count(claim), 30,
               'the claim of victim is gone'), 'the claim with device status is deleted with its pod')


if __name__ == '__main__':
    sys.exit(main())
