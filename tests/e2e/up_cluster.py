"""Helpers for e2e scripts against `draplane up` with the real kubectl.

    from up_cluster import FAILURES, UpCluster, check, kubectl, kjson, wait

UpCluster(binary, nodes) starts `draplane up` on a free loopback port in a
temporary directory (its data dir is .data), waits until it is ready and sets
KUBECONFIG; on exit it stops the cluster and, when a check failed, prints the
tail of its output and logs.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

FAILURES = []  # what failed, in order (appended to, never rebound)


def check(cond, what):
    print(('ok   ' if cond else 'FAIL ') + what, flush=True)
    if not cond:
        FAILURES.append(what)
    return cond


def kubectl(*args, stdin=None, ok=True):
    """kubectl ARGS; with `ok`, a non-zero exit raises RuntimeError with its output."""
    p = subprocess.run(['kubectl', *args], input=stdin, capture_output=True, text=True, timeout=120)
    if ok and p.returncode != 0:
        raise RuntimeError('kubectl %s: %s%s' % (' '.join(args), p.stdout, p.stderr))
    return p


def kjson(*args):
    return json.loads(kubectl(*args, '-o', 'json').stdout)


def wait(pred, timeout, what):
    """pred() until it is truthy (its value) or `timeout` seconds (a failed check)."""
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        last = pred()
        if last:
            return last
        time.sleep(0.25)
    check(False, 'timed out after %d s: %s' % (timeout, what))
    return last


def claim_template(name, exactly='{deviceClassName: gpu.nvidia.com}', more=''):
    """A ResourceClaimTemplate (namespace default) with one request `gpu`:
    `exactly` its exactly field (flow YAML), `more` further lines of spec.spec.devices."""
    return '''
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: %s, namespace: default}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: %s
%s''' % (name, exactly, more)


ONE_GPU_TEMPLATE = claim_template('one-gpu')


def pod_with_claim(name, template, request=None):
    """A pod (namespace default) whose container sleeps and uses the claim `gpu`
    made from ResourceClaimTemplate `template` (its `request` only, when given)."""
    ref = '{name: gpu, request: %s}' % request if request else '{name: gpu}'
    return '''
apiVersion: v1
kind: Pod
metadata: {name: %s, namespace: default}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: busybox
    command: ["sh", "-c", "exec sleep 3600"]
    resources:
      claims: [%s]
  resourceClaims:
  - {name: gpu, resourceClaimTemplateName: %s}
''' % (name, ref, template)


class UpCluster:
    def __init__(self, binary, nodes, heartbeat=2):
        self.args = [binary, 'up', '--listen', '127.0.0.1:0', '--nodes', nodes, '--heartbeat', str(heartbeat)]

    def __enter__(self):
        if not shutil.which('kubectl'):
            raise RuntimeError('kubectl is not on PATH (scripts/setup installs one)')
        self.work = tempfile.mkdtemp(prefix='draplane-up-e2e-')
        self.data = os.path.join(self.work, 'data')
        self.log = open(os.path.join(self.work, 'up.log'), 'w+')
        self.proc = subprocess.Popen(self.args + ['--data-dir', self.data], stdout=self.log,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        ready = wait(lambda: 'ready\n' in self.output() or self.proc.poll() is not None, 90, 'draplane up ready')
        if not ready or not check(self.proc.poll() is None, 'draplane up is running'):
            self.__exit__(None, None, None)
            raise RuntimeError('draplane up did not start')
        os.environ['KUBECONFIG'] = re.search(r'^kubeconfig: (.*)$', self.output(), re.M).group(1)
        return self

    def output(self):
        self.log.flush()
        with open(self.log.name) as f:
            return f.read()

    def __exit__(self, *exc):
        os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
        if FAILURES or exc[0] is not None:
            print('--- draplane up output:\n' + self.output()[-4000:])
            logs = os.path.join(self.data, 'logs')
            for f in sorted(os.listdir(logs)) if os.path.isdir(logs) else []:
                print('--- %s (tail):' % f)
                print(open(os.path.join(logs, f)).read()[-2000:])
        shutil.rmtree(self.work, ignore_errors=True)
        return False
