#!/usr/bin/env python3
"""Jobs, ConfigMaps and Secrets end to end with `draplane up` and the real kubectl (issue 28).

One node with 4 simulated H100s; everything is applied at once and then checked:
  1. an Indexed Job of 4 completions, each pod with 1 GPU from a
     ResourceClaimTemplate: the pods print JOB_COMPLETION_INDEX and their
     hostname (0-3, train-<index>), `kubectl wait --for=condition=complete`
     returns, the Job counts 4 succeeded and completedIndexes 0-3, and the
     claims made for its pods are released;
  2. a Job whose pod exits 3 with backoffLimit 1 is Failed (BackoffLimitExceeded)
     after 2 attempts;
  3. `kubectl create job hi --image=busybox -- echo hi` completes and logs "hi";
  4. a pod with env from a ConfigMap (envFrom, prefix) and a Secret
     (secretKeyRef) prints the values; a pod naming a missing ConfigMap waits
     with CreateContainerConfigError.

Usage: up_jobs.py DRAPLANE_BINARY
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from up_cluster import UpCluster  # noqa: E402

BIN = sys.argv[1]
up = UpCluster(BIN, 'node-1=sim:4xH100', prefix='draplane-jobs-e2e-')
kubectl, kjson, check, wait = up.kubectl, up.kjson, up.check, up.wait


def job(name, spec, command, claims=False):
    container = {'name': 'main', 'image': 'busybox', 'command': ['sh', '-c', command]}
    pod_spec = {'restartPolicy': 'Never', 'terminationGracePeriodSeconds': 0, 'containers': [container]}
    if claims:
        container['resources'] = {'claims': [{'name': 'gpu'}]}
        pod_spec['resourceClaims'] = [{'name': 'gpu', 'resourceClaimTemplateName': 'one-gpu'}]
    return {'apiVersion': 'batch/v1', 'kind': 'Job', 'metadata': {'name': name, 'namespace': 'default'},
            'spec': dict(spec, template={'spec': pod_spec})}


def pod(name, env, env_from):
    return {'apiVersion': 'v1', 'kind': 'Pod', 'metadata': {'name': name, 'namespace': 'default'},
            'spec': {'restartPolicy': 'Never', 'containers': [{
                'name': 'main', 'image': 'busybox', 'env': env, 'envFrom': env_from,
                'command': ['sh', '-c', 'echo "mode=$CFG_MODE token=$TOKEN"']}]}}


def job_condition(name, type_):
    conds = kjson('get', 'job', name).get('status', {}).get('conditions', [])
    return next((c for c in conds if c['type'] == type_ and c['status'] == 'True'), None)


def main():
    template = {'apiVersion': 'resource.k8s.io/v1', 'kind': 'ResourceClaimTemplate',
                'metadata': {'name': 'one-gpu', 'namespace': 'default'},
                'spec': {'spec': {'devices': {'requests': [
                    {'name': 'gpu', 'exactly': {'deviceClassName': 'gpu.nvidia.com'}}]}}}}
    config = {'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'cfg', 'namespace': 'default'},
              'data': {'MODE': 'fast'}}
    secret = {'apiVersion': 'v1', 'kind': 'Secret', 'metadata': {'name': 'sec', 'namespace': 'default'},
              'stringData': {'token': 's3cr3t'}}
    up.apply([template, config, secret,
              job('train', {'completions': 4, 'parallelism': 4, 'completionMode': 'Indexed'},
                  'echo "index=$JOB_COMPLETION_INDEX host=$HOSTNAME gpus=$NVIDIA_VISIBLE_DEVICES"', claims=True),
              job('fail', {'backoffLimit': 1}, 'exit 3'),
              pod('env', [{'name': 'TOKEN', 'valueFrom': {'secretKeyRef': {'name': 'sec', 'key': 'token'}}}],
                  [{'configMapRef': {'name': 'cfg'}, 'prefix': 'CFG_'}]),
              pod('env-missing', [], [{'configMapRef': {'name': 'nope'}}])])
    kubectl('create', 'job', 'hi', '--image=busybox', '--', 'echo', 'hi')

    # 1. The Indexed Job.
    kubectl('wait', '--for=condition=complete', 'job/train', '--timeout=60s')
    status = kjson('get', 'job', 'train')['status']
    check(status.get('succeeded') == 4 and status.get('completedIndexes') == '0-3',
          'train: 4 succeeded, completedIndexes 0-3 (%s)' % status)
    pods = kjson('get', 'pods', '-l', 'job-name=train')['items']
    lines = sorted(kubectl('logs', p['metadata']['name']).strip() for p in pods)
    check(len(pods) == 4 and [ln.split()[0] for ln in lines] == ['index=%d' % i for i in range(4)],
          'train pods print indexes 0-3: %s' % lines)
    fields = [dict(f.split('=', 1) for f in ln.split()) for ln in lines]
    check(all(f.get('host') == 'train-' + f.get('index', '') for f in fields), 'train pods\' hostname is train-<index>')
    check(all('gpus=' in ln and not ln.endswith('gpus=') for ln in lines), 'each train pod got a GPU')
    check(all(not p['metadata'].get('finalizers') for p in pods), 'train pods lost the job-tracking finalizer')
    train_uids = {p['metadata']['uid'] for p in pods}

    def claims_released():
        left = [c for c in kjson('get', 'resourceclaims')['items']
                if any(o.get('uid') in train_uids for o in c['metadata'].get('ownerReferences', []))]
        return not left
    wait(claims_released, 30, 'the train pods\' claims are released')

    # 2. backoffLimit 1: two attempts, then Failed.
    kubectl('wait', '--for=condition=failed', 'job/fail', '--timeout=60s')
    cond = job_condition('fail', 'Failed')
    status = kjson('get', 'job', 'fail')['status']
    check(cond and cond['reason'] == 'BackoffLimitExceeded' and status.get('failed') == 2,
          'fail: Failed (BackoffLimitExceeded) after 2 failed pods (%s)' % status)
    check(len(kjson('get', 'pods', '-l', 'job-name=fail')['items']) == 2, 'fail: exactly 2 pods were created')

    # 3. kubectl create job.
    kubectl('wait', '--for=condition=complete', 'job/hi', '--timeout=30s')
    hi = kjson('get', 'pods', '-l', 'job-name=hi')['items']
    check(len(hi) == 1 and kubectl('logs', hi[0]['metadata']['name']).strip() == 'hi', 'kubectl create job: logs "hi"')

    # 4. ConfigMap and Secret in the environment.
    wait(lambda: kjson('get', 'pod', 'env')['status'].get('phase') == 'Succeeded', 30, 'pod env succeeded')
    out = kubectl('logs', 'env').strip()
    check(out == 'mode=fast token=s3cr3t', 'env from ConfigMap and Secret: %r' % out)

    def config_error():
        st = kjson('get', 'pod', 'env-missing')['status'].get('containerStatuses', [])
        waiting = st[0]['state'].get('waiting', {}) if st else {}
        return waiting.get('reason') == 'CreateContainerConfigError' and waiting
    waiting = wait(config_error, 30, 'env-missing waits with CreateContainerConfigError')
    check(bool(waiting) and waiting.get('message') == 'configmap "nope" not found',
          'CreateContainerConfigError message: %s' % waiting)


if __name__ == '__main__':
    with up:
        main()
    sys.exit(up.exit_code)
