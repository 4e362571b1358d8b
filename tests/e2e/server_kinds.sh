#!/usr/bin/env bash
# kubectl against `draplane server` with the kinds users' manifests carry beside
# their workloads: ConfigMap and Secret (kubectl create sends them as protobuf),
# ServiceAccount, Service, PersistentVolumeClaim, and apps/v1 Deployment and
# batch/v1 Job (kubectl create deployment|job, also protobuf; kubectl scale
# through /scale): discovery's short names, the table columns, validation
# errors, immutability, explain. No controller runs: nothing is created for them.
# Usage: server_kinds.sh DRAPLANE_BINARY SOURCE_DIR
BIN="$1"
SRC="$2"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/server_common.sh"
start_api_server_for_kubectl "$BIN"

cat >"$work/app.yaml" <<'YAML'
apiVersion: v1
kind: ServiceAccount
metadata: {name: runner, namespace: default}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec:
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: 8080}, {name: metrics, port: 9090}]
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: models, namespace: default}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 10Gi}}
---
apiVersion: v1
kind: Secret
metadata: {name: hf-token, namespace: default}
stringData: {token: abc}
YAML

expect "create configmap (protobuf)" "configmap/settings created" kubectl create configmap settings --from-literal=mode=fast --from-literal=level=3
expect "configmap data" "fast" kubectl get cm settings -o jsonpath='{.data.mode}'
expect "create secret (protobuf)" "secret/creds created" kubectl create secret generic creds --from-literal=password=s3cret
expect "secret data is base64" "czNjcmV0" kubectl get secret creds -o jsonpath='{.data.password}'
expect "apply manifests" "persistentvolumeclaim/models created" kubectl apply -f "$work/app.yaml"
expect "stringData merged into data" "YWJj" kubectl get secret hf-token -o jsonpath='{.data.token}{.stringData}'
expect "secret type defaulted" "Opaque" kubectl get secret hf-token -o jsonpath='{.type}'
expect "re-apply unchanged" "service/web unchanged" kubectl apply -f "$work/app.yaml"
expect "service defaults" "TCP 8080 9090 ClusterIP" kubectl get svc web -o jsonpath='{.spec.ports[0].protocol} {.spec.ports[0].targetPort} {.spec.ports[1].targetPort} {.spec.type}'
expect "service columns" "80/TCP,9090/TCP" kubectl get svc web
expect "pvc pending" "Pending" kubectl get pvc models
expect "configmap columns" "DATA" kubectl get cm
expect "short names" "serviceaccount/runner" kubectl get cm,secret,sa,svc,pvc -o name
expect "svc in category all" "service/web" kubectl get all -o name
expect "bad service port" "spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive" kubectl patch svc web --type json -p '[{"op":"replace","path":"/spec/ports/0/port","value":0}]'
expect "bad config key" "data[bad key]: Invalid value: \"bad key\"" kubectl patch cm settings --type merge -p '{"data":{"bad key":"x"}}'
expect "immutable set" "patched" kubectl patch cm settings --type merge -p '{"immutable":true}'
expect "immutable data" "data: Forbidden: field is immutable when \`immutable\` is set" kubectl patch cm settings --type merge -p '{"data":{"mode":"slow"}}'
expect "secret type immutable" "type: Invalid value: \"kubernetes.io/tls\": field is immutable" kubectl patch secret creds --type merge -p '{"type":"kubernetes.io/tls"}'
expect "explain service" "sessionAffinity" kubectl explain service.spec
expect "delete" 'configmap "settings" deleted' kubectl delete cm settings

expect "create deployment (protobuf)" "deployment.apps/web created" kubectl create deployment web --image=nginx --replicas=2
expect "deployment stored" "2 RollingUpdate 25% web=web" kubectl get deploy web -o jsonpath='{.spec.replicas} {.spec.strategy.type} {.spec.strategy.rollingUpdate.maxSurge} {.spec.selector.matchLabels.app}={.spec.template.metadata.labels.app}'
expect "scale" "deployment.apps/web scaled" kubectl scale deployment web --replicas=3
expect "scaled" "3" kubectl get deploy web -o jsonpath='{.spec.replicas}'
expect "scale subresource" '"kind":"Scale","apiVersion":"autoscaling/v1"' kubectl get --raw /apis/apps/v1/namespaces/default/deployments/web/scale
expect "deploy columns" "UP-TO-DATE" kubectl get deploy
expect "create job (protobuf)" "job.batch/j created" kubectl create job j --image=busybox -- echo hi
expect "job selector generated" "batch.kubernetes.io/controller-uid" kubectl get job j -o jsonpath='{.spec.selector.matchLabels}'
expect "job defaults" "1 1 6 NonIndexed Never" kubectl get job j -o jsonpath='{.spec.completions} {.spec.parallelism} {.spec.backoffLimit} {.spec.completionMode} {.spec.template.spec.restartPolicy}'
expect "job columns" "COMPLETIONS" kubectl get jobs
expect "job template immutable" "spec.template: Invalid value" kubectl patch job j --type merge -p '{"spec":{"template":{"spec":{"containers":[{"name":"j","image":"alpine"}]}}}}'
expect "deployment restartPolicy" 'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"' kubectl patch deploy web --type merge -p '{"spec":{"template":{"spec":{"restartPolicy":"Never"}}}}'
expect "many kinds" "job.batch/j" kubectl get deploy,rs,job,cm,secret -o name
expect "deploy in category all" "deployment.apps/web" kubectl get all -o name
expect "explain strategy" "rollingUpdate" kubectl explain deployment.spec.strategy
cat >"$work/sets.yaml" <<'YAML'
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: default}
spec:
  replicas: 2
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: db, image: postgres}]}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: default}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec: {containers: [{name: agent, image: agent}]}
YAML
expect "apply statefulset and daemonset" "daemonset.apps/agent created" kubectl apply -f "$work/sets.yaml"
expect "sts and ds" "statefulset.apps/db" kubectl get sts,ds -o name
expect "sts columns" "0/2" kubectl get sts db

echo "failures: $FAILURES"
[ "$FAILURES" -eq 0 ]
