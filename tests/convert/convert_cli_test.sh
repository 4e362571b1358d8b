#!/bin/sh
# `draplane convert` end to end: v1beta1/v1beta2 -> v1 output equals the v1
# rewrite, JSON output, stdin, and exit 2 with the migration hint for v1alpha2.
set -eu
bin=$1
data=$2/tests/api/testdata/codec
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$bin" convert -f "$data/v1_expected.yaml" --to resource.k8s.io/v1 > "$tmp/want.yaml"
for v in v1beta1 v1beta2; do
  "$bin" convert -f "$data/$v.yaml" --to resource.k8s.io/v1 > "$tmp/$v.yaml" || fail "$v exit $?"
  cmp -s "$tmp/want.yaml" "$tmp/$v.yaml" || { diff "$tmp/want.yaml" "$tmp/$v.yaml" >&2; fail "$v output differs"; }
done
grep -q '^    - exactly:$' "$tmp/v1beta1.yaml" || fail "no exactly in converted claim"

"$bin" convert -f - -o json < "$data/v1beta1.yaml" > "$tmp/out.json" || fail "stdin json exit $?"
grep -q '"kind": "List"' "$tmp/out.json" || fail "json list missing"
grep -q '"apiVersion": "resource.k8s.io/v1"' "$tmp/out.json" || fail "json apiVersion"

set +e
"$bin" convert -f "$data/v1alpha2_seed.yaml" > "$tmp/alpha.out" 2> "$tmp/alpha.err"
rc=$?
set -e
[ "$rc" = 2 ] || fail "v1alpha2 exit $rc, want 2"
grep -q "v1alpha2_seed.yaml: document 3: ResourceClass/gpu-class: kind ResourceClass was removed in Kubernetes 1.31" "$tmp/alpha.err" || { cat "$tmp/alpha.err" >&2; fail "ResourceClass hint"; }
grep -q "document 2: Pod/training-job: spec.resourceClaims\[0\].source: field was removed" "$tmp/alpha.err" || fail "pod source hint"

set +e
"$bin" convert -f "$data/v1beta1.yaml" --to resource.k8s.io/v1beta1 > /dev/null 2> "$tmp/target.err"
rc=$?
set -e
[ "$rc" = 2 ] || fail "bad target exit $rc, want 2"
grep -q "the only supported target is resource.k8s.io/v1" "$tmp/target.err" || fail "target message"
echo PASS
