#!/bin/sh
# `draplane validate` end to end, CEL selector checks included:
#  1. the valid examples validate (exit 0), one "valid" line per object;
#  2. examples/v1alpha2 fails (exit 2) with the migration hint;
#  3. every tests/api/testdata/invalid/*.yaml fails (exit 2) with exactly the lines
#     of its `# want:` header comments (after the "<file>: document <i>: " prefix).
# Usage: validate_cli_test.sh DRAPLANE_BINARY SOURCE_DIR
set -u
bin=$1
src=$2
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if ! "$bin" validate -f "$src/examples/seed-000" -f "$src/examples/seed-004" -f "$src/examples/gpu" \
    >"$tmp/out" 2>"$tmp/err"; then
  echo "FAIL: valid examples:"; cat "$tmp/err"; fail=1
fi
if grep -qv ' valid$' "$tmp/out"; then echo "FAIL: unexpected output:"; cat "$tmp/out"; fail=1; fi

"$bin" validate -f "$src/examples/v1alpha2" >/dev/null 2>"$tmp/err"
rc=$?
if [ "$rc" != 2 ] || [ "$(grep -c 'was removed in Kubernetes 1.31' "$tmp/err")" != 3 ]; then
  echo "FAIL: v1alpha2 examples (rc=$rc):"; cat "$tmp/err"; fail=1
fi

for f in "$src"/tests/api/testdata/invalid/*.yaml; do
  "$bin" validate -f "$f" >/dev/null 2>"$tmp/err"
  rc=$?
  sed -e 's/^.*: document [0-9]*: //' "$tmp/err" >"$tmp/got"
  sed -n 's/^# want: //p' "$f" >"$tmp/want"
  if [ "$rc" != 2 ] || ! cmp -s "$tmp/got" "$tmp/want"; then
    echo "FAIL: $f (rc=$rc)"; echo "  got:"; cat "$tmp/got"; echo "  want:"; cat "$tmp/want"; fail=1
  fi
done
[ "$fail" = 0 ] && echo "validate CLI: all checks passed"
exit $fail
